#!/usr/bin/env node
// Benchmarks the semantic signal inside the extension (issue 16) with the real addon, outside Pi:
// what a session's start costs on Node's event loop with N tools whose vectors are cached and the
// weights loaded, how long the background work after it takes (cache look-ups, off the loop),
// and how long a prompt's round takes (before_agent_start until it resolves: the job on libuv's
// thread pool plus the round), against the same with the lexical scorer alone.
//
//   PCD_MODEL_DIR=.cache/models/all-minilm-l6-v2 node22 extension/bench/semantic.mjs [--tools N]
//   node22 extension/bench/semantic.mjs --lexical [--tools N]     (the same without the model)
//
// The addon is PI_CONTEXT_DECISIONS_ADDON (or the extension's own). The vector cache is a fresh
// file in the temporary folder, filled by a first session before anything is measured.
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { inventory } from "./inventory.mjs";
import { createRequire } from "node:module";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const toolCount = Number(argv[argv.indexOf("--tools") + 1] || 1000) || 1000;
const lexical = argv.includes("--lexical");
if (lexical) delete process.env.PCD_MODEL_DIR;
const scratch = mkdtempSync(join(tmpdir(), "pcd-bench-semantic-"));
process.env.PCD_VECTOR_CACHE = join(scratch, "vectors.bin");

let sessions = 0;
async function setup(tools) {
	const agentDir = mkdtempSync(join(scratch, "agent-"));
	mkdirSync(join(agentDir, "pi-context-decisions"), { recursive: true });
	writeFileSync(
		join(agentDir, "pi-context-decisions", "settings.json"),
		JSON.stringify({ tools: { enabled: true, cadence: "prompt" }, decision: { provider: "embedded" } }),
	);
	process.env.PI_CODING_AGENT_DIR = agentDir;
	const handlers = {};
	let active = tools.filter((t) => t.exposure !== "deferred").map((t) => t.name);
	const entries = [];
	const pi = {
		on: (name, fn) => (handlers[name] = fn),
		registerCommand: () => {},
		getAllTools: () => tools,
		getActiveTools: () => active,
		setActiveTools: (names) => (active = names),
		appendEntry: (customType, data) => entries.push({ type: "custom", customType, data, id: `e${entries.length}`, parentId: null }),
	};
	const ctx = { cwd: agentDir, isProjectTrusted: () => true, sessionManager: { getBranch: () => entries }, ui: { notify: () => {} } };
	const mod = await import(pathToFileURL(join(here, "..", "index.ts")).href + `?s${sessions++}`);
	mod.default(pi);
	return { handlers, ctx };
}

const addonPath = process.env.PI_CONTEXT_DECISIONS_ADDON ?? join(here, "..", "pcd_node.node");
const addon = createRequire(import.meta.url)(addonPath);
const state = () => JSON.parse(addon.semanticState());
async function settled() {
	const t0 = process.hrtime.bigint();
	for (;;) {
		const s = state();
		if (s.state !== "loading" && s.warming === 0) return Number(process.hrtime.bigint() - t0) / 1e6;
		await new Promise((r) => setTimeout(r, 2));
	}
}
function median(xs) {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)];
}

const tools = inventory(toolCount);
const results = { tools: tools.length, node: process.version, lexical };

// First session: loads the weights and fills the cache with every candidate's vector.
{
	const t0 = process.hrtime.bigint();
	const { handlers, ctx } = await setup(tools);
	handlers.session_start({ reason: "startup" }, ctx);
	await settled();
	const s = state();
	results.model = { state: s.state, reason: s.reason, loadMs: s.loadMs };
	results.firstSessionUntilCachedMs = Number(process.hrtime.bigint() - t0) / 1e6;
}

const prompts = [
	"Search the incidents of the checkout service and page the on-call engineer",
	"Is the preview deployment finished?",
	"Translate this sentence into German",
];
const start = [];
const background = [];
const round = [];
for (let i = 0; i < 15; i++) {
	const { handlers, ctx } = await setup(tools);
	const t0 = process.hrtime.bigint();
	handlers.session_start({ reason: "startup" }, ctx);
	start.push(Number(process.hrtime.bigint() - t0) / 1e6);
	background.push(await settled());
	const t1 = process.hrtime.bigint();
	// A prompt never asked before, so its vector is not cached: the round embeds it.
	await handlers.before_agent_start({ messageType: "user", prompt: `${prompts[i % prompts.length]} (take ${i})` }, ctx);
	round.push(Number(process.hrtime.bigint() - t1) / 1e6);
}
results.sessionStartOnEventLoopMs = { median: median(start), max: Math.max(...start) };
results.backgroundAfterStartMs = { median: median(background), max: Math.max(...background) };
results.promptRoundMs = { median: median(round), max: Math.max(...round) };
process.stdout.write(JSON.stringify(results, null, 2) + "\n");
