//! Issue 19, "no Rust toolchain needed to install": the tarballs `cargo xtask dist` makes,
//! published to a local npm registry on loopback (verdaccio, installed from the npm registry into
//! `.cache/` by `tests/support/install-pi.sh` and started and stopped by the test), install with
//! `pi install npm:pi-context-decisions` the way Pi installs npm packages (npm pointed at that
//! registry, cargo and rustc on no folder of the PATH) in Pi 1.3.0 and 1.6.0, and a prompt then
//! runs through the extension headless (`tests/pi-harness/run.mjs` on the agent folder `pi
//! install` wrote): the addon loaded from the prebuilt platform package, tools were withheld and
//! the ledger recorded. The semantic model's package comes the same way (its files byte for byte
//! the pinned ones), and a paraphrase only the semantic signal matches gets its tool.
//!
//! The platform package is packed from the debug build the other tests use (`dist --debug`), not
//! a release build of several minutes; `cargo xtask dist` itself builds release. Every program
//! runs with a deadline, and the registry is killed when the test ends, whichever way it ends.

use pcd_embed::pinned;
use pcd_tests::{install, repo, temp_dir};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const VERSIONS: [&str; 2] = ["1.3.0", "1.6.0"];
const MAIN: &str = "pi-context-decisions";
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs `command` (in its own process group, with no standard input) until it ends or `limit`
/// passes; then the whole group is killed and the test fails, naming `what`.
fn run_bounded(mut command: Command, limit: Duration, what: &str) -> Output {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            kill_group(&child);
            let _ = child.kill();
            let _ = child.wait();
            let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
            panic!("{what}: still running after {limit:?}; killed. stderr: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Kills the process group `child` leads (it was started with `process_group(0)`).
fn kill_group(child: &Child) {
    let _ = Command::new("kill")
        .arg("-KILL")
        .arg(format!("-{}", child.id()))
        .status();
}

fn assert_ran(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}: {}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A verdaccio on 127.0.0.1 with its own storage and configuration in a scratch folder: no
/// uplinks (it never reaches another registry), anyone may read and publish. Killed on drop.
struct Registry {
    child: Child,
    url: String,
    port: u16,
    log: PathBuf,
}

impl Registry {
    fn start(dir: &Path) -> Registry {
        let entry = install("verdaccio");
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::create_dir_all(dir.join("storage")).unwrap();
        let config = dir.join("config.yaml");
        std::fs::write(
            &config,
            format!(
                "storage: {storage}\n\
                 uplinks: {{}}\n\
                 packages:\n  '**':\n    access: $all\n    publish: $all\n    unpublish: $all\n\
                 max_body_size: 300mb\n\
                 web:\n  enable: false\n\
                 log: {{ type: stdout, format: pretty, level: warn }}\n",
                storage = dir.join("storage").display()
            ),
        )
        .unwrap();
        let log = dir.join("verdaccio.log");
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(install("node"))
            .arg(entry)
            .arg("--config")
            .arg(&config)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .expect("node starts verdaccio");
        let mut registry = Registry {
            child,
            url: format!("http://127.0.0.1:{port}/"),
            port,
            log,
        };
        registry.wait_until_up(Duration::from_secs(60));
        registry
    }

    /// Waits until `GET /-/ping` answers 200.
    fn wait_until_up(&mut self, limit: Duration) {
        let start = Instant::now();
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "verdaccio ended ({status}): {}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            if let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = stream.write_all(b"GET /-/ping HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
                let mut answer = String::new();
                let _ = stream.read_to_string(&mut answer);
                if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200") {
                    return;
                }
            }
            assert!(
                start.elapsed() < limit,
                "verdaccio did not answer within {limit:?}: {}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A PATH with no folder holding `cargo` or `rustc`, led by a folder of its own with Node 22 as
/// `node` and links to `npm` and `sh` (so they stay reachable even if they shared a folder with
/// cargo).
fn path_without_cargo(scratch: &Path) -> OsString {
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let current = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&current).collect();
    let find = |program: &str| {
        dirs.iter()
            .map(|d| d.join(program))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no {program} on the PATH"))
    };
    std::os::unix::fs::symlink(install("node"), bin.join("node")).unwrap();
    std::os::unix::fs::symlink(find("npm").canonicalize().unwrap(), bin.join("npm")).unwrap();
    std::os::unix::fs::symlink(find("sh").canonicalize().unwrap(), bin.join("sh")).unwrap();
    let kept: Vec<PathBuf> = std::iter::once(bin)
        .chain(
            dirs.into_iter()
                .filter(|d| !d.join("cargo").exists() && !d.join("rustc").exists()),
        )
        .collect();
    for dir in &kept {
        for tool in ["cargo", "rustc", "rustup"] {
            assert!(!dir.join(tool).exists(), "{tool} in {}", dir.display());
        }
    }
    std::env::join_paths(kept).unwrap()
}

/// A command with cargo out of reach: the PATH above, and none of the variables cargo sets for a
/// test that name a toolchain.
fn without_cargo(program: impl AsRef<std::ffi::OsStr>, path: &OsString) -> Command {
    let mut command = Command::new(program);
    command.env("PATH", path);
    for name in [
        "CARGO",
        "RUSTC",
        "RUSTDOC",
        "RUSTUP_TOOLCHAIN",
        "CARGO_MANIFEST_DIR",
        "PI_CONTEXT_DECISIONS_ADDON",
        "PI_OFFLINE",
    ] {
        command.env_remove(name);
    }
    command
}

/// npm's settings for the registry on loopback: its address, a scratch cache and user
/// configuration (with the token verdaccio accepts from anyone), and no proxy for loopback.
fn npm_env(command: &mut Command, registry: &Registry, scratch: &Path) {
    let npmrc = scratch.join("npmrc");
    std::fs::write(
        &npmrc,
        format!("//127.0.0.1:{}/:_authToken=anyone\n", registry.port),
    )
    .unwrap();
    command
        .env("npm_config_registry", &registry.url)
        .env("npm_config_userconfig", &npmrc)
        .env("npm_config_cache", scratch.join("npm-cache"))
        .env("npm_config_noproxy", "127.0.0.1,localhost")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .env("npm_config_update_notifier", "false")
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false");
}

/// The platform package `extension/platform.cjs` (what the loader and the install script ask)
/// names for this machine.
fn platform_package() -> String {
    let script = format!(
        "process.stdout.write(require({:?}).platformPackage() ?? '')",
        repo().join("extension/platform.cjs")
    );
    let name = String::from_utf8(pcd_tests::node_eval(&script)).unwrap();
    assert!(name.starts_with("pi-context-decisions-"), "{name:?}");
    name
}

/// Unpacks a tarball into `dir` (npm's tarballs hold one folder, `package/`).
fn unpack(tarball: &Path, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(tarball)
        .arg("-C")
        .arg(dir)
        .output()
        .unwrap();
    assert_ran(&out, "tar");
    dir.join("package")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn installs_from_npm_without_cargo_and_filters_a_prompt_in_pi() {
    let scratch = temp_dir("npm-install");
    let platform = platform_package();

    // The tarballs, as `cargo xtask dist` makes them (from the debug build).
    let dist = scratch.join("dist");
    let mut command = pcd_tests::cargo_command();
    command
        .args(["run", "--quiet", "--locked", "-p", "xtask", "--", "dist"])
        .arg("--debug")
        .arg("--out")
        .arg(&dist)
        .current_dir(repo());
    let made = run_bounded(command, Duration::from_secs(25 * 60), "cargo xtask dist");
    assert_ran(&made, "cargo xtask dist --debug");
    let main_tgz = dist.join(format!("{MAIN}-{VERSION}.tgz"));
    let platform_tgz = dist.join(format!("{platform}-{VERSION}.tgz"));
    let model_tgz = dist.join(format!(
        "{}-{}.tgz",
        pinned::NPM_PACKAGE,
        pinned::NPM_PACKAGE_VERSION
    ));

    // What each tarball holds, and its notice.
    let main = unpack(&main_tgz, &scratch.join("unpacked-main"));
    let manifest = read_json(&main.join("package.json"));
    assert_eq!(manifest["optionalDependencies"][&platform], VERSION);
    assert_eq!(
        manifest["optionalDependencies"][pinned::NPM_PACKAGE],
        pinned::NPM_PACKAGE_VERSION
    );
    assert!(manifest.get("dependencies").is_none());
    for file in [
        "index.ts",
        "platform.cjs",
        "scripts/build-addon.mjs",
        "CHANGELOG.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "THIRD-PARTY-NOTICES.md",
    ] {
        assert!(main.join(file).is_file(), "{file} in the main package");
    }
    assert!(!main.join("pcd_node.node").exists());
    let notice = std::fs::read_to_string(main.join("THIRD-PARTY-NOTICES.md")).unwrap();
    assert!(notice.contains("no third-party code"), "{notice}");
    let addon_pkg = unpack(&platform_tgz, &scratch.join("unpacked-platform"));
    let manifest = read_json(&addon_pkg.join("package.json"));
    assert_eq!(manifest["name"], platform.as_str());
    assert_eq!(manifest["main"], "pcd_node.node");
    assert!(manifest["os"].is_array() && manifest["cpu"].is_array());
    assert!(addon_pkg.join("pcd_node.node").is_file());
    let notice = std::fs::read_to_string(addon_pkg.join("THIRD-PARTY-NOTICES.md")).unwrap();
    assert!(
        notice.contains("SQLite is not compiled into the addon"),
        "{notice}"
    );
    // The semantic model's inference (candle) is compiled in; its weights are not shipped.
    for compiled in [
        "- napi ",
        "- serde_json ",
        "- sha2 ",
        "- pcd-node ",
        "- candle-core ",
    ] {
        assert!(notice.contains(compiled), "{compiled} listed");
    }
    for absent in ["- libsqlite3-sys ", "- rusqlite ", "- napi-derive "] {
        assert!(!notice.contains(absent), "{absent} is not compiled in");
    }
    assert!(notice.contains("Apache License"), "licence texts included");
    assert!(notice.contains("Permission is hereby granted"), "MIT texts");

    // The model package: the pinned files, byte for byte, and where they come from.
    let model_pkg = unpack(&model_tgz, &scratch.join("unpacked-model"));
    let manifest = read_json(&model_pkg.join("package.json"));
    assert_eq!(manifest["name"], pinned::NPM_PACKAGE);
    assert!(manifest.get("main").is_none() && manifest.get("scripts").is_none());
    for file in &pinned::FILES {
        let bytes = std::fs::read(model_pkg.join(file.name)).unwrap();
        assert_eq!(bytes.len() as u64, file.bytes, "{}", file.name);
        assert_eq!(
            hex::encode(Sha256::digest(&bytes)),
            file.sha256,
            "{}",
            file.name
        );
    }
    let notice = std::fs::read_to_string(model_pkg.join("THIRD-PARTY-NOTICES.md")).unwrap();
    assert!(
        notice.contains(pinned::WHEEL_SHA256) && notice.contains("Apache-2.0"),
        "{notice}"
    );
    assert!(model_pkg.join("LICENSE-APACHE").is_file());

    // The registry, with the three packages published.
    let path = path_without_cargo(&scratch);
    let registry = Registry::start(&scratch.join("registry"));
    for tarball in [&platform_tgz, &model_tgz, &main_tgz] {
        let mut publish = without_cargo("npm", &path);
        publish.arg("publish").arg(tarball).current_dir(&scratch);
        npm_env(&mut publish, &registry, &scratch);
        let out = run_bounded(publish, Duration::from_secs(120), "npm publish");
        assert_ran(&out, &format!("npm publish {}", tarball.display()));
    }

    let toolbox = repo().join("tests/e2e/fixtures/toolbox/index.ts");
    let deploy = repo().join("tests/e2e/fixtures/deploy/index.ts");
    for version in VERSIONS {
        let pi = install(version);
        let agent = scratch.join(format!("agent-{version}"));
        std::fs::create_dir_all(&agent).unwrap();
        // `pi install npm:pi-context-decisions`, as a person would: Pi runs npm, which runs the
        // package's install script; cargo is nowhere on the PATH.
        let mut pi_install = without_cargo(install("node"), &path);
        pi_install
            .arg(pi.join("dist/bundle/cli.js"))
            .args(["install", &format!("npm:{MAIN}")])
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .current_dir(&scratch);
        npm_env(&mut pi_install, &registry, &scratch);
        let out = run_bounded(pi_install, Duration::from_secs(300), "pi install");
        assert_ran(&out, &format!("pi install on Pi {version}"));
        let modules = agent.join("npm/node_modules");
        assert!(modules.join(MAIN).join("index.ts").is_file(), "{version}");
        assert!(
            modules.join(&platform).join("pcd_node.node").is_file(),
            "{version}: npm installed the platform package"
        );
        assert!(
            modules
                .join(pinned::NPM_PACKAGE)
                .join("model.safetensors")
                .is_file(),
            "{version}: npm installed the model package"
        );
        assert!(
            !modules.join(MAIN).join("pcd_node.node").exists(),
            "{version}: nothing was built on install"
        );
        let settings = read_json(&agent.join("settings.json"));
        assert!(
            settings["packages"]
                .to_string()
                .contains("npm:pi-context-decisions"),
            "{version}: {settings}"
        );

        // A prompt through the installed extension, headless, in that agent folder.
        let scenario = json!({
            "description": "installed from the local registry with pi install",
            "ui": "tui",
            "files": {
                "agent/pi-context-decisions/settings.json": {
                    "tools": { "enabled": true, "mode": "tools", "cadence": "prompt" },
                    "decision": { "provider": "embedded" }
                }
            },
            "extensions": [{ "path": toolbox, "via": "path" }, { "path": deploy, "via": "path" }],
            "steps": [{
                "prompt": "What is the weather forecast for Lisbon?",
                "responses": [
                    { "toolCalls": [{ "name": "forecast_weather", "arguments": { "text": "Lisbon" } }] },
                    { "text": "done" }
                ]
            }, {
                // Only the semantic signal makes deploy_status available for these words (the
                // lexical scorer withholds it: node_addon.rs), so this shows the model came
                // with pi install.
                "prompt": "Is the preview deployment finished?",
                "responses": [
                    { "toolCalls": [{ "name": "deploy_status", "arguments": { "text": "x" } }] },
                    { "text": "done" }
                ]
            }, { "command": "/decisions", "keys": ["\u{1b}"] }]
        });
        let file = scratch.join(format!("scenario-{version}.json"));
        std::fs::write(&file, scenario.to_string()).unwrap();
        let mut harness = without_cargo(install("node"), &path);
        // The model comes from npm alone: no folder named by the environment, a vector cache of
        // its own, and a bound that waits for the model loading at Pi's start.
        harness
            .env_remove("PCD_MODEL_DIR")
            .env(
                "PCD_VECTOR_CACHE",
                scratch.join(format!("vectors-{version}.bin")),
            )
            .env("PCD_SEMANTIC_WAIT_MS", "60000")
            .arg(repo().join("tests/pi-harness/run.mjs"))
            .arg(&file)
            .arg("--pi")
            .arg(&pi)
            .arg("--agent-dir")
            .arg(&agent);
        let out = run_bounded(harness, Duration::from_secs(180), "the Pi harness");
        assert_ran(&out, &format!("the harness on Pi {version}"));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        for key in ["errors", "extensionErrors", "loadErrors"] {
            assert_eq!(
                report[key].as_array().map_or(0, Vec::len),
                0,
                "{version}: {key}: {}",
                report[key]
            );
        }
        let loaded = report["loadedExtensions"].to_string();
        assert!(
            loaded.contains("npm/node_modules/pi-context-decisions/index.ts"),
            "{version}: {loaded}"
        );
        // Pi's startup list (its own labelling) names the package, not its folder.
        let labels = &report["loadedExtensions"][0]["labels"];
        assert!(
            labels
                .as_array()
                .is_some_and(|l| l.iter().any(|l| l == "pi-context-decisions")),
            "{version}: {labels}"
        );
        assert!(
            report["notifications"].is_array(),
            "{version}: notifications recorded"
        );
        let notices = report["notifications"].to_string();
        assert!(
            !notices.contains("could not load its native addon"),
            "{version}: {notices}"
        );
        let requests: Vec<&Value> = report["requests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["step"] == 0)
            .collect();
        assert!(!requests.is_empty(), "{version}");
        for request in requests {
            let tools = request["tools"].to_string();
            assert!(tools.contains("\"forecast_weather\""), "{version}: {tools}");
            assert!(
                !tools.contains("\"bar_chart\""),
                "{version}: withheld: {tools}"
            );
        }
        for (name, step) in [("forecast_weather", 0), ("deploy_status", 1)] {
            let ran = report["toolCalls"].as_array().unwrap().iter().any(|c| {
                c["name"] == name && c["isError"] != true && c["step"].as_u64() == Some(step)
            });
            assert!(ran, "{version}: {name}: {}", report["toolCalls"]);
        }
        // The dialog's first screen says which scorer decided, and the model's folder (the npm
        // package; the line may wrap).
        let shown = report["steps"][2]["screens"][0]["lines"].to_string();
        assert!(
            shown.contains("Scored by: the built-in scorer with the semantic model")
                && shown.contains("pi-context-decisions-model-all-minilm-l6-v2."),
            "{version}: {shown}"
        );
        let entries = report["customEntries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["customType"] == pcd_ledger::CUSTOM_TYPE)
            .count();
        assert!(entries >= 1, "{version}: the ledger recorded the round");
    }
    drop(registry);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The install script (`scripts/build-addon.mjs`, which npm runs) in the layout npm installs:
/// with the prebuilt platform package next to it, it builds nothing even when cargo and source
/// are there; without it, it builds from source; with neither source nor cargo it succeeds and
/// says nothing.
#[test]
fn the_install_script_leaves_cargo_alone_when_the_prebuilt_addon_is_installed() {
    let dir = temp_dir("install-script");
    let modules = dir.join("node_modules");
    let package = modules.join(MAIN);
    std::fs::create_dir_all(package.join("scripts")).unwrap();
    for file in ["platform.cjs", "scripts/build-addon.mjs"] {
        std::fs::copy(repo().join("extension").join(file), package.join(file)).unwrap();
    }
    // The source a git install would have: a build.sh that only leaves a mark (and fails, so
    // nothing is copied), found next to the package as the script looks for it.
    let build = modules.join("bindings/node/build.sh");
    std::fs::create_dir_all(build.parent().unwrap()).unwrap();
    let marker = dir.join("built");
    std::fs::write(&build, "touch \"$MARKER\"\nexit 1\n").unwrap();
    // A cargo on the PATH (never run: the script only looks for it).
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("cargo"), "#!/bin/sh\nexit 1\n").unwrap();
    let prebuilt = modules.join(platform_package());
    std::fs::create_dir_all(&prebuilt).unwrap();
    std::fs::write(
        prebuilt.join("package.json"),
        json!({ "name": platform_package(), "version": VERSION, "main": "pcd_node.node" })
            .to_string(),
    )
    .unwrap();
    std::fs::write(prebuilt.join("pcd_node.node"), "not loaded by the script").unwrap();

    let run = |path: &OsString| {
        let mut command = Command::new(install("node"));
        command
            .arg(package.join("scripts/build-addon.mjs"))
            .env("PATH", path)
            .env("MARKER", &marker);
        run_bounded(command, Duration::from_secs(60), "build-addon.mjs")
    };
    let system = std::env::var_os("PATH").unwrap_or_default();
    let with_cargo =
        std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(&system)))
            .unwrap();

    let out = run(&with_cargo);
    assert_ran(&out, "with the prebuilt package");
    assert!(!marker.exists(), "cargo was not asked to build");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    std::fs::remove_dir_all(&prebuilt).unwrap();
    let out = run(&with_cargo);
    assert_ran(&out, "without the prebuilt package");
    assert!(marker.exists(), "it built from source");
    std::fs::remove_file(&marker).unwrap();

    std::fs::remove_dir_all(modules.join("bindings")).unwrap();
    let no_cargo = path_without_cargo(&dir.join("no-cargo"));
    let out = run(&no_cargo);
    assert_ran(&out, "without source or cargo");
    assert!(!marker.exists());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!package.join("pcd_node.node").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The extension's loader, run by Node on `index.ts` itself (types stripped) with every addon it
/// opens recorded: a build from source next to the extension wins over the prebuilt platform
/// package (developers run their own build); without one, or when it does not load, the
/// prebuilt package is loaded.
#[test]
fn the_loader_prefers_a_build_from_source_then_the_prebuilt_package() {
    let dir = temp_dir("loader-order");
    let package = dir.join("extension");
    let prebuilt = package.join("node_modules").join(platform_package());
    std::fs::create_dir_all(&prebuilt).unwrap();
    for file in ["index.ts", "platform.cjs", "package.json"] {
        std::fs::copy(repo().join("extension").join(file), package.join(file)).unwrap();
    }
    std::fs::copy(pcd_tests::addon(), prebuilt.join("pcd_node.node")).unwrap();
    std::fs::write(
        prebuilt.join("package.json"),
        json!({ "name": platform_package(), "version": VERSION, "main": "pcd_node.node" })
            .to_string(),
    )
    .unwrap();
    // Records each addon Node opens and whether it loaded, then starts the extension with a
    // stand-in for Pi whose every method does nothing.
    let probe = dir.join("probe.mjs");
    std::fs::write(
        &probe,
        r#"const opened = [];
const dlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
	try {
		const result = dlopen.call(this, module, filename, ...rest);
		opened.push({ filename, loaded: true });
		return result;
	} catch (error) {
		opened.push({ filename, loaded: false });
		throw error;
	}
};
const pi = new Proxy({}, { get: () => () => undefined });
const extension = await import(process.argv[2]);
extension.default(pi);
process.stdout.write(JSON.stringify(opened));
"#,
    )
    .unwrap();
    let opened = || -> Vec<(PathBuf, bool)> {
        let mut command = Command::new(install("node"));
        command
            .arg("--experimental-strip-types")
            .arg("--no-warnings")
            .arg(&probe)
            .arg(package.join("index.ts"))
            .env_remove("PI_CONTEXT_DECISIONS_ADDON");
        let out = run_bounded(command, Duration::from_secs(60), "the loader probe");
        assert_ran(&out, "the loader probe");
        let list: Value = serde_json::from_slice(&out.stdout).unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    PathBuf::from(o["filename"].as_str().unwrap()),
                    o["loaded"] == true,
                )
            })
            .collect()
    };
    let prebuilt_addon = prebuilt.join("pcd_node.node");
    let local = package.join("pcd_node.node");
    assert_eq!(
        opened(),
        vec![(prebuilt_addon.clone(), true)],
        "no build from source"
    );
    std::fs::copy(pcd_tests::addon(), &local).unwrap();
    assert_eq!(
        opened(),
        vec![(local.clone(), true)],
        "a build from source wins"
    );
    std::fs::write(&local, "not a shared library").unwrap();
    assert_eq!(
        opened(),
        vec![(local, false), (prebuilt_addon, true)],
        "a build that does not load gives way to the prebuilt package"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
