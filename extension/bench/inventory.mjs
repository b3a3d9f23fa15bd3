// The benches' synthetic inventory of `n` tools: the example inventory's tools, then generated
// extension tools with varied words, so the scorer has something to tell apart.
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export function inventory(n) {
	const example = JSON.parse(readFileSync(join(here, "..", "..", "examples", "inventory.json"), "utf8"));
	const tools = [...example];
	const words = ["chart", "fetch", "query", "note", "deploy", "translate", "search", "render", "convert", "weather", "issue", "page"];
	for (let i = tools.length; i < n; i++) {
		const w = words[i % words.length];
		tools.push({
			name: `${w}_tool_${i}`,
			description: `Does ${w} work number ${i} for the ${words[(i * 7) % words.length]} pipeline.`,
			exposure: "direct",
			parameters: { type: "object", properties: { q: { type: "string" } } },
			sourceInfo: { path: `/a/extensions/ext${i % 50}.ts`, source: "auto", scope: "user", origin: "top-level" },
		});
	}
	return tools;
}
