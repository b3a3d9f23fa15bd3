//! The layering rules that a build cannot check by itself: the Node binding reaches the crates
//! below the facade only through it, and the Node addon is built with the semantic model (its
//! default `semantic` feature) so rounds inside Pi can use the semantic signal.

use pcd_tests::repo;

/// The names of the `[dependencies]` of a `Cargo.toml`.
fn dependencies(manifest: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(manifest)).unwrap();
    let mut names = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                names.push(name.trim().trim_end_matches(".workspace").to_owned());
            }
        }
    }
    names
}

#[test]
fn the_binding_names_no_workspace_crate_but_the_facade() {
    let names = dependencies("bindings/node/Cargo.toml");
    assert!(names.iter().any(|n| n == "context-decisions"), "{names:?}");
    let lower: Vec<&String> = names.iter().filter(|n| n.starts_with("pcd-")).collect();
    assert!(lower.is_empty(), "the binding names {lower:?}");
}

/// Runs cargo in the repository with `args` (offline: everything is in the lock file).
fn cargo(args: &[&str]) -> std::process::Output {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    std::process::Command::new(program)
        .args(args)
        .current_dir(repo())
        .output()
        .expect("cargo runs")
}

/// Whether `package`'s own build (as `cargo build -p PACKAGE` resolves it) includes `dependency`.
fn builds_with(package: &str, dependency: &str) -> bool {
    // `cargo tree -i` fails when nothing in the tree depends on the package.
    cargo(&[
        "tree",
        "--offline",
        "-e",
        "normal",
        "-p",
        package,
        "-i",
        dependency,
    ])
    .status
    .success()
}

#[test]
fn the_addon_and_the_program_are_built_with_the_semantic_model() {
    assert!(builds_with("pcd-node", "candle-core"), "the addon has it");
    assert!(builds_with("pcd-cli", "candle-core"), "the program has it");
    // It is the addon's own default feature, not something another package happens to turn on.
    let manifest = std::fs::read_to_string(repo().join("bindings/node/Cargo.toml")).unwrap();
    assert!(
        manifest.contains("default = [\"semantic\"]")
            && manifest.contains("semantic = [\"context-decisions/semantic\"]"),
        "bindings/node/Cargo.toml"
    );
}

#[test]
fn neither_the_program_nor_the_addon_compiles_sqlite() {
    for package in ["context-decisions", "pcd-cli", "pcd-node"] {
        assert!(!builds_with(package, "libsqlite3-sys"), "{package}");
    }
    assert!(
        builds_with("xtask", "libsqlite3-sys"),
        "the audits' mirror has it"
    );
}

#[test]
fn the_session_is_split_by_responsibility_into_files_that_say_what_they_own() {
    let dir = repo().join("crates/context-decisions/src");
    let mut files = vec![dir.join("session.rs")];
    for entry in std::fs::read_dir(dir.join("session")).unwrap() {
        files.push(entry.unwrap().path());
    }
    assert!(files.len() >= 6, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = text.lines().count();
        assert!(lines <= 620, "{} has {lines} lines", file.display());
        assert!(
            text.starts_with("//!"),
            "{} does not say what it owns",
            file.display()
        );
    }
}

/// Every package `package`'s own build compiles (as `cargo tree -e normal -p PACKAGE` resolves
/// it, with its own features only), by name.
fn tree(package: &str) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "-p",
            package,
        ])
        .current_dir(repo())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo tree -p {package} failed");
    let mut names: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The workspace's packages and the names of their declared normal dependencies, from `cargo
/// metadata`.
fn declared_dependencies() -> Vec<(String, Vec<String>)> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .current_dir(repo())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo metadata failed");
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

/// Issue 33: the program is its own crate, so the addon builds no command line, no log
/// formatter for a terminal and no chart; the facade and the evaluation are libraries the
/// program calls.
#[test]
fn the_addon_links_no_command_line_terminal_logger_or_chart() {
    let addon = tree("pcd-node");
    assert!(addon.iter().any(|n| n == "context-decisions"), "{addon:?}");
    for name in &addon {
        assert!(
            !(name.starts_with("clap")
                || name == "tracing-subscriber"
                || name.contains("svg")
                || name == "pcd-cli"
                || name == "pcd-eval"),
            "the addon's build compiles {name}"
        );
    }
    let declared = declared_dependencies();
    let of = |package: &str| {
        declared
            .iter()
            .find(|(name, _)| name == package)
            .map(|(_, deps)| deps.clone())
            .unwrap_or_else(|| panic!("no package {package}"))
    };
    for library in ["context-decisions", "pcd-eval"] {
        let deps = of(library);
        for banned in ["tracing-subscriber", "pcd-cli"] {
            assert!(
                !deps.iter().any(|d| d == banned),
                "{library} names {banned}"
            );
        }
    }
    assert!(!of("context-decisions").iter().any(|d| d == "clap"));
    let program = of("pcd-cli");
    assert!(program.iter().any(|d| d == "context-decisions"));
    assert!(program.iter().any(|d| d == "pcd-eval"));
}

/// The sans-IO core (`model`, `picker`, `gate`, `ui-text`) compiles no crate that reads files,
/// opens sockets or calls the C library: neither by its own declaration (`cargo metadata`) nor
/// through anything below it (`cargo tree`, its own features).
#[test]
fn no_core_crate_depends_on_an_io_crate() {
    const IO: [&str; 9] = [
        "pcd-bounded-read",
        "pcd-config-reader",
        "pcd-embed",
        "context-decisions",
        "libc",
        "rusqlite",
        "libsqlite3-sys",
        "ureq",
        "tracing-subscriber",
    ];
    let declared = declared_dependencies();
    for core in ["pcd-model", "pcd-picker", "pcd-gate", "pcd-ui-text"] {
        let (_, deps) = declared.iter().find(|(n, _)| n == core).unwrap();
        let built = tree(core);
        for io in IO {
            assert!(!deps.iter().any(|d| d == io), "{core} declares {io}");
            assert!(
                !built.iter().any(|d| d == io),
                "{core}'s build compiles {io}"
            );
        }
    }
}

/// Issue 19: the repository root and `extension/` are both Pi packages by Pi's rules
/// (`docs/packages.md` in Pi's npm package): named `pi-context-decisions`, the `pi-package`
/// keyword, a `pi` manifest naming the extension, the host package as an optional `"*"` peer only
/// (so `npm install` never pulls a second Pi), no prebuilt platform packages (those are the
/// published package's, see `npm_install.rs`), and a `CHANGELOG.md` whose newest heading is the
/// package's version in Pi's format.
#[test]
fn both_package_roots_follow_pis_package_rules() {
    for root in [repo(), repo().join("extension")] {
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("package.json")).unwrap())
                .unwrap();
        let at = root.display();
        assert_eq!(manifest["name"], "pi-context-decisions", "{at}");
        assert!(
            manifest["keywords"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "pi-package"),
            "{at}"
        );
        for extension in manifest["pi"]["extensions"].as_array().unwrap() {
            assert!(root.join(extension.as_str().unwrap()).is_file(), "{at}");
        }
        // Pi provides both at run time (its extension loader aliases them): the dialog draws
        // with pi-tui's components.
        for host in ["@earendil-works/pi-coding-agent", "@earendil-works/pi-tui"] {
            assert_eq!(manifest["peerDependencies"][host], "*", "{at}");
            assert_eq!(
                manifest["peerDependenciesMeta"][host]["optional"], true,
                "{at}"
            );
        }
        for (name, range) in manifest["peerDependencies"].as_object().unwrap() {
            assert!(name.starts_with("@earendil-works/pi-"), "{at}: {name}");
            assert_eq!(range, "*", "{at}: {name}");
        }
        assert!(manifest.get("dependencies").is_none(), "{at}");
        // A source install (path or git) builds the addon; only the published package, whose
        // manifest `cargo xtask dist` writes, names the prebuilt platform packages (an optional
        // dependency npm cannot find would fail a git install).
        assert!(manifest.get("optionalDependencies").is_none(), "{at}");
        let changelog = std::fs::read_to_string(root.join("CHANGELOG.md")).unwrap();
        // The newest release; changes not released yet sit above it under `## [Unreleased]`.
        let newest = changelog
            .lines()
            .find(|l| l.starts_with("## ") && !l.starts_with("## [Unreleased]"))
            .unwrap_or_default();
        let version = manifest["version"].as_str().unwrap();
        assert!(
            newest.starts_with(&format!("## [{version}]")),
            "{at}: {newest}"
        );
    }
}
