#!/usr/bin/env node
// Builds the native addon from source with cargo when no addon is present for this platform.
// Nothing prebuilt is downloaded. A failure is reported and does not fail the install: the
// extension then warns once inside Pi and, while filtering is on, blocks calls (fail closed).
import { existsSync, copyFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extension = join(here, "..");
const target = join(extension, "pcd_node.node");
if (existsSync(target)) process.exit(0);
const repo = join(extension, "..");
const build = join(repo, "bindings", "node", "build.sh");
if (!existsSync(build)) {
  process.stderr.write("pi-context-decisions: no addon and no source to build it from\n");
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
