#!/usr/bin/env node
// The package's install script. It builds the native addon from source with cargo only when
// nothing else can serve: not when an addon is already next to the extension, and not when npm
// installed the prebuilt addon package for this platform (an optional dependency of the
// published package). Nothing is downloaded. Without source to build from (the published
// package carries none) it does nothing and says nothing; a failed build is reported. It always
// succeeds: without an addon the extension warns once inside Pi and, while filtering is on,
// blocks calls (fail closed).
import { existsSync, copyFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extension = join(here, "..");
const target = join(extension, "pcd_node.node");
if (existsSync(target)) process.exit(0);

// The prebuilt addon package for this platform, when npm installed it.
const require = createRequire(import.meta.url);
try {
	const { platformPackage } = require(join(extension, "platform.cjs"));
	const name = platformPackage();
	if (name && require.resolve(name)) process.exit(0);
} catch {
	// Not installed, or no package for this platform: build from source if there is any.
}

const repo = join(extension, "..");
const build = join(repo, "bindings", "node", "build.sh");
if (!existsSync(build)) process.exit(0);
const onPath = (program) =>
	(process.env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, program)));
if (!onPath("cargo")) {
	process.stderr.write("pi-context-decisions: no prebuilt addon for this platform and no cargo to build one\n");
	process.exit(0);
}
// PI_CONTEXT_DECISIONS_BUILD=debug builds the debug profile (the tests reuse their own build).
const args = process.env.PI_CONTEXT_DECISIONS_BUILD === "debug" ? [build, "--debug"] : [build];
const run = spawnSync("bash", args, { stdio: ["ignore", "pipe", "inherit"] });
if (run.status !== 0) {
	process.stderr.write("pi-context-decisions: building the addon with cargo failed\n");
	process.exit(0);
}
copyFileSync(join(repo, "bindings", "node", "pcd_node.node"), target);
