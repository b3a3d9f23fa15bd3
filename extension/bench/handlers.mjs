#!/usr/bin/env node
// Benchmarks the extension's own handlers with the real addon, outside Pi: the `tool_call`
// handler (what every call pays) and the `before_agent_start` handler (the delay added before
// the first request of a prompt), for each cadence, with the embedded scorer.
//
//   node22 extension/bench/handlers.mjs [--tools N]
//
// Pi itself is replaced by the smallest host that records what the extension asks of it: the
// point is the extension's cost, and the end-to-end tests (tests/tests/e2e_pi.rs) prove the
// behaviour inside a real Pi.
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { inventory } from "./inventory.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const toolCount = Number(argv[argv.indexOf("--tools") + 1] || 1000) || 1000;

async function setup(cadence, tools) {
	const agentDir = mkdtempSync(join(tmpdir(), "pcd-bench-"));
	mkdirSync(join(agentDir, "pi-context-decisions"), { recursive: true });
	writeFileSync(
		join(agentDir, "pi-context-decisions", "settings.json"),
		JSON.stringify({ tools: { enabled: true, cadence }, decision: { provider: "embedded" } }),
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
	const ctx = {
		cwd: agentDir,
		isProjectTrusted: () => true,
		sessionManager: { getBranch: () => entries },
		ui: { notify: () => {} },
	};
	const mod = await import(pathToFileURL(join(here, "..", "index.ts")).href + `?${cadence}`);
	mod.default(pi);
	handlers.session_start({ reason: "startup" }, ctx);
	return { handlers, ctx, entries, active: () => active };
}

function median(xs) {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)];
}

const tools = inventory(toolCount);
const results = { tools: tools.length, node: process.version, firstRequestDelayMs: {}, toolCallMicros: {} };

for (const cadence of ["initial", "prompt", "tool-round"]) {
	const samples = [];
	for (let i = 0; i < 15; i++) {
		const { handlers, ctx } = await setup(cadence, tools);
		const t0 = process.hrtime.bigint();
		handlers.before_agent_start({ messageType: "user", prompt: "Search the incidents of the checkout service and page the on-call engineer" }, ctx);
		samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	results.firstRequestDelayMs[cadence] = { median: median(samples), max: Math.max(...samples) };
}

const { handlers, ctx, active } = await setup("prompt", tools);
handlers.before_agent_start({ messageType: "user", prompt: "Search the incidents of the checkout service and page the on-call engineer" }, ctx);
const allowed = active().find((n) => n.startsWith("mcp__dev_radius")) ?? "read";
const cases = {
	allowed: { toolName: allowed, input: {} },
	internal: { toolName: "read", input: { path: "x" } },
	withheld: { toolName: "bar_chart", input: {} },
	resource: { toolName: "read_mcp_resource", input: { server: "docs", uri: "x" } },
};
for (const [label, event] of Object.entries(cases)) {
	const batches = [];
	const perBatch = 2000;
	for (let b = 0; b < 200; b++) {
		const t0 = process.hrtime.bigint();
		for (let i = 0; i < perBatch; i++) handlers.tool_call(event, ctx);
		batches.push(Number(process.hrtime.bigint() - t0) / 1e3 / perBatch);
	}
	results.toolCallMicros[label] = { median: median(batches), max: Math.max(...batches) };
}
process.stdout.write(JSON.stringify(results, null, 2) + "\n");
