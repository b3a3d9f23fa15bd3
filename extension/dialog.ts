// The /decisions dialog drawn with Pi's own TUI components, in the current theme, as Pi's
// /settings draws its list: a cursor glyph, the values dimmed except under the cursor, a
// counter, the help of the row under the cursor, and key hints spelled with the keys Pi binds
// (so a rebound key shows as the person bound it). Every word comes from the addon (ui-text) as
// data; this file only lays the words out. The threshold is typed into pi-tui's Input, and a
// Pi model is chosen from pi-tui's SelectList fed from Pi's model registry.

import { Input, SelectList, getKeybindings, matchesKey, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";

/** The addon's dialog calls this file uses. */
export type DialogSession = {
	tabView(width: number, rows?: number): string;
	tabAction(name: string): string;
	tabInput(data: string): string;
	tabSubmit(text: string): void;
	tabDismiss(): void;
	tabTools(toolsJson: string): void;
};

/** A model the picker offers: `provider/model`, and Pi's name for it. */
export type ModelChoice = { value: string; label: string; description?: string };

type Hint = { actions: string[]; words: string };
type Prompt = { kind: "number" | "model"; title: string; help: string; value: string; error: string | null; empty: string; hints: Hint[] };
type View = {
	title: string;
	rows: { label: string; value: string }[];
	cursor: number;
	help: string;
	notes: string[];
	status: string | null;
	hints: Hint[];
	editor: string[] | null;
	editor_hints?: Hint[];
	prompt: Prompt | null;
};

// Pi's key binding for each action the addon names (the ids Pi's own lists and inputs use).
const BINDINGS: Record<string, string> = {
	up: "tui.select.up",
	down: "tui.select.down",
	left: "tui.editor.cursorLeft",
	right: "tui.editor.cursorRight",
	confirm: "tui.select.confirm",
	cancel: "tui.select.cancel",
	tab: "tui.input.tab",
	backspace: "tui.editor.deleteCharBackward",
};
// Keys Pi has no binding id for, matched by their names.
const NAMED_KEYS: Record<string, string> = { backTab: "shift+tab", save: "ctrl+s", space: "space" };
// The order matters: the first match wins.
const ACTIONS = ["up", "down", "left", "right", "confirm", "cancel", "backTab", "tab", "save", "space", "backspace"];

/** What `createDialog` needs: the addon's session, Pi's TUI, theme and key bindings. */
export type DialogOptions = {
	session: DialogSession;
	tui: any;
	theme: any;
	keybindings: any;
	/** The models of Pi's registry for the picker (read when it opens). */
	models: () => ModelChoice[];
	/** Every step the addon returned for a key (JSON text: `{close, job}`). */
	onStep: (stepJson: string) => void;
	/** Pi's inventory (`getAllTools()` as JSON text) while filtering is on, else undefined: read
	 * once filtering is switched on inside the dialog, so its editors list the loaded tools. */
	tools?: () => string | undefined;
};

/** The dialog as a pi-tui component (render, handleInput, invalidate). */
export function createDialog(options: DialogOptions) {
	const { session, tui, theme } = options;
	// The bindings Pi passes to custom components; a host that passes none gets pi-tui's.
	const keybindings = typeof options.keybindings?.matches === "function" ? options.keybindings : getKeybindings();
	const fg = (color: string, text: string): string => (typeof theme?.fg === "function" ? theme.fg(color, text) : text);
	const bold = (text: string): string => (typeof theme?.bold === "function" ? theme.bold(text) : text);
	const cursorGlyph = fg("accent", "→ ");
	let lastWidth = 80;
	let promptKind: string | undefined;
	let input: any;
	let picker: any;
	let pickerEmpty = false;

	// Whether the addon has Pi's inventory: it is read at open only while filtering is on, so a
	// switch turned on here hands it over at the next key.
	let toolsGiven = options.tools?.() !== undefined;
	const catchUp = () => {
		if (toolsGiven || !options.tools) return;
		const tools = options.tools();
		if (tools === undefined) return;
		session.tabTools(tools);
		toolsGiven = true;
	};

	const rows = (): number | undefined => tui?.terminal?.rows;
	const view = (width: number): View => JSON.parse(session.tabView(width, rows()));

	const keysOf = (action: string): string => {
		const id = BINDINGS[action];
		if (id) {
			try {
				const keys: string[] = keybindings.getKeys(id) ?? [];
				if (keys.length > 0) return keys.join("/");
			} catch {
				// Fall through to the action's name.
			}
		}
		return NAMED_KEYS[action] ?? action;
	};
	const matches = (data: string, action: string): boolean => {
		const id = BINDINGS[action];
		if (id) {
			try {
				return keybindings.matches(data, id) === true;
			} catch {
				return false;
			}
		}
		const name = NAMED_KEYS[action];
		return name !== undefined && matchesKey(data, name);
	};

	// The hints as Pi's keyHint spells them (keys dimmed, words muted), broken between hints.
	const hintLines = (hints: Hint[], width: number): string[] => {
		const items = hints.map((h) => {
			const keys = h.actions.map(keysOf).join("/");
			return keys ? fg("dim", keys) + fg("muted", ` ${h.words}`) : fg("muted", h.words);
		});
		const room = Math.max(1, width - 2);
		const sep = fg("dim", " · ");
		const lines: string[] = [];
		let line = "";
		for (const item of items) {
			if (line && visibleWidth(line) + visibleWidth(sep) + visibleWidth(item) > room) {
				lines.push(line);
				line = "";
			}
			line = line ? line + sep + item : item;
		}
		if (line) lines.push(line);
		return lines.flatMap((l) => wrapTextWithAnsi(l, room)).map((l) => truncateToWidth(`  ${l}`, width));
	};

	const wrapped = (text: string, width: number, style: (t: string) => string): string[] =>
		wrapTextWithAnsi(text, Math.max(1, width - 2)).map((l) => truncateToWidth(style(`  ${l}`), width));

	// The prompt's component, made when a prompt opens and dropped when it closes.
	const syncPrompt = (prompt: Prompt | null) => {
		const kind = prompt?.kind;
		if (kind === promptKind) return;
		promptKind = kind;
		input = undefined;
		picker = undefined;
		if (!prompt) return;
		if (prompt.kind === "number") {
			input = new Input();
			// Pasted in (bracketed paste), so the cursor ends after the saved value.
			input.handleInput(`\x1b[200~${prompt.value}\x1b[201~`);
			return;
		}
		let models: ModelChoice[] = [];
		try {
			models = options.models();
		} catch {
			models = [];
		}
		pickerEmpty = models.length === 0;
		const listTheme = {
			selectedPrefix: (t: string) => fg("accent", t),
			selectedText: (t: string) => fg("accent", t),
			description: (t: string) => fg("muted", t),
			scrollInfo: (t: string) => fg("muted", t),
			noMatch: (t: string) => fg("muted", t),
		};
		picker = new SelectList(models, Math.max(3, Math.min(10, (rows() ?? 24) - 12)), listTheme);
		const current = models.findIndex((m) => m.value === prompt.value);
		if (current >= 0) picker.setSelectedIndex(current);
		picker.onSelect = (item: ModelChoice) => session.tabSubmit(item.value);
		picker.onCancel = () => session.tabDismiss();
	};

	const renderPrompt = (v: View, prompt: Prompt, width: number): string[] => {
		const lines = [truncateToWidth(fg("accent", bold(`${v.title} · ${prompt.title}`)), width), ""];
		lines.push(...wrapped(prompt.help, width, (t) => fg("dim", t)));
		lines.push("");
		if (prompt.kind === "number") lines.push(...(input?.render(width) ?? []));
		else if (pickerEmpty) lines.push(...wrapped(prompt.empty, width, (t) => fg("warning", t)));
		else lines.push(...(picker?.render(width) ?? []));
		if (prompt.error) lines.push(...wrapped(prompt.error, width, (t) => fg("error", t)));
		lines.push("");
		lines.push(...hintLines(prompt.hints, width));
		return lines;
	};

	const renderList = (v: View, width: number): string[] => {
		const lines = [truncateToWidth(fg("accent", bold(v.title)), width), ""];
		// As many rows as the terminal leaves room for, in a window that holds the cursor.
		const room = Math.max(3, (rows() ?? 40) - 14);
		const start = Math.max(0, Math.min(v.cursor - Math.floor(room / 2), v.rows.length - room));
		const end = Math.min(v.rows.length, start + room);
		const labelWidth = Math.min(36, Math.max(...v.rows.map((r) => visibleWidth(r.label))));
		for (let i = start; i < end; i++) {
			const row = v.rows[i]!;
			const selected = i === v.cursor;
			const prefix = selected ? cursorGlyph : "  ";
			const label = truncateToWidth(row.label, labelWidth, "…", true);
			const labelText = selected ? fg("accent", label) : label;
			const valueRoom = Math.max(1, width - 2 - labelWidth - 2 - 1);
			const value = truncateToWidth(row.value, valueRoom, "…");
			const valueText = selected ? fg("accent", value) : fg("muted", value);
			lines.push(truncateToWidth(`${prefix}${labelText}  ${valueText}`, width));
		}
		// The counter, as Pi's lists show it.
		lines.push(truncateToWidth(fg("dim", `  (${v.cursor + 1}/${v.rows.length})`), width));
		lines.push("");
		if (v.help) lines.push(...wrapped(v.help, width, (t) => fg("dim", t)));
		for (const note of v.notes) lines.push(...wrapped(note, width, (t) => fg("muted", t)));
		if (v.status) lines.push(...wrapped(v.status, width, (t) => fg("warning", t)));
		lines.push("");
		lines.push(...hintLines(v.hints, width));
		return lines;
	};

	// An open allowlist editor's lines come from ui-text; here the title, the search line and
	// the cursor take the theme, and its key hints are spelled with Pi's key bindings as the
	// list's are.
	const renderEditor = (lines: string[], hints: Hint[], width: number): string[] => [
		...lines.map((line, i) => {
			if (i === 0) return truncateToWidth(fg("accent", bold(line)), width);
			if (i === 1) return truncateToWidth(fg("dim", line), width);
			if (line.startsWith("> ")) return truncateToWidth(cursorGlyph + fg("accent", line.slice(2)), width);
			return truncateToWidth(line, width);
		}),
		...hintLines(hints, width),
	];

	return {
		render(width: number): string[] {
			lastWidth = width;
			const v = view(width);
			syncPrompt(v.prompt);
			if (v.prompt) return renderPrompt(v, v.prompt, width);
			if (v.editor) return renderEditor(v.editor, v.editor_hints ?? [], width);
			return renderList(v, width);
		},
		handleInput(data: string): void {
			const v = view(lastWidth);
			syncPrompt(v.prompt);
			if (v.prompt?.kind === "number" && input) {
				if (matches(data, "cancel")) session.tabDismiss();
				else if (keybindings.matches(data, "tui.input.submit")) session.tabSubmit(input.getValue());
				else input.handleInput(data);
			} else if (v.prompt?.kind === "model") {
				if (pickerEmpty || !picker) {
					if (matches(data, "cancel") || matches(data, "confirm")) session.tabDismiss();
				} else picker.handleInput(data);
			} else {
				// In an editor, typed text is its search: only keys Pi binds to an action are
				// actions, the rest goes to the addon as it came.
				const action = ACTIONS.find((a) => matches(data, a));
				options.onStep(action ? session.tabAction(action) : session.tabInput(data));
				catchUp();
			}
			tui?.requestRender?.();
		},
		invalidate(): void {
			input?.invalidate?.();
			picker?.invalidate?.();
		},
	};
}
