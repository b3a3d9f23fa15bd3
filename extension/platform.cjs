// Which prebuilt addon package fits this process: `pi-context-decisions-<platform>-<arch>` plus,
// on Linux, `-gnu` or `-musl` for the C library Node runs on (the scheme napi-rs packages use).
// The extension's loader (index.ts) and its install script (scripts/build-addon.mjs) both ask
// here, so they never disagree. CommonJS, so both can load it synchronously; no dependencies.
"use strict";

const { readFileSync } = require("node:fs");

// The platforms an addon package may exist for. The settings store locks with flock, so only
// Unix-like systems are supported: Linux (glibc or musl) and macOS, on x64 and arm64.
const SUPPORTED = {
	linux: ["x64", "arm64"],
	darwin: ["x64", "arm64"],
};

// Whether this Linux process runs on musl rather than glibc. Node's diagnostic report names the
// glibc version it was built against and runs on (`header.glibcVersionRuntime`) and is absent on
// musl builds; when no report can be made, the system's `ldd` says which C library it belongs to.
function onMusl(proc) {
	try {
		const report = proc.report;
		if (report && typeof report.getReport === "function") {
			// The network part of a report can take seconds (DNS); it is not needed here. The
			// host's own setting is put back.
			const before = report.excludeNetwork;
			report.excludeNetwork = true;
			let header;
			try {
				header = report.getReport().header;
			} finally {
				report.excludeNetwork = before;
			}
			if (header) return !header.glibcVersionRuntime;
		}
	} catch {
		// No report: ask ldd below.
	}
	try {
		return readFileSync("/usr/bin/ldd", "latin1").includes("musl");
	} catch {
		return false;
	}
}

// The name of the addon package for `proc` (a process: platform, arch, report), or undefined on a
// platform none is built for.
function platformPackage(proc = process) {
	const arches = SUPPORTED[proc.platform];
	if (!arches || !arches.includes(proc.arch)) return undefined;
	const base = `pi-context-decisions-${proc.platform}-${proc.arch}`;
	if (proc.platform !== "linux") return base;
	return `${base}-${onMusl(proc) ? "musl" : "gnu"}`;
}

module.exports = { platformPackage, SUPPORTED };
