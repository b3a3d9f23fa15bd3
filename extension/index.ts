// pi-context-decisions: the Pi extension. A thin host for the Rust core: it forwards Pi's events
// to the addon and carries out the effects the addon returns. It makes no policy decision and
// holds no user-visible sentence of its own, with one exception: the reason it gives when the
// addon itself cannot be loaded (there is then nothing to ask), in `ADDON_MISSING`.

import { createRequire } from "node:module";
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelChoice } from "./dialog.ts";

const CUSTOM_TYPE = "context-decisions-tools";
const NOTICE_TYPE = "context-decisions-notice";
// The only sentences held here: what is said when the addon (which holds every other one) could
// not be loaded, and what to run for this install form (see `addonMissing`).
const ADDON_MISSING = {
	what: "pi-context-decisions could not load its native addon, so calls to MCP and extension tools are blocked while tool filtering is on, or while its settings file (pi-context-decisions/settings.json in Pi's agent folder) cannot be read (only tools the project allowlist names then pass).",
	checkout: "This is a path or git install of a clone: build the addon there with bash bindings/node/build.sh (Rust needed), then restart Pi.",
	npmMissing: "The prebuilt addon package for this platform, PACKAGE, is not installed: reinstall with pi install npm:pi-context-decisions (npm must be allowed to install its optional dependencies), then restart Pi.",
	npmBroken: "The prebuilt addon package for this platform, PACKAGE, is installed but could not be loaded: reinstall with pi install npm:pi-context-decisions, then restart Pi.",
	npmUnknown: "Reinstall with pi install npm:pi-context-decisions, which brings the prebuilt addon for this platform, then restart Pi.",
	unsupported: "No prebuilt addon is built for this platform (PLATFORM): install pi-context-decisions from a clone and build the addon there with bash bindings/node/build.sh (Rust needed).",
	off: "Or fix that settings file and turn filtering off in it.",
};

type Addon = {
	PiSession: { start(eventJson: string, entriesJson?: string): Session };
	addonVersion(): string;
	commandDescription(): string;
	decisionsCompletions(prefix: string): string;
	checkFailedReason(): string;
	notRecordedReason(): string;
	decidingLabel(): string;
};
type Session = {
	takeWarnings(): string[];
	filteringOn(): boolean;
	needsInventory(): boolean;
	boundary(kindJson: string, toolsJson: string | undefined, active: string[]): string;
	settingsChanged(): void;
	branchMoved(entriesJson?: string): void;
	appendFailed(entriesJson?: string): string;
	toolCall(tool: string, serverKind: number, server?: string): CallResult;
	toolCallWith(tool: string, serverKind: number, server: string | undefined, toolsJson?: string): CallResult;
	list(what: string, toolsJson?: string): string;
	readsRegistry(): boolean;
	footer(): string | null | undefined;
	footerWith(toolsJson?: string): string | null | undefined;
	usage(what: string, given?: string): string;
	exportTools(toolsJson?: string, file?: string): string;
	decided(job: number, answersJson: string, active: string[]): string;
	decisionModel(): string[];
	// A job is answered on an object of its own: napi-rs keeps what a method borrowed until the
	// task it returns settles, so a session answering it would refuse every call meanwhile.
	httpJob(requests: string[]): { run(): Promise<string> };
	semanticJob(job: number): { run(): Promise<string> };
	decisionTest(): string;
	testDecided(job: number, answersJson: string): string;
	status(): string;
	tabOpen(toolsJson?: string, entriesJson?: string): void;
	tabRender(width: number, rows?: number): string[];
	tabView(width: number, rows?: number): string;
	tabInput(data: string): string;
	tabAction(name: string): string;
	tabSubmit(text: string): void;
	tabDismiss(): void;
	tabTools(toolsJson: string): void;
	tabRanked(job: number, answersJson: string): void;
	tabClose(): void;
};
type CallResult = { block?: string; effects?: string; refresh: boolean; pending?: string };
type Job = { type: "decide"; job: number; semantic?: boolean; instructions: string; requests: string[] };
type Effect =
	| { type: "setActiveTools"; names: string[] }
	| { type: "appendEntry"; customType: string; data: unknown }
	| { type: "notice"; text: string }
	| { type: "warn"; text: string }
	| Job;

// Where the addon is looked for, first found and loadable wins: the file named by
// PI_CONTEXT_DECISIONS_ADDON; a build from source next to this file (the install script's copy)
// or in the repository's bindings/node (`bash bindings/node/build.sh`), so a developer's own
// build wins over a prebuilt one; last, the prebuilt addon package for this platform that npm
// installed as an optional dependency (`platform.cjs` names it; it exports the `.node` file).
function loadAddon(): Addon | undefined {
	const here = dirname(fileURLToPath(import.meta.url));
	const require = createRequire(import.meta.url);
	const candidates = [
		process.env.PI_CONTEXT_DECISIONS_ADDON,
		join(here, "pcd_node.node"),
		join(here, "..", "bindings", "node", "pcd_node.node"),
	].filter((p): p is string => !!p && existsSync(p));
	const prebuilt = prebuiltAddon(require, here);
	if (prebuilt) candidates.push(prebuilt);
	for (const path of candidates) {
		try {
			return require(path) as Addon;
		} catch {
			// Try the next candidate; with none left the extension fails closed.
		}
	}
	return undefined;
}

// The prebuilt addon package for this platform (`platform.cjs` names it: undefined on a platform
// none is built for, or where that file is not beside this one), and the path of its `.node` file
// when npm installed it.
function prebuiltPackage(require: ReturnType<typeof createRequire>, here: string): { name?: string; path?: string; known: boolean } {
	let name: string | undefined;
	try {
		const { platformPackage } = require(join(here, "platform.cjs")) as {
			platformPackage(): string | undefined;
		};
		name = platformPackage();
	} catch {
		return { known: false };
	}
	if (!name) return { known: true };
	try {
		return { name, path: require.resolve(name), known: true };
	} catch {
		// Not installed: only a build from source can serve.
		return { name, known: true };
	}
}

// The path of the installed prebuilt addon package's `.node` file for this platform, if any.
function prebuiltAddon(require: ReturnType<typeof createRequire>, here: string): string | undefined {
	return prebuiltPackage(require, here).path;
}

// What is said when the addon could not be loaded: what that blocks, and exactly what to run for
// the form this extension was installed in (a clone: the build; npm: the reinstall, naming the
// platform package that is missing or broken; a platform without one: a build from a clone).
function addonMissing(): string {
	const parts = [ADDON_MISSING.what];
	if (checkoutDir()) {
		parts.push(ADDON_MISSING.checkout);
	} else {
		const here = dirname(fileURLToPath(import.meta.url));
		const prebuilt = prebuiltPackage(createRequire(import.meta.url), here);
		if (!prebuilt.known) parts.push(ADDON_MISSING.npmUnknown);
		else if (!prebuilt.name) parts.push(ADDON_MISSING.unsupported.replace("PLATFORM", `${process.platform}-${process.arch}`));
		else parts.push((prebuilt.path ? ADDON_MISSING.npmBroken : ADDON_MISSING.npmMissing).replace("PACKAGE", prebuilt.name));
	}
	parts.push(ADDON_MISSING.off);
	return parts.join(" ");
}

// The checkout this extension was loaded from (a path or git install of a clone: this file is its
// extension/index.ts, beside its Cargo.toml), whose .cache holds the model `cargo xtask
// fetch-model` installed; undefined for an npm install. The addon checks the files there too.
function checkoutDir(): string | undefined {
	const root = join(dirname(fileURLToPath(import.meta.url)), "..");
	return existsSync(join(root, "Cargo.toml")) && existsSync(join(root, "bindings", "node")) ? resolve(root) : undefined;
}

// The folder of the semantic model's npm package (all-MiniLM-L6-v2's pinned files), which npm
// installs as an optional dependency; undefined when it is not installed. The addon checks every
// file in it against its pin before using it, and scores lexically otherwise.
function modelPackageDir(): string | undefined {
	try {
		const require = createRequire(import.meta.url);
		return dirname(require.resolve("pi-context-decisions-model-all-minilm-l6-v2/package.json"));
	} catch {
		return undefined;
	}
}

// The settings reader's bound (config-reader's MAX_SETTINGS_FILE_BYTES, 64 KiB).
const MAX_SETTINGS_FILE_BYTES = 64 * 1024;

// Reads a regular file of at most `limit` bytes, as the Rust readers do: opened non-blocking (a
// FIFO never makes Pi wait for a writer), checked on the opened descriptor, read one byte past the
// bound at most. Throws for anything else (a folder, a FIFO, a device, a larger file).
function readBounded(path: string, limit: number): string {
	const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW);
	try {
		const stat = fstatSync(fd);
		if (!stat.isFile() || stat.size > limit) throw Object.assign(new Error("EBOUNDED"), { code: "EBOUNDED" });
		const buffer = Buffer.alloc(limit + 1);
		let length = 0;
		for (;;) {
			const n = readSync(fd, buffer, length, buffer.length - length, null);
			if (n === 0) break;
			length += n;
			if (length > limit) throw Object.assign(new Error("EBOUNDED"), { code: "EBOUNDED" });
		}
		return buffer.toString("utf8", 0, length);
	} finally {
		closeSync(fd);
	}
}

// Degraded mode, only when the addon cannot be loaded: nothing can be decided and no ledger can be
// folded, so external calls are blocked while the switch may be on. The switch is read here with
// the least logic that can fail closed: a missing file means the default (off); an unreadable one
// (not a regular file, larger than the bound, not JSON) is "unknown", as the addon's rule has it:
// then calls to external tools that no allowlist names are blocked (the global lists are in that
// unreadable file, so only the project list can name one), nothing is written and the active set
// is left as it is. Without the addon a branch's ledger cannot be enforced, so it is not granted
// either (fail closed).
function switchState(): "off" | "on" | "unknown" {
	const env = process.env.PI_CODING_AGENT_DIR;
	const home = homedir();
	const agentDir = !env ? join(home, ".pi", "agent") : env === "~" ? home : env.startsWith("~/") ? join(home, env.slice(2)) : env;
	try {
		const settings = JSON.parse(readBounded(join(agentDir, "pi-context-decisions", "settings.json"), MAX_SETTINGS_FILE_BYTES));
		return settings?.tools?.enabled === true ? "on" : "off";
	} catch (error: any) {
		return error?.code === "ENOENT" ? "off" : "unknown";
	}
}

// The tool names the project allowlist pins (`alwaysAllowedTools` only: the file's
// `alwaysAllowed` is another list, kept for older readers, and names no tool); a project entry
// pins only a project-scope tool. None when the file is absent or cannot be read.
function projectPins(cwd: unknown, tool: any): boolean {
	if (typeof cwd !== "string" || tool?.sourceInfo?.scope !== "project") return false;
	try {
		const file = JSON.parse(readBounded(join(cwd, ".pi", "pi-context-decisions.json"), MAX_SETTINGS_FILE_BYTES));
		return Array.isArray(file?.alwaysAllowedTools) && file.alwaysAllowedTools.includes(tool.name);
	} catch {
		return false;
	}
}

// Built-in provenance, as Pi assigns it (never the tool's name), that may run without the addon:
// not the built-in MCP server tools, and not the MCP resource tools either (they are routed by
// the server they name, which cannot be checked without the addon: blocked while filtering is on).
function isInternal(tool: any): boolean {
	const info = tool?.sourceInfo;
	if (info?.source !== "builtin" || typeof info?.path !== "string" || !info.path.startsWith("builtin:")) return false;
	if (info.path === "builtin:mcp") return false;
	return !(typeof tool?.namespace?.name === "string" && tool.namespace.name.startsWith("mcp__"));
}

function serverArg(input: any): [number, string | undefined] {
	const server = input?.server;
	if (server === undefined || server === null) return [0, undefined];
	if (typeof server === "string") return [1, server];
	return [2, undefined];
}

export default function piContextDecisions(pi: any) {
	const addon = loadAddon();
	let session: Session | undefined;
	let warnedMissing = false;
	// A reconcile after a refused entry is running (a second refusal does not start another).
	let recovering = false;
	// How many batches had an entry refused so far (a call compares it before and after).
	let refusals = 0;

	const notify = (ctx: any, text: string) => {
		try {
			if (ctx?.ui?.notify) ctx.ui.notify(text, "warning");
		} catch {
			// A warning that cannot be shown changes nothing.
		}
	};

	const readTools = (): string | undefined => {
		try {
			return JSON.stringify(pi.getAllTools());
		} catch {
			return undefined;
		}
	};

	// Pi's footer status: the addon's words, or none (cleared) while filtering is off.
	const STATUS_KEY = "context-decisions";
	const showFooter = (ctx: any) => {
		try {
			ctx?.ui?.setStatus?.(STATUS_KEY, session?.footer() ?? undefined);
		} catch {
			// No footer to show it in.
		}
	};

	// The footer after reading Pi's registry again, so its count follows tools registered or
	// removed since the last round (a server that connected late, an extension reloaded). Off
	// means off: the registry is read only while filtering is on.
	const refreshFooter = (ctx: any) => {
		try {
			if (!session) return;
			const tools = session.filteringOn() ? readTools() : undefined;
			ctx?.ui?.setStatus?.(STATUS_KEY, session.footerWith(tools) ?? undefined);
		} catch {
			// No footer to show it in.
		}
	};

	// Off means off: the lists and the dialog read Pi's registry only while filtering is on.
	const toolsForCommand = (): string | undefined => (session?.readsRegistry() ? readTools() : undefined);

	const readBranch = (ctx: any): string | undefined => {
		try {
			return JSON.stringify(ctx.sessionManager.getBranch());
		} catch {
			return undefined;
		}
	};

	const activeTools = (): string[] => {
		try {
			return pi.getActiveTools();
		} catch {
			return [];
		}
	};

	// Carries out the addon's effects in order; returns the notice text, if any, and the decision
	// jobs to answer.
	const apply = (effectsJson: string | undefined, ctx: any): { notice?: string; jobs: Job[] } => {
		const jobs: Job[] = [];
		if (!effectsJson) return { jobs };
		let notice: string | undefined;
		// Once Pi refuses an entry, the rest of the batch (its other entries and the active set
		// that assumed them) is skipped, and the addon refolds from what the branch really has.
		let appendFailed = false;
		for (const effect of JSON.parse(effectsJson) as Effect[]) {
			switch (effect.type) {
				case "setActiveTools":
					if (!appendFailed) pi.setActiveTools(effect.names);
					break;
				case "appendEntry":
					if (appendFailed) break;
					try {
						pi.appendEntry(effect.customType, effect.data);
					} catch {
						appendFailed = true;
					}
					break;
				case "notice":
					notice = effect.text;
					break;
				case "warn":
					notify(ctx, effect.text);
					break;
				case "decide":
					jobs.push(effect);
					break;
			}
		}
		if (appendFailed) refusals++;
		if (appendFailed && session) {
			// The refused round's notice is replaced by one that says what is available now.
			notice = apply(session.appendFailed(readBranch(ctx)), ctx).notice;
			if (!recovering) {
				recovering = true;
				void boundary({ type: "reconcile" }, ctx).finally(() => {
					recovering = false;
				});
			}
		}
		return { notice, jobs };
	};

	// One request to the decision model the settings name: HTTP through the addon (off the event
	// loop), or one of Pi's own models through its model registry. Both get the whole job's
	// deadline (decision.timeoutMs): a model that has not answered by then did not answer (a
	// failed round, where failMode applies); only the person's cancel (ctx.signal) is a
	// cancellation.
	const answer = async (job: Job, ctx: any): Promise<object[]> => {
		const [provider, model, timeoutMs] = session!.decisionModel();
		if (provider === "http") return JSON.parse(await session!.httpJob(job.requests).run());
		const slash = model.indexOf("/");
		const found = provider === "pi" && slash > 0 ? ctx?.modelRegistry?.find?.(model.slice(0, slash), model.slice(slash + 1)) : undefined;
		// A model Pi does not know, or one with no credentials configured (a missing key), is a
		// configuration error for every request: `failMode: open` never applies to it.
		const registry = ctx?.modelRegistry;
		const noAuth = found && typeof registry?.hasConfiguredAuth === "function" && registry.hasConfiguredAuth(found) === false;
		if (!found || noAuth) return job.requests.map(() => ({ error: "configuration" }));
		const deadline = Date.now() + (Number(timeoutMs) > 0 ? Number(timeoutMs) : 30_000);
		const cancelled = () => ctx?.signal?.aborted === true;
		const out: object[] = [];
		for (const body of job.requests) {
			const left = deadline - Date.now();
			if (left <= 0) {
				out.push({ error: cancelled() ? "cancelled" : "timed-out" });
				continue;
			}
			// The deadline aborts the request and, for a model that ignores the signal, stops
			// waiting for it.
			const timer = new AbortController();
			const signal = ctx?.signal ? AbortSignal.any([ctx.signal, timer.signal]) : timer.signal;
			let expire = () => {};
			const expired = new Promise<"expired">((resolve) => {
				expire = () => resolve("expired");
			});
			const handle = setTimeout(() => {
				timer.abort();
				expire();
			}, left);
			try {
				const request = Promise.resolve(
					ctx.modelRegistry.complete(
						found,
						{ systemPrompt: job.instructions, messages: [{ role: "user", content: body, timestamp: Date.now() }] },
						{ signal },
					),
				);
				request.catch(() => {});
				const message: any = await Promise.race([request, expired]);
				if (cancelled()) out.push({ error: "cancelled" });
				else if (message === "expired" || timer.signal.aborted) out.push({ error: "timed-out" });
				else if (message?.stopReason === "aborted") out.push({ error: "cancelled" });
				else if (message?.stopReason === "error") out.push({ error: "unavailable" });
				else out.push({ text: (message?.content ?? []).filter((c: any) => c?.type === "text").map((c: any) => c.text).join("") });
			} catch {
				out.push({ error: cancelled() ? "cancelled" : "unavailable" });
			} finally {
				clearTimeout(handle);
			}
		}
		return out;
	};

	// Each job is answered once, however many calls wait on it; the working row shows while any
	// is in flight.
	const inFlight = new Map<number, Promise<string | undefined>>();
	const settle = (job: Job, ctx: any): Promise<string | undefined> => {
		let running = inFlight.get(job.job);
		if (running) return running;
		running = (async () => {
			if (inFlight.size === 0) {
				try {
					// Pi draws its working row from the run's first turn_start only: a decision
					// before the first request (before_agent_start) asks for it to be shown now.
					ctx?.ui?.setWorkingMessage?.(addon!.decidingLabel());
					ctx?.ui?.setWorkingVisible?.(true);
				} catch {
					// No working row to show.
				}
			}
			try {
				// A semantic job (the embedded scorer with sentence embeddings) is answered by the
				// addon off the event loop, within its bound; any other by the decision model.
				const answers = job.semantic ? await session!.semanticJob(job.job).run() : JSON.stringify(await answer(job, ctx));
				const notice = apply(session!.decided(job.job, answers, activeTools()), ctx).notice;
				showFooter(ctx);
				return notice;
			} finally {
				inFlight.delete(job.job);
				if (inFlight.size === 0) {
					try {
						ctx?.ui?.setWorkingMessage?.();
					} catch {
						// No working row to clear.
					}
				}
			}
		})();
		inFlight.set(job.job, running);
		return running;
	};

	const boundary = async (kind: object, ctx: any): Promise<string | undefined> => {
		if (!session) return undefined;
		let tools: string | undefined;
		let active: string[] = [];
		if (session.needsInventory()) {
			tools = readTools();
			active = activeTools();
		}
		let { notice, jobs } = apply(session.boundary(JSON.stringify(kind), tools, active), ctx);
		showFooter(ctx);
		for (const job of jobs) notice = (await settle(job, ctx)) ?? notice;
		for (const w of session.takeWarnings()) notify(ctx, w);
		return notice;
	};

	pi.on("session_start", (event: any, ctx: any) => {
		if (!addon) {
			if (!warnedMissing) notify(ctx, addonMissing());
			warnedMissing = true;
			return;
		}
		let trusted = false;
		try {
			trusted = typeof ctx.isProjectTrusted === "function" ? ctx.isProjectTrusted() === true : false;
		} catch {
			trusted = false;
		}
		const start = {
			reason: event?.reason ?? "startup",
			nonce: Date.now().toString(36),
			agentDirEnv: process.env.PI_CODING_AGENT_DIR,
			home: homedir(),
			cwd: ctx.cwd,
			trusted,
			modelDir: modelPackageDir(),
			checkoutDir: checkoutDir(),
		};
		session = addon.PiSession.start(JSON.stringify(start), readBranch(ctx));
		for (const w of session.takeWarnings()) notify(ctx, w);
		void boundary({ type: "reconcile" }, ctx);
	});

	pi.on("before_agent_start", async (event: any, ctx: any) => {
		if (!session) return undefined;
		session.settingsChanged();
		const text = event?.messageType === "custom" ? null : (event?.prompt ?? null);
		const notice = await boundary({ type: "prompt", text }, ctx);
		if (!notice) return undefined;
		return { message: { customType: NOTICE_TYPE, content: notice, display: false } };
	});

	// Steering and follow-up text queued while a run is active joins that run without a
	// before_agent_start: `input` is the only event that shows it before the model sees it
	// (docs/pi-events.md). It is a prompt boundary for the `prompt` cadence.
	pi.on("input", async (event: any, ctx: any) => {
		if (!session) return undefined;
		const joinsRun = event?.streamingBehavior === "steer" || event?.streamingBehavior === "followUp";
		if (joinsRun && typeof event?.text === "string") {
			session.settingsChanged();
			await boundary({ type: "prompt", text: event.text }, ctx);
		}
		return undefined;
	});

	pi.on("turn_end", async (event: any, ctx: any) => {
		if (!session) return;
		// A tool round reads the registry and shows the footer itself; a turn without one still
		// refreshes the footer, so a tool registered since counts at once.
		if ((event?.toolResults?.length ?? 0) > 0) await boundary({ type: "toolRound" }, ctx);
		else refreshFooter(ctx);
	});

	pi.on("session_tree", async (_event: any, ctx: any) => {
		if (!session) return;
		session.branchMoved(readBranch(ctx));
		await boundary({ type: "reconcile" }, ctx);
	});

	pi.on("session_shutdown", () => {
		session = undefined;
	});

	// Where a command's text reaches the person: Pi's notification where there is a UI (the
	// TUI, and RPC, which forwards it to the client); otherwise (print and JSON modes, where
	// notify does nothing and stdout carries only the answer or the event stream) stderr.
	const say = (ctx: any, text: string) => {
		try {
			if (ctx?.hasUI) {
				ctx.ui.notify(text, "info");
				return;
			}
		} catch {
			// Fall through to stderr.
		}
		try {
			process.stderr.write(`${text}\n`);
		} catch {
			// Nowhere to show it.
		}
	};

	// The models of Pi's registry with a configured key (all of them when it cannot say), for
	// the dialog's model picker: `provider/model` and Pi's name for it.
	const registryModels = (ctx: any): ModelChoice[] => {
		const registry = ctx?.modelRegistry;
		let models: any[] = [];
		try {
			models = registry?.getAvailable?.() ?? registry?.getAll?.() ?? [];
		} catch {
			models = [];
		}
		return models
			.filter((m) => typeof m?.provider === "string" && typeof m?.id === "string")
			.map((m) => ({ value: `${m.provider}/${m.id}`, label: `${m.provider}/${m.id}`, description: typeof m.name === "string" ? m.name : undefined }));
	};

	// The /decisions dialog (Tools and Advanced tabs): a Pi custom component drawn with Pi's
	// TUI components in the current theme (dialog.ts) from the rows and words the addon returns;
	// keys are matched with Pi's key bindings and forwarded as actions. The addon writes the
	// settings files and tells the session; a ranking job is answered here with the decision
	// model (no working row: nothing is streaming).
	// dialog.ts (and through it pi-tui) is loaded when the dialog first opens, never at start: the
	// gate must load even where pi-tui cannot be resolved. Then the dialog falls back to the
	// addon's own plain lines.
	let dialogModule: Promise<typeof import("./dialog.ts") | null> | undefined;
	const openTab = async (ctx: any) => {
		dialogModule ??= import("./dialog.ts").catch(() => null);
		const themed = await dialogModule;
		const current = session!;
		current.tabOpen(toolsForCommand(), readBranch(ctx));
		for (const w of current.takeWarnings()) notify(ctx, w);
		await ctx.ui.custom((tui: any, theme: any, keybindings: any, done: (result: undefined) => void) => {
			let closed = false;
			const finish = () => {
				if (closed) return;
				closed = true;
				current.tabClose();
				showFooter(ctx);
				done(undefined);
			};
			const rank = async (job: Job) => {
				let answers: object[];
				try {
					answers = await answer(job, ctx);
				} catch {
					answers = job.requests.map(() => ({ error: "unavailable" }));
				}
				if (closed) return;
				current.tabRanked(job.job, JSON.stringify(answers));
				tui?.requestRender?.();
			};
			const plain = {
				render: (width: number): string[] => current.tabRender(width, tui?.terminal?.rows),
				handleInput: (data: string) => {
					const step = JSON.parse(current.tabInput(data));
					if (step.job) void rank(step.job as Job);
					if (step.close) finish();
				},
				invalidate: () => {},
			};
			const dialog = themed?.createDialog({
				session: current,
				tui,
				theme,
				keybindings,
				models: () => registryModels(ctx),
				tools: toolsForCommand,
				onStep: (stepJson: string) => {
					const step = JSON.parse(stepJson);
					if (step.job) void rank(step.job as Job);
					if (step.close) finish();
				},
			}) ?? plain;
			return {
				render: (width: number): string[] => {
					try {
						return closed ? [] : dialog.render(width);
					} catch {
						return [];
					}
				},
				handleInput: (data: string) => {
					try {
						dialog.handleInput(data);
						for (const w of current.takeWarnings()) notify(ctx, w);
					} catch {
						finish();
					}
				},
				invalidate: () => dialog.invalidate(),
				dispose: () => {
					if (!closed) current.tabClose();
					closed = true;
				},
			};
		});
	};

	if (!addon) {
		// Without the addon /decisions still exists (it would otherwise go to the model as a
		// prompt): it says what is missing and what to run for this install form (`addonMissing`).
		pi.registerCommand("decisions", {
			description: ADDON_MISSING.what.slice(0, ADDON_MISSING.what.indexOf(",")),
			handler: async (_args: string, ctx: any) => {
				notify(ctx, addonMissing());
			},
		});
	}

	if (addon) {
		pi.registerCommand("decisions", {
			description: addon.commandDescription(),
			// The command's own arguments on Tab, never file names.
			getArgumentCompletions: (prefix: string) => {
				try {
					return JSON.parse(addon!.decisionsCompletions(prefix ?? ""));
				} catch {
					return null;
				}
			},
			handler: async (args: string, ctx: any) => {
				if (!session) return;
				const words = (args ?? "").trim().split(/\s+/).filter((w) => w.length > 0);
				const [what, sub] = words;
				let text: string;
				if (words.length === 0) {
					// The Tools tab where Pi has an interactive terminal; elsewhere the same settings
					// and lists as text.
					if (ctx?.mode === "tui" && typeof ctx?.ui?.custom === "function") {
						await openTab(ctx);
						return;
					}
					text = session.status();
				} else if ((what === "tools" || what === "mcp") && sub === "list" && words.length === 2) {
					text = session.list(what, toolsForCommand());
					// The list read the registry again: the footer counts what it counts.
					showFooter(ctx);
				} else if (what === "export-inventory" && words.length <= 2) {
					// The person's own inventory to a new file they name, for the program (outside
					// `tools`/`mcp`, which take only `list`).
					const name = words[1];
					const file = name === undefined ? undefined : resolve(ctx?.cwd ?? process.cwd(), name);
					// Off means off: Pi's registry is read only while filtering is on (the addon
					// then says why nothing was written).
					text = session.exportTools(file === undefined ? undefined : toolsForCommand(), file);
				} else if (what === "test" && words.length === 1) {
					// Idle-time call: no working row; the result is reported when it returns.
					const probe = JSON.parse(session.decisionTest());
					if (probe.text !== undefined) {
						text = probe.text;
					} else {
						const job = probe.job as Job;
						const answers = await answer(job, ctx);
						text = session.testDecided(job.job, JSON.stringify(answers));
					}
				} else {
					text = session.usage(what === "tools" || what === "mcp" ? what : "", words.join(" "));
				}
				for (const w of session.takeWarnings()) notify(ctx, w);
				say(ctx, text);
			},
		});
	}

	pi.on("tool_call", async (event: any, ctx: any) => {
		try {
			if (!session) {
				if (addon) return undefined;
				const state = switchState();
				if (state === "off") return undefined;
				const tool = pi.getAllTools().find((t: any) => t?.name === event?.toolName);
				if (tool && isInternal(tool)) return undefined;
				if (state === "unknown" && tool && projectPins(ctx?.cwd, tool)) return undefined;
				return { block: true, reason: addonMissing() };
			}
			if (!session.filteringOn()) return undefined;
			const [kind, server] = serverArg(event?.input);
			let result = session.toolCall(event.toolName, kind, server);
			if (result.refresh) result = session.toolCallWith(event.toolName, kind, server, readTools());
			// A decision Pi refused to record allows nothing (a refusal elsewhere meanwhile also
			// blocks this call: fail closed).
			const refusedBefore = refusals;
			apply(result.effects, ctx);
			if (result.pending) {
				// Nobody has scored this tool yet: one decision, shared by parallel calls.
				await settle(JSON.parse(result.pending) as Job, ctx);
				result = session.toolCall(event.toolName, kind, server);
				apply(result.effects, ctx);
				if (refusals !== refusedBefore) return { block: true, reason: addon!.notRecordedReason() };
				if (result.pending) return { block: true, reason: addon!.checkFailedReason() };
			}
			if (refusals !== refusedBefore) return { block: true, reason: addon!.notRecordedReason() };
			return result.block ? { block: true, reason: result.block } : undefined;
		} catch {
			let reason = ADDON_MISSING.what;
			try {
				reason = addon ? addon.checkFailedReason() : addonMissing();
			} catch {
				// Keep the fallback sentence.
			}
			return { block: true, reason };
		}
	});
}
