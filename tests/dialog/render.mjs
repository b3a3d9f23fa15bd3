// Renders the /decisions dialog through the extension's own component code (extension/dialog.ts)
// with the pi-tui of an installed Pi, against a fixed theme, and prints the screens as JSON.
//
// Usage: node render.mjs PI_PACKAGE_DIR ADDON AGENT_DIR CWD
// PI_PACKAGE_DIR is the installed @earendil-works/pi-coding-agent; the addon's settings files
// live under AGENT_DIR (PI_CODING_AGENT_DIR is set to it before the addon starts).
//
// The theme marks each colour with its own SGR code so a test can check which text took which
// colour; `plain` is the same screen without escape sequences.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [piDir, addonPath, agentDir, cwd] = process.argv.slice(2);
process.env.PI_CODING_AGENT_DIR = agentDir;
const here = dirname(fileURLToPath(import.meta.url));
const requireFromPi = createRequire(join(piDir, "package.json"));
const tuiEntry = requireFromPi.resolve("@earendil-works/pi-tui");
const { createJiti } = await import(pathToFileURL(requireFromPi.resolve("jiti")).href);
const jiti = createJiti(import.meta.url, { alias: { "@earendil-works/pi-tui": tuiEntry }, moduleCache: false });
const { createDialog } = await jiti.import(resolve(here, "../../extension/dialog.ts"));
const tui = await import(pathToFileURL(tuiEntry).href);

const CODES = { accent: 36, muted: 90, dim: 2, error: 31, warning: 33 };
const theme = {
	fg: (color, text) => `\x1b[${CODES[color] ?? 39}m${text}\x1b[0m`,
	bold: (text) => `\x1b[1m${text}\x1b[0m`,
};
// SGR colours, and the APC marker where pi-tui's Input puts the terminal's cursor.
const strip = (line) => line.replace(/\x1b\[[0-9;]*m/g, "").replace(/\x1b_[^\x07]*\x07/g, "");

const addon = createRequire(import.meta.url)(addonPath);
const session = addon.PiSession.start(JSON.stringify({ reason: "startup", nonce: "t", agentDirEnv: agentDir, home: agentDir, cwd, trusted: false }));
const models = [
	{ value: "faux/faux-1", label: "faux/faux-1", description: "Faux One" },
	{ value: "云/模型🙂", label: "云/模型🙂", description: "宽字符 model" },
	{ value: "local/tiny", label: "local/tiny", description: "Tiny" },
];

const KEYS = { down: "\x1b[B", up: "\x1b[A", enter: "\r", tab: "\t", escape: "\x1b", backspace: "\x7f" };
const out = {};
// Each screen: a name, the keys pressed before it (from a fresh dialog), drawn at each width.
const screens = {
	tools: [],
	advanced: [KEYS.tab],
	"advanced-model": [KEYS.tab, KEYS.down],
	"model-picker": [KEYS.tab, KEYS.down, KEYS.enter],
	"threshold-input": [KEYS.tab, ...Array(4).fill(KEYS.down), KEYS.enter],
	"threshold-refused": [KEYS.tab, ...Array(4).fill(KEYS.down), KEYS.enter, ...Array(6).fill(KEYS.backspace), "0.6251", KEYS.enter],
	// Filtering is switched on first: while it is off the dialog does not read the inventory.
	editor: [KEYS.enter, KEYS.down, KEYS.down, KEYS.down, KEYS.enter],
};
// The editor opens on the example inventory, so its groups, tools and cursor are drawn.
const inventory = readFileSync(new URL("../../examples/inventory.json", import.meta.url), "utf8");
for (const [name, keys] of Object.entries(screens)) {
	for (const width of [60, 80, 120]) {
		session.tabOpen(name === "editor" ? inventory : undefined, undefined);
		const dialog = createDialog({
			session,
			tui: { terminal: { rows: 40, columns: width }, requestRender: () => {} },
			theme,
			keybindings: tui.getKeybindings(),
			models: () => models,
			onStep: () => {},
			tools: () => (session.readsRegistry() ? inventory : undefined),
		});
		dialog.render(width);
		// The editor screen switches filtering on once (the first width); later widths find it on.
		const pressed = name === "editor" && session.filteringOn() ? keys.slice(1) : keys;
		for (const key of pressed) {
			dialog.handleInput(key);
			dialog.render(width);
		}
		const lines = dialog.render(width);
		out[`${name}@${width}`] = { styled: lines, plain: lines.map(strip), widths: lines.map((l) => tui.visibleWidth(l)) };
		session.tabClose();
	}
}

// Writes through the picker and the input: the model chosen, then a threshold typed.
session.tabOpen(undefined, undefined);
const dialog = createDialog({ session, tui: { terminal: { rows: 40 } }, theme, keybindings: tui.getKeybindings(), models: () => models, onStep: () => {} });
dialog.render(80);
for (const key of [KEYS.tab, KEYS.down, KEYS.enter, KEYS.down]) dialog.handleInput(key);
dialog.handleInput(KEYS.enter);
const afterModel = dialog.render(80).map(strip);
for (const key of [KEYS.down, KEYS.down, KEYS.down, KEYS.enter, ...Array(6).fill(KEYS.backspace), "0.613", KEYS.enter]) dialog.handleInput(key);
const afterThreshold = dialog.render(80).map(strip);
session.tabClose();
out.writes = { afterModel, afterThreshold, warnings: session.takeWarnings() };
process.stdout.write(JSON.stringify(out));
