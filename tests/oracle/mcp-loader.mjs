// A differential oracle: runs Pi's own mcp.json loader (loadMcpConfig, not exported from the
// package index, so imported by file path) over a batch of cases and prints, per case, one JSON
// line with only names, scopes, override flags and warning codes. Commands, arguments, env
// values, URLs, headers and Pi's error texts never leave this script.
//
// Usage: node mcp-loader.mjs <pi-coding-agent package dir> <cases.json>
//   cases.json: [{"agentDir": "...", "cwd": "...", "trusted": true}, ...]
// Output: one line per case: {"servers":[[name, scope, override]], "warnings":[[file, code, server|null]]}
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, casesFile] = process.argv.slice(2);
if (!pkg || !casesFile) {
  process.stderr.write("usage: node mcp-loader.mjs <pi package dir> <cases.json>\n");
  process.exit(2);
}
const { loadMcpConfig } = await import(pathToFileURL(join(pkg, "dist/extensions/mcp/config.js")).href);

const NAME = /^[A-Za-z0-9_-]+$/;
const Q = '"([A-Za-z0-9_-]+)"';
// Pi's messages (1.0.3 to 1.6.0) mapped to the reader's codes; the server only when its name
// passes the name rule.
const RULES = [
  [/^expected an object with an "mcpServers" object$/, "not_object"],
  [/^autoEnableCodemode must be a boolean$/, "auto_enable_codemode_type"],
  [new RegExp(`^server ${Q} must be an object$`), "server_not_object"],
  [new RegExp(`^server ${Q}: an override can only set `), "override_extra_keys"],
  [new RegExp(`^server ${Q} conflicts with "[A-Za-z0-9_-]+"$`), "name_clash"],
  [new RegExp(`^server ${Q}: auth is only allowed in the global mcp\\.json$`), "project_auth"],
  [new RegExp(`^server ${Q}(: | needs either )`), "invalid_server"],
];
const OVERRIDE_WITHOUT_BASE = '" needs "command" or "url", or a global server to override';

function code(message) {
  if (message.startsWith('invalid server name "')) return ["invalid_name", null];
  if (message.startsWith('server "') && message.endsWith(OVERRIDE_WITHOUT_BASE)) {
    const name = message.slice('server "'.length, message.length - OVERRIDE_WITHOUT_BASE.length);
    return ["override_without_base", NAME.test(name) ? name : null];
  }
  for (const [pattern, c] of RULES) {
    const m = pattern.exec(message);
    if (m) return [c, m[1] ?? null];
  }
  // JSON.parse's SyntaxError, EISDIR, EACCES, ...
  return ["read_or_parse", null];
}

const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const lines = [];
for (const c of cases) {
  const globalPath = join(c.agentDir, "mcp.json");
  const projectPath = join(c.cwd, ".pi", "mcp.json");
  let result;
  try {
    result = loadMcpConfig({ agentDir: c.agentDir, cwd: c.cwd, projectTrusted: c.trusted });
  } catch {
    lines.push(JSON.stringify({ threw: true }));
    continue;
  }
  const servers = result.servers.map((s) => [s.name, s.scope, s.override !== undefined]);
  const warnings = result.errors.map((e) => {
    let file;
    let message;
    if (e.startsWith(`${globalPath}: `)) {
      file = "global";
      message = e.slice(globalPath.length + 2);
    } else if (e.startsWith(`${projectPath}: `)) {
      file = "project";
      message = e.slice(projectPath.length + 2);
    } else {
      return ["unknown", "unknown_file", null];
    }
    const [c, server] = code(message);
    return [file, c, server];
  });
  lines.push(JSON.stringify({ servers, warnings }));
}
process.stdout.write(lines.join("\n") + "\n");
