// The harness's tracing extension. It is loaded first (before every scenario extension), so its
// `tool_call` handler sees every call, including the ones a later extension blocks. It only
// observes: it never blocks, never changes tools and never writes entries. What it sees goes to
// an array on `globalThis` that run.mjs (same process, same realm) owns; arguments and texts are
// cut short so a report stays small.

const sink: { events: unknown[] } | undefined = (globalThis as any).__piHarness;

function cut(value: unknown, max = 400): unknown {
	if (typeof value === "string") return value.length > max ? `${value.slice(0, max)}…` : value;
	try {
		const text = JSON.stringify(value);
		if (text === undefined) return undefined;
		return text.length > max ? `${text.slice(0, max)}…` : JSON.parse(text);
	} catch {
		return "[unserialisable]";
	}
}

function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((block: any) => (block && block.type === "text" ? String(block.text) : ""))
		.join("");
}

function summariseMessage(message: any): unknown {
	if (!message || typeof message !== "object") return undefined;
	const out: Record<string, unknown> = { role: message.role };
	if (message.customType !== undefined) out.customType = message.customType;
	if (message.display !== undefined) out.display = message.display;
	if (message.toolName !== undefined) out.toolName = message.toolName;
	if (message.stopReason !== undefined) out.stopReason = message.stopReason;
	const text = textOf(message.content);
	if (text) out.text = cut(text, 200);
	return out;
}

function record(event: Record<string, unknown>): void {
	sink?.events.push({ ...event, seq: sink.events.length });
}

// The harness counts every extension's getAllTools() but the tracer's own.
function traced<T>(read: () => T): T {
	if (sink) (sink as any).tracing = true;
	try {
		return read();
	} finally {
		if (sink) (sink as any).tracing = false;
	}
}

function inventory(pi: any): unknown {
	return traced(() => pi.getAllTools()).map((tool: any) => ({
		name: tool.name,
		exposure: tool.exposure ?? "direct",
		namespace: tool.namespace
			? { name: tool.namespace.name, aliases: tool.namespace.aliases ?? null }
			: null,
		source: tool.sourceInfo
			? {
					path: tool.sourceInfo.path,
					source: tool.sourceInfo.source,
					scope: tool.sourceInfo.scope,
					origin: tool.sourceInfo.origin,
				}
			: null,
	}));
}

export default function tracer(pi: any) {
	pi.on("session_start", (event: any, ctx: any) => {
		record({
			type: "session_start",
			reason: event.reason,
			previousSessionFile: event.previousSessionFile ?? null,
			trusted: typeof ctx.isProjectTrusted === "function" ? ctx.isProjectTrusted() : null,
			hasUI: ctx.hasUI,
			branchTypes: ctx.sessionManager.getBranch().map((e: any) => e.type),
			active: pi.getActiveTools(),
			registeredMcpTools: traced(() => pi.getAllTools()).filter((t: any) => t.sourceInfo?.path === "builtin:mcp").length,
		});
	});
	pi.on("session_tree", (event: any, ctx: any) => {
		record({
			type: "session_tree",
			newLeafId: event.newLeafId ?? null,
			oldLeafId: event.oldLeafId ?? null,
			leafId: ctx.sessionManager.getLeafId?.() ?? null,
		});
	});
	pi.on("session_shutdown", (event: any) => {
		record({ type: "session_shutdown", reason: event.reason ?? null });
	});
	pi.on("session_before_tree", (event: any) => {
		record({ type: "session_before_tree", targetId: event.preparation?.targetId ?? null });
	});
	pi.on("session_before_fork", (event: any) => {
		record({ type: "session_before_fork", entryId: event.entryId ?? null, position: event.position ?? null });
	});
	pi.on("session_before_switch", (event: any) => {
		record({ type: "session_before_switch", reason: event.reason ?? null });
	});
	pi.on("agent_start", () => {
		record({ type: "agent_start" });
	});
	pi.on("agent_end", () => {
		record({ type: "agent_end" });
	});
	pi.on("input", (event: any) => {
		record({
			type: "input",
			text: cut(event.text, 200),
			source: event.source ?? null,
			streamingBehavior: event.streamingBehavior ?? null,
		});
	});
	pi.on("before_agent_start", (event: any, ctx: any) => {
		record({
			type: "before_agent_start",
			messageType: event.messageType ?? null,
			prompt: event.prompt === undefined ? null : cut(event.prompt, 200),
			message: event.message ? summariseMessage(event.message) : null,
			active: pi.getActiveTools(),
			inventory: inventory(pi),
			workingMessage: typeof ctx.ui?.setWorkingMessage,
		});
	});
	pi.on("turn_start", (event: any) => {
		record({ type: "turn_start", turnIndex: event.turnIndex, active: pi.getActiveTools() });
	});
	pi.on("context", (event: any) => {
		const users = (event.messages ?? [])
			.filter((m: any) => m.role === "user" || m.role === "custom")
			.map(summariseMessage);
		record({ type: "context", userMessages: users });
	});
	pi.on("turn_end", (event: any) => {
		record({
			type: "turn_end",
			turnIndex: event.turnIndex,
			message: summariseMessage(event.message),
			toolResults: (event.toolResults ?? []).map(summariseMessage),
		});
	});
	pi.on("message_end", (event: any) => {
		const m = event.message;
		if (m && (m.role === "user" || m.role === "custom")) {
			record({ type: "message_end", message: summariseMessage(m) });
		}
	});
	pi.on("tool_call", (event: any) => {
		record({
			type: "tool_call",
			toolName: event.toolName,
			toolCallId: event.toolCallId,
			parentToolCallId: event.parentToolCallId ?? null,
			input: cut(event.input),
		});
	});
}
