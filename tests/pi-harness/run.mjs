#!/usr/bin/env node
// Drives one headless Pi session per a scenario file and prints one JSON report on stdout.
//
//   PI_PACKAGE_DIR=<…/node_modules/@earendil-works/pi-coding-agent> node22 run.mjs SCENARIO.json
//   node22 run.mjs SCENARIO.json --pi <package dir>
//
// Real Pi, nothing mocked but the model and the MCP servers: the faux provider from Pi's own
// `pi-ai` answers with the scenario's scripted responses, and each MCP server is an in-memory
// transport from `pi-mcp/testing` with a small JSON-RPC responder behind it. Everything else (the
// session runtime, the resource loader, the built-in MCP, codemode and tool-search extensions,
// the scenario's extensions, the session file) is the installed Pi package itself.
//
// The scenario format is documented in README.md next to this file.

import { mkdtempSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function fail(message) {
	process.stderr.write(`pi-harness: ${message}\n`);
	process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Arguments and Pi's modules

const argv = process.argv.slice(2);
let scenarioPath;
let piDir = process.env.PI_PACKAGE_DIR;
let viaOverride;
let agentDirOverride;
for (let i = 0; i < argv.length; i++) {
	if (argv[i] === "--pi") piDir = argv[++i];
	else if (argv[i] === "--agent-dir") agentDirOverride = argv[++i];
	else if (argv[i] === "--via") viaOverride = argv[++i];
	else if (scenarioPath === undefined) scenarioPath = argv[i];
	else fail(`unexpected argument: ${argv[i]}`);
}
if (!scenarioPath) fail("usage: run.mjs SCENARIO.json [--pi PI_PACKAGE_DIR] [--via path|package|project-package] [--agent-dir DIR]");
if (!piDir) fail("no Pi package dir: pass --pi DIR or set PI_PACKAGE_DIR (tests/support/install-pi.sh VERSION prints it)");
piDir = resolve(piDir);
if (!existsSync(join(piDir, "package.json"))) fail(`not a package dir (no package.json): ${piDir}`);

let scenario;
try {
	scenario = JSON.parse(readFileSync(scenarioPath, "utf8"));
} catch (error) {
	fail(`cannot read scenario ${scenarioPath}: ${error.message}`);
}
const scenarioDir = dirname(resolve(scenarioPath));

// Pi's sibling packages are imported by absolute path from the installed tree (nested first, as
// npm would nest a version conflict, then hoisted next to pi-coding-agent).
function packageDir(name) {
	for (const candidate of [join(piDir, "node_modules", name), join(piDir, "..", "..", name)]) {
		if (existsSync(join(candidate, "package.json"))) return candidate;
	}
	fail(`package ${name} not found next to ${piDir}`);
}
async function importExport(dir, subpath = ".") {
	const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
	let target = manifest.exports?.[subpath];
	if (target && typeof target === "object") target = target.import ?? target.default;
	if (typeof target !== "string" && subpath === ".") target = manifest.main;
	if (typeof target !== "string") fail(`${manifest.name} has no export ${subpath}`);
	return import(pathToFileURL(join(dir, target)).href);
}

const piManifest = JSON.parse(readFileSync(join(piDir, "package.json"), "utf8"));
const pi = await importExport(piDir);
const ai = await importExport(packageDir("@earendil-works/pi-ai"));
const mcpTesting = await importExport(packageDir("@earendil-works/pi-mcp"), "./testing");

// ---------------------------------------------------------------------------------------------
// A temporary home for this run: agent dir, project cwd, sessions.

const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-harness-")));
// `--agent-dir DIR`: an agent folder prepared before the run (for example by `pi install`),
// whose settings.json the scenario's settings are merged into; otherwise a fresh one.
if (agentDirOverride !== undefined && !existsSync(agentDirOverride)) fail(`no agent dir: ${agentDirOverride}`);
const agentDir = agentDirOverride !== undefined ? realpathSync(agentDirOverride) : join(root, "agent");
const cwd = join(root, "project");
const sessionDir = join(root, "sessions");
for (const dir of [agentDir, cwd, sessionDir]) mkdirSync(dir, { recursive: true });

process.env.PI_OFFLINE = "1";
process.env.PI_CODING_AGENT_DIR = agentDir;
delete process.env.PI_CODING_AGENT_SESSION_DIR;
for (const [key, value] of Object.entries(scenario.env ?? {})) process.env[key] = String(value);

function resolveFromScenario(path) {
	return isAbsolute(path) ? path : resolve(scenarioDir, path);
}

// Scenario extensions: `additionalExtensionPaths` (as `pi -e` or the SDK would) or a settings
// `packages` entry (global or project settings.json), each with an absolute path.
const extensionPaths = [join(here, "tracer.ts")];
const packages = { global: [], project: [] };
for (const ext of scenario.extensions ?? []) {
	const path = resolveFromScenario(typeof ext === "string" ? ext : ext.path);
	const via = viaOverride ?? (typeof ext === "string" ? "path" : (ext.via ?? "path"));
	if (!existsSync(path)) fail(`extension not found: ${path}`);
	if (via === "path") extensionPaths.push(path);
	else if (via === "package") packages.global.push(path);
	else if (via === "project-package") packages.project.push(path);
	else fail(`unknown extension via: ${via} (expected path, package or project-package)`);
}

const settingsFile = join(agentDir, "settings.json");
const priorSettings = agentDirOverride !== undefined && existsSync(settingsFile) ? JSON.parse(readFileSync(settingsFile, "utf8")) : {};
const globalSettings = { ...priorSettings, ...(scenario.settings?.global ?? {}) };
if (priorSettings.packages && scenario.settings?.global?.packages) globalSettings.packages = [...priorSettings.packages, ...scenario.settings.global.packages];
if (packages.global.length) globalSettings.packages = [...(globalSettings.packages ?? []), ...packages.global];
writeFileSync(join(agentDir, "settings.json"), JSON.stringify(globalSettings, null, 2));
const projectSettings = { ...(scenario.settings?.project ?? {}) };
if (packages.project.length) projectSettings.packages = [...(projectSettings.packages ?? []), ...packages.project];
if (Object.keys(projectSettings).length) {
	mkdirSync(join(cwd, ".pi"), { recursive: true });
	writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify(projectSettings, null, 2));
}

// mcp.json files from the scenario's servers: `scope: "project"` servers go to the project file.
const mcpServers = scenario.mcpServers ?? {};
const mcpFiles = { global: {}, project: {} };
for (const [name, server] of Object.entries(mcpServers)) {
	mcpFiles[server.scope === "project" ? "project" : "global"][name] = server.config ?? { command: "in-memory" };
}
const mcpExtra = scenario.mcpJson ?? {};
if (Object.keys(mcpFiles.global).length || mcpExtra.global) {
	writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ ...(mcpExtra.global ?? {}), mcpServers: mcpFiles.global }, null, 2));
}
if (Object.keys(mcpFiles.project).length || mcpExtra.project) {
	mkdirSync(join(cwd, ".pi"), { recursive: true });
	writeFileSync(join(cwd, ".pi", "mcp.json"), JSON.stringify({ ...(mcpExtra.project ?? {}), mcpServers: mcpFiles.project }, null, 2));
}

// Extra files the scenario places in the agent dir or the project, for example another
// extension's own settings: `files: { "agent/<relative path>": JSON or text, "project/…": … }`.
// A step `{ "files": { … } }` writes files the same way between steps (a person editing a
// settings file, say).
const writeFiles = (files) => {
	for (const [target, content] of Object.entries(files ?? {})) {
		const [base, ...rest] = target.split("/");
		const dir = base === "agent" ? agentDir : base === "project" ? cwd : undefined;
		if (!dir || rest.length === 0 || rest.includes("..")) fail(`files: ${target} must be agent/<path> or project/<path>`);
		const path = join(dir, ...rest);
		mkdirSync(dirname(path), { recursive: true });
		writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
	}
};
writeFiles(scenario.files);

// ---------------------------------------------------------------------------------------------
// The report and the tracer's sink

const report = {
	pi: { version: piManifest.version, dir: piDir },
	node: process.version,
	root,
	requests: [],
	toolCalls: [],
	mcpCalls: [],
	events: [],
	steps: [],
	errors: [],
	extensionErrors: [],
	loadErrors: [],
	loadedExtensions: [],
	notifications: [],
	registryReads: [],
	workingRow: [],
	statuses: [],
	commandsDuringRuns: [],
};
globalThis.__piHarness = { events: report.events };
let currentStep = -1;

// A hung session (a prompt that never settles, a server that never answers) must not hang the
// test that runs the harness: after PI_HARNESS_TIMEOUT_MS (default 60 s) print what there is and
// exit with status 3.
const watchdogMs = Number(process.env.PI_HARNESS_TIMEOUT_MS ?? 60000);
setTimeout(() => {
	report.errors.push({ step: currentStep, error: `timed out after ${watchdogMs} ms` });
	process.stdout.write(`${JSON.stringify(report, null, 2)}\n`, () => process.exit(3));
}, watchdogMs).unref();

// ---------------------------------------------------------------------------------------------
// In-memory MCP servers: a JSON-RPC responder per configured server.

function serveMcp(name, transport) {
	const spec = mcpServers[name] ?? {};
	const tools = spec.tools ?? [];
	const resources = spec.resources ?? [];
	const reply = (id, result) => transport.send({ jsonrpc: "2.0", id, result }).catch(() => {});
	const error = (id, code, message) => transport.send({ jsonrpc: "2.0", id, error: { code, message } }).catch(() => {});
	transport.onMessage((message) => {
		if (message.id === undefined || typeof message.method !== "string") return; // notifications, responses
		const params = message.params ?? {};
		switch (message.method) {
			case "initialize":
				return reply(message.id, {
					protocolVersion: params.protocolVersion,
					capabilities: { tools: {}, ...(resources.length ? { resources: {} } : {}) },
					serverInfo: { name: `harness-${name}`, version: "1.0.0" },
					...(spec.instructions ? { instructions: spec.instructions } : {}),
				});
			case "ping":
				return reply(message.id, {});
			case "tools/list":
				return reply(message.id, {
					tools: tools.map((tool) => ({
						name: tool.name,
						description: tool.description ?? `${tool.name} from ${name}`,
						inputSchema: tool.inputSchema ?? { type: "object", properties: {}, additionalProperties: true },
					})),
				});
			case "tools/call": {
				const tool = tools.find((t) => t.name === params.name);
				report.mcpCalls.push({ step: currentStep, server: name, tool: params.name, arguments: params.arguments ?? null });
				if (!tool) return error(message.id, -32602, `unknown tool ${params.name}`);
				return reply(message.id, {
					content: [{ type: "text", text: tool.result ?? `${name}/${tool.name} ran` }],
					isError: tool.isError === true,
				});
			}
			case "resources/list":
				return reply(message.id, {
					resources: resources.map((r) => ({ uri: r.uri, name: r.name ?? r.uri, mimeType: "text/plain" })),
				});
			case "resources/templates/list":
				return reply(message.id, { resourceTemplates: [] });
			case "resources/read": {
				const resource = resources.find((r) => r.uri === params.uri);
				report.mcpCalls.push({ step: currentStep, server: name, resource: params.uri });
				if (!resource) return error(message.id, -32002, `resource not found: ${params.uri}`);
				return reply(message.id, { contents: [{ uri: resource.uri, mimeType: "text/plain", text: resource.text ?? "" }] });
			}
			default:
				return error(message.id, -32601, `method not found: ${message.method}`);
		}
	});
}

function createTransport(entry) {
	const { client, server } = mcpTesting.createInMemoryTransportPair();
	serveMcp(entry.name, server);
	server.start();
	return client;
}

// ---------------------------------------------------------------------------------------------
// The faux model: every scripted response is wrapped so the harness records what Pi handed over.

const faux = ai.fauxProvider();

function textOf(content) {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((b) => (b && b.type === "text" ? b.text : "")).join("");
}

let requestActions = new Map();
const SPARE_RESPONSES = 8;
function scripted(response, indexInStep, unscripted = false) {
	// `delayMs`: a slow model, answering only after that long (it ignores the abort signal, as a
	// hung provider would).
	if (Number(response.delayMs) > 0) {
		const answer = scripted({ ...response, delayMs: 0 }, indexInStep, unscripted);
		return async (context, ...rest) => {
			await new Promise((done) => setTimeout(done, Number(response.delayMs)));
			return answer(context, ...rest);
		};
	}
	return (context) => {
		const tools = ai.getCurrentTools(context.messages).map((tool) => tool.name);
		const userTexts = context.messages
			.filter((m) => m.role === "user")
			.map((m) => textOf(m.content))
			.map((t) => (t.length > 300 ? `${t.slice(0, 300)}…` : t));
		report.requests.push({ step: currentStep, index: report.requests.length, tools, userTexts, ...(unscripted ? { unscripted } : {}) });
		const actions = requestActions.get(indexInStep) ?? [];
		// A command during the run (the `/decisions` dialog, say) is carried out before this
		// response is returned, so what it changes holds for the response's tool calls.
		const commands = actions.filter((action) => action.command !== undefined);
		for (const action of actions) if (action.command === undefined) runtimeAction(action);
		if (commands.length > 0) {
			return (async () => {
				for (const action of commands) await runCommandDuringRun(action);
				return answerWith(response);
			})();
		}
		return answerWith(response);
	};
}

function answerWith(response) {
	if (response.toolCalls) {
		const blocks = [];
		if (response.text) blocks.push(ai.fauxText(response.text));
		for (const call of response.toolCalls) {
			blocks.push(ai.fauxToolCall(call.name, call.arguments ?? {}, call.id ? { id: call.id } : undefined));
		}
		return ai.fauxAssistantMessage(blocks, { stopReason: "toolUse" });
	}
	return ai.fauxAssistantMessage(response.text ?? "done");
}

// An extension command sent while a run is active (Pi runs extension commands at once, even
// while streaming): its custom component gets `keys` as a `command` step's does.
async function runCommandDuringRun(action) {
	const outcome = { step: currentStep, command: action.command, during: true };
	currentCommand = Object.assign(outcome, { keys: action.keys ?? [], width: action.width ?? 80, rows: action.rows ?? 40 });
	try {
		await runtime.session.prompt(action.command);
	} catch (error) {
		report.errors.push({ step: currentStep, error: String(error?.message ?? error) });
	} finally {
		currentCommand = undefined;
	}
	delete outcome.keys;
	report.commandsDuringRuns.push(outcome);
}

// Steering and follow-up sent by the host while a run is active (extensions send their own).
function runtimeAction(action) {
	const session = runtime.session;
	const started = action.steer !== undefined ? session.steer(action.steer) : session.followUp(action.followUp);
	Promise.resolve(started).catch((error) => report.errors.push({ step: currentStep, error: String(error?.message ?? error) }));
}

// ---------------------------------------------------------------------------------------------
// The runtime: one factory builds every session (startup, fork, resume) the same way.

const builtins = [
	{ name: "mcp", factory: pi.createMcpExtension({ createTransport }), builtin: true, replaceable: true },
	{ name: "codemode", factory: pi.createCodemodeExtension(), builtin: true, replaceable: true },
	{ name: "tool-search", factory: pi.createToolSearchExtension(), builtin: true, replaceable: true },
];
const projectTrusted = scenario.projectTrusted ?? true;

const createRuntime = async ({ cwd: runtimeCwd, agentDir: runtimeAgentDir, sessionManager, sessionStartEvent }) => {
	const modelRuntime = await pi.ModelRuntime.create({
		authPath: join(runtimeAgentDir, "auth.json"),
		modelsPath: null,
		refreshOnCreate: false,
	});
	modelRuntime.registerNativeProvider(faux.provider);
	await modelRuntime.setRuntimeApiKey(faux.provider.id ?? "faux", "harness-key");
	const settingsManager = pi.SettingsManager.create(runtimeCwd, runtimeAgentDir, { projectTrusted });
	const services = await pi.createAgentSessionServices({
		cwd: runtimeCwd,
		agentDir: runtimeAgentDir,
		settingsManager,
		modelRuntime,
		resourceLoaderOptions: { additionalExtensionPaths: extensionPaths, extensionFactories: builtins },
	});
	const created = await pi.createAgentSessionFromServices({
		services,
		sessionManager,
		sessionStartEvent,
		model: faux.getModel(),
	});
	return { ...created, services, diagnostics: services.diagnostics };
};

// A UI context for `"ui": "tui"` scenarios: notifications are recorded, and a custom component
// (`ctx.ui.custom`) is driven by the current `command` step's `keys` (raw terminal input, or
// `{"wait": ms}`), recording what it renders after each. Everything else does nothing.
let currentCommand;
// Pi's working row, as its interactive mode draws it (interactive-mode.js: the indicator is
// created at turn_start, or by setWorkingVisible(true) while a run is active, and removed at
// agent_end; setWorkingMessage changes the text of a shown indicator only, and is otherwise kept
// for the next one). `workingRow[]` records each text the row shows, "" when it is removed.
const working = { visible: true, shown: false, message: undefined };
function showRow() {
	const text = working.shown ? (working.message ?? "Working...") : "";
	const last = report.workingRow.at(-1);
	if (!last || last.text !== text) report.workingRow.push({ step: currentStep, text, at: Date.now() });
}
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const scriptedUI = {
	select: async () => undefined,
	confirm: async () => false,
	input: async () => undefined,
	editor: async () => undefined,
	notify: (message, type) => report.notifications.push({ step: currentStep, type: type ?? null, message: String(message) }),
	onTerminalInput: () => () => {},
	setStatus: (key, text) => report.statuses.push({ step: currentStep, key: String(key), text: text === undefined ? null : String(text) }),
	setWorkingMessage: (message) => {
		working.message = message;
		showRow();
	},
	setWorkingVisible: (visible) => {
		working.visible = visible;
		// As Pi's interactive mode: shown at once only while a run is active.
		working.shown = visible && runtime?.session?.isStreaming === true;
		showRow();
	},
	setWorkingIndicator: () => {},
	setHiddenThinkingLabel: () => {},
	setWidget: () => {},
	setFooter: () => {},
	setHeader: () => {},
	setTitle: () => {},
	pasteToEditor: () => {},
	setEditorText: () => {},
	getEditorText: () => "",
	addAutocompleteProvider: () => {},
	setEditorComponent: () => {},
	getEditorComponent: () => undefined,
	theme: {},
	getAllThemes: () => [],
	getTheme: () => undefined,
	setTheme: () => ({ success: false }),
	getToolsExpanded: () => false,
	setToolsExpanded: () => {},
	custom: (factory) =>
		new Promise((resolveCustom, rejectCustom) => {
			const outcome = currentCommand;
			const width = outcome?.width ?? 80;
			const screens = [];
			let closed = false;
			let renders = 0;
			const tui = { requestRender: () => renders++, terminal: { rows: outcome?.rows ?? 40, columns: width } };
			const done = (result) => {
				closed = true;
				resolveCustom(result);
			};
			(async () => {
				const component = await factory(tui, {}, {}, done);
				for (const method of ["render", "handleInput", "invalidate"]) {
					if (typeof component?.[method] !== "function") throw new Error(`the component has no ${method}()`);
				}
				const draw = (key) => screens.push({ key, lines: closed ? null : [...component.render(width)] });
				draw(null);
				for (const key of outcome?.keys ?? []) {
					if (closed) break;
					if (typeof key === "object" && key !== null) {
						await sleep(Number(key.wait ?? 0));
						draw(key);
						continue;
					}
					component.handleInput(key);
					draw(key);
				}
				if (outcome) {
					outcome.screens = screens;
					outcome.requestedRenders = renders;
					outcome.closedByComponent = closed;
				}
				if (!closed) {
					component.dispose?.();
					resolveCustom(undefined);
				}
			})().catch(rejectCustom);
		}),
};

// The names Pi's interactive mode lists its extensions under at startup ("[Extensions]"), from
// its own code (`InteractiveMode.prototype.getCompactExtensionLabels`, which reads only the
// extensions' paths and sourceInfo), or null where this Pi has no such method.
function startupLabels(extensions) {
	const label = pi.InteractiveMode?.prototype?.getCompactExtensionLabels;
	if (typeof label !== "function") return null;
	try {
		return label.call(Object.create(pi.InteractiveMode.prototype), extensions);
	} catch (error) {
		return [`(labels failed: ${String(error).slice(0, 200)})`];
	}
}

let unsubscribe;
const pendingStarts = new Map();
// Extensions that failed to load (syntax errors, a throwing factory) do not stop Pi; they are
// listed once per (re)load so a scenario cannot pass without its extension unnoticed.
function noteLoadProblems(session) {
	const loaded = session.resourceLoader?.getExtensions?.();
	for (const problem of loaded?.errors ?? []) {
		report.loadErrors.push({ step: currentStep, path: problem.path, error: String(problem.error).slice(0, 300) });
	}
	for (const problem of loaded?.warnings ?? []) {
		report.loadErrors.push({ step: currentStep, path: problem.path, warning: String(problem.warning).slice(0, 300) });
	}
	const listed = (loaded?.extensions ?? []).filter((e) => !e.hidden).map((e) => ({ path: e.path, sourceInfo: e.sourceInfo }));
	report.loadedExtensions.push({ step: currentStep, paths: (loaded?.extensions ?? []).map((e) => e.path), labels: startupLabels(listed) });
}

async function bind(session) {
	noteLoadProblems(session);
	unsubscribe?.();
	// Every getAllTools() of every extension reaches the session's own method; the tracer's own
	// reads are not counted.
	const getAllTools = session.getAllTools;
	session.getAllTools = function (...args) {
		if (!globalThis.__piHarness.tracing) report.registryReads.push({ step: currentStep });
		return getAllTools.apply(this, args);
	};
	unsubscribe = session.subscribe((event) => {
		if (event.type === "turn_start" && working.visible) {
			working.shown = true;
			showRow();
		} else if (event.type === "agent_end") {
			working.shown = false;
			showRow();
		}
		if (event.type === "tool_execution_start") {
			pendingStarts.set(event.toolCallId, event.args);
		} else if (event.type === "tool_execution_end") {
			report.toolCalls.push({
				step: currentStep,
				id: event.toolCallId,
				name: event.toolName,
				arguments: pendingStarts.get(event.toolCallId) ?? null,
				result: textOf(event.result?.content),
				isError: event.isError === true,
			});
		}
	});
	// Non-empty bindings, as the CLI's modes pass: with `{}` Pi skips `session_start` on reload.
	// With `"ui": "tui"` the scripted UI context below stands in for Pi's interactive mode.
	await session.bindExtensions({
		...(scenario.ui === "tui" ? { uiContext: scriptedUI, mode: "tui" } : {}),
		onError: (error) => {
			report.extensionErrors.push({
				step: currentStep,
				extensionPath: error?.extensionPath ?? null,
				event: error?.event ?? null,
				error: String(error?.error ?? error).slice(0, 300),
			});
		},
	});
}

const runtime = await pi.createAgentSessionRuntime(createRuntime, {
	cwd,
	agentDir,
	sessionManager: pi.SessionManager.create(cwd, sessionDir),
});
runtime.setRebindSession(bind);
for (const diagnostic of runtime.diagnostics ?? []) {
	report.errors.push({ step: -1, diagnostic: diagnostic.type, message: diagnostic.message });
}
await bind(runtime.session);

// ---------------------------------------------------------------------------------------------
// Steps

function entries(sessionManager) {
	return sessionManager.getEntries();
}
function findEntry(target) {
	const sm = runtime.session.sessionManager;
	const all = entries(sm);
	if (target.userMessage !== undefined) {
		const users = all.filter((e) => e.type === "message" && e.message.role === "user");
		const entry = users.at(target.userMessage);
		if (!entry) throw new Error(`no user message #${target.userMessage}`);
		return entry.id;
	}
	if (target.customType !== undefined) {
		const found = all.filter((e) => e.type === "custom" && e.customType === target.customType).at(target.nth ?? -1);
		if (!found) throw new Error(`no custom entry ${target.customType}`);
		return found.id;
	}
	if (target.assistantMessage !== undefined) {
		const found = all.filter((e) => e.type === "message" && e.message.role === "assistant").at(target.assistantMessage);
		if (!found) throw new Error(`no assistant message #${target.assistantMessage}`);
		return found.id;
	}
	throw new Error(`unknown entry target ${JSON.stringify(target)}`);
}

const sessionFilesSeen = [];
function noteSessionFile() {
	const file = runtime.session.sessionFile;
	if (file && !sessionFilesSeen.includes(file)) sessionFilesSeen.push(file);
}

const steps = scenario.steps ?? [];
for (let i = 0; i < steps.length; i++) {
	currentStep = i;
	const step = steps[i];
	const outcome = { step: i, action: Object.keys(step).find((k) => ["prompt", "command", "tree", "fork", "resume", "reload", "newSession", "wait", "files"].includes(k)) };
	noteSessionFile();
	try {
		if (step.prompt !== undefined) {
			requestActions = new Map();
			for (const action of step.during ?? []) {
				const list = requestActions.get(action.atRequest ?? 0) ?? [];
				list.push(action);
				requestActions.set(action.atRequest ?? 0, list);
			}
			const script = (step.responses ?? [{ text: "done" }]).map((r, n) => scripted(r, n));
			// Requests beyond the script (a follow-up run, say) are still recorded, marked
			// `unscripted`, and answered with plain text instead of the faux provider's error.
			const spare = Array.from({ length: SPARE_RESPONSES }, (_, n) => scripted({ text: "unscripted" }, script.length + n, true));
			faux.setResponses([...script, ...spare]);
			// `refuseEntries: N`: the session manager throws (as on a full disk) for the next N
			// custom entries appended during this step, and they are not written.
			const sm = runtime.session.sessionManager;
			const appendCustomEntry = sm.appendCustomEntry;
			let refuse = Number(step.refuseEntries ?? 0);
			if (refuse > 0) {
				sm.appendCustomEntry = function (...args) {
					if (refuse > 0) {
						refuse--;
						outcome.refusedEntries = (outcome.refusedEntries ?? 0) + 1;
						throw new Error("ENOSPC: no space left on device (harness)");
					}
					return appendCustomEntry.apply(this, args);
				};
			}
			try {
				await runtime.session.prompt(step.prompt);
				await runtime.session.waitForIdle();
			} finally {
				if (sm.appendCustomEntry !== appendCustomEntry) sm.appendCustomEntry = appendCustomEntry;
			}
			const pending = faux.getPendingResponseCount();
			outcome.unusedResponses = Math.max(0, pending - SPARE_RESPONSES);
			outcome.unscriptedRequests = Math.max(0, SPARE_RESPONSES - pending);
		} else if (step.command !== undefined) {
			// An extension command while idle (`/decisions …`). What it writes to stderr (where
			// print and JSON modes show a command's text) is recorded, not shown.
			currentCommand = Object.assign(outcome, { keys: step.keys ?? [], width: step.width ?? 80, rows: step.rows ?? 40 });
			const chunks = [];
			const write = process.stderr.write;
			process.stderr.write = (chunk, ...rest) => {
				chunks.push(String(chunk));
				const callback = rest.find((r) => typeof r === "function");
				if (callback) callback();
				return true;
			};
			try {
				await runtime.session.prompt(step.command);
			} finally {
				process.stderr.write = write;
				currentCommand = undefined;
			}
			outcome.stderr = chunks.join("");
			delete outcome.keys;
		} else if (step.tree !== undefined) {
			const target = findEntry(step.tree);
			const result = await runtime.session.navigateTree(target, { summarize: false });
			outcome.cancelled = result.cancelled;
			outcome.leafId = runtime.session.sessionManager.getLeafId();
		} else if (step.fork !== undefined) {
			const target = findEntry(step.fork);
			const result = await runtime.fork(target, { position: step.fork.position ?? "before" });
			outcome.cancelled = result.cancelled;
		} else if (step.resume !== undefined) {
			const index = typeof step.resume === "number" ? step.resume : 0;
			const file = sessionFilesSeen.at(index);
			if (!file) throw new Error(`no session file #${index} to resume`);
			const result = await runtime.switchSession(file);
			outcome.cancelled = result.cancelled;
		} else if (step.newSession !== undefined) {
			const result = await runtime.newSession();
			outcome.cancelled = result.cancelled;
		} else if (step.files !== undefined) {
			writeFiles(step.files);
		} else if (step.wait !== undefined) {
			// Milliseconds of idle time, e.g. to let MCP servers finish connecting before a prompt.
			await new Promise((done) => setTimeout(done, Number(step.wait)));
		} else if (step.reload !== undefined) {
			await runtime.session.reload();
			noteLoadProblems(runtime.session);
		} else {
			throw new Error(`unknown step: ${JSON.stringify(step)}`);
		}
	} catch (error) {
		outcome.error = String(error?.message ?? error);
	}
	outcome.sessionFile = runtime.session.sessionFile ?? null;
	noteSessionFile();
	report.steps.push(outcome);
}
currentStep = steps.length;

// ---------------------------------------------------------------------------------------------
// The session files Pi wrote

function readSessionFile(file) {
	if (!file || !existsSync(file)) return { file, exists: false };
	const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "");
	const parsed = lines.map((l) => JSON.parse(l));
	const header = parsed[0];
	return {
		file,
		exists: true,
		header: { type: header.type, version: header.version, id: header.id, parentSession: header.parentSession ?? null },
		entries: parsed.slice(1).map((e) => {
			const out = { type: e.type, id: e.id, parentId: e.parentId };
			if (e.type === "custom") Object.assign(out, { customType: e.customType, data: e.data });
			if (e.type === "custom_message") Object.assign(out, { customType: e.customType, display: e.display, text: textOf(e.content) });
			if (e.type === "message") out.role = e.message.role;
			if (e.type === "message" && e.message.role === "system") {
				out.toolsAdded = (e.message.toolsAdded ?? []).map((t) => t.name);
				out.toolsRemoved = (e.message.toolsRemoved ?? []).map((t) => t.name);
			}
			return out;
		}),
	};
}

noteSessionFile();
report.sessionFile = runtime.session.sessionFile ?? null;
report.sessions = sessionFilesSeen.map(readSessionFile);
const current = readSessionFile(report.sessionFile);
report.customEntries = (current.entries ?? []).filter((e) => e.type === "custom");
report.customMessages = (current.entries ?? []).filter((e) => e.type === "custom_message");
report.sessionDirFiles = existsSync(sessionDir) ? readdirSync(sessionDir).sort() : [];

try {
	await runtime.dispose();
} catch (error) {
	report.errors.push({ step: currentStep, error: `dispose: ${error?.message ?? error}` });
}
// MCP connections and timers may keep the loop alive after dispose, so exit explicitly, but only
// once the report is flushed: writes to a pipe are asynchronous and an early exit truncates them.
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`, () => process.exit(0));
