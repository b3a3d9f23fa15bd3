//! The extension name derived from Pi's public `sourceInfo`. Pi has no display name for an
//! extension, so the name comes from its package source or file name; paths are used only here,
//! to derive it, and never leave this function except as that last component.

use crate::tool::{SourceInfo, SourceOrigin};

/// File endings Pi loads as extension entry files.
const SCRIPT_EXTENSIONS: &[&str] = &["ts", "js", "mjs", "cjs", "mts", "cts", "tsx", "jsx"];

/// The extension name for a tool's provenance, or `None` when the provenance exposes no usable
/// name (built-in provenance, unknown or empty synthetic paths, empty sources). An SDK host tool
/// (`customTools`, `<sdk:NAME>`) is external and filtered like an extension's, so its synthetic
/// path names it as an inline factory's does: a group of its own in `mcp` mode.
///
/// | source | name |
/// |---|---|
/// | `npm:@acme/pi-web@2.0.0` | `@acme/pi-web` |
/// | `git:github.com/me/pi-bar@v2`, `https://…/pi-bar.git`, `ssh://…`, `git@host:me/pi-bar@v2` | `pi-bar` |
/// | a local package path (`./pkgs/pi-local`) | its last component |
/// | `.`, `..` or a path ending in them | the last component of the resolved `baseDir` |
/// | top-level loose files (`auto`, `local`, `cli`: `notes.ts`, `notes/index.ts`) | `notes` |
/// | `inline` with `<inline:NAME>` | `NAME`; `<inline:2>` → `inline-2` |
/// | `sdk` with `<sdk:NAME>` (an SDK host tool) | `NAME` |
/// | `builtin`, `<inline:>`, `<sdk:>`, other synthetic paths | none |
pub fn extension_name(info: &SourceInfo) -> Option<String> {
    if info.is_builtin() {
        return None;
    }
    let source = info.source.trim();
    if info.path.starts_with('<') {
        return synthetic_name(&info.path);
    }
    if let Some(spec) = source.strip_prefix("npm:") {
        return npm_name(spec);
    }
    if is_git_source(source) {
        return git_name(source);
    }
    // A top-level extension is a loose file (auto-discovered, a settings `extensions` entry, or
    // `additionalExtensionPaths`/`-e`, which Pi labels `cli`): it is named after its file,
    // whatever the source word says.
    let top_level_file = info.origin == Some(SourceOrigin::TopLevel)
        || (info.origin.is_none() && matches!(source, "auto" | "local" | "cli"));
    if top_level_file {
        return file_name(&info.path);
    }
    if source.is_empty() || matches!(source, "inline" | "sdk") {
        return None;
    }
    local_package_name(source, info.base_dir.as_deref())
}

/// `<inline:NAME>` → `NAME`, `<inline:2>` → `inline-2`, `<sdk:NAME>` → `NAME`; other synthetic
/// paths have no name.
fn synthetic_name(path: &str) -> Option<String> {
    if let Some(host_tool) = path.strip_prefix("<sdk:") {
        return non_empty(host_tool.strip_suffix('>')?);
    }
    let inner = path.strip_prefix("<inline:")?.strip_suffix('>')?;
    if inner.is_empty() {
        return None;
    }
    if inner.bytes().all(|b| b.is_ascii_digit()) {
        return Some(format!("inline-{inner}"));
    }
    Some(inner.to_owned())
}

/// `@scope/name@range` → `@scope/name`, `name@range` → `name`.
fn npm_name(spec: &str) -> Option<String> {
    let spec = spec.trim();
    let name = if let Some(rest) = spec.strip_prefix('@') {
        match rest.find('/') {
            Some(slash) => {
                let after = &rest[slash + 1..];
                let end = after.find('@').map_or(spec.len(), |at| 1 + slash + 1 + at);
                &spec[..end]
            }
            None => spec,
        }
    } else {
        spec.split('@').next().unwrap_or_default()
    };
    non_empty(name)
}

fn is_git_source(source: &str) -> bool {
    const PREFIXES: &[&str] = &["git:", "git+", "git://", "ssh://", "http://", "https://"];
    if PREFIXES.iter().any(|p| source.starts_with(p)) {
        return true;
    }
    // scp-like `user@host:path`
    match (source.find('@'), source.find(':'), source.find('/')) {
        (Some(at), Some(colon), slash) => at < colon && slash.is_none_or(|s| colon < s),
        _ => false,
    }
}

/// The repository name of a git source in any of its spellings.
fn git_name(source: &str) -> Option<String> {
    let mut rest = source;
    let url = rest.find("://");
    if let Some(i) = url {
        rest = &rest[i + 3..];
    } else if let Some(r) = rest.strip_prefix("git:") {
        rest = r;
    }
    rest = rest.split(['#', '?']).next().unwrap_or_default();
    if url.is_some() {
        // A URL's authority runs to the first `/`; its user information (`user:token@`, which
        // may hold a password) ends at the authority's last `@` and is never part of the name.
        let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
        if let Some(at) = authority.rfind('@') {
            rest = &rest[at + 1..];
        }
    } else {
        // scp-like `user@host:path`: a `user@` before the host, not a ref.
        let host_end = rest.find(['/', ':']).unwrap_or(rest.len());
        if let Some(at) = rest[..host_end].find('@') {
            rest = &rest[at + 1..];
        }
    }
    // `@ref` after the repository path.
    if let Some(at) = rest.find('@') {
        rest = &rest[..at];
    }
    let last = rest
        .trim_end_matches(['/', ':'])
        .rsplit(['/', ':'])
        .next()
        .unwrap_or_default();
    non_empty(last.strip_suffix(".git").unwrap_or(last))
}

/// A loose extension file: `notes.ts` → `notes`, `notes/index.ts` → `notes`.
fn file_name(path: &str) -> Option<String> {
    let mut parts = path.trim_end_matches(['/', '\\']).rsplit(['/', '\\']);
    let last = parts.next().unwrap_or_default();
    match strip_script_extension(last) {
        Some("index") => parts.next().and_then(non_empty),
        Some(stem) => non_empty(stem),
        None => non_empty(last),
    }
}

/// A local package source: its last component, or the resolved directory's when the source is
/// `.`, `..` or ends in them.
fn local_package_name(source: &str, base_dir: Option<&str>) -> Option<String> {
    let trimmed = source.trim_end_matches(['/', '\\']);
    let last = trimmed.rsplit(['/', '\\']).next().unwrap_or_default();
    if matches!(last, "" | "." | ".." | "~") {
        return base_dir.and_then(|dir| {
            let dir = dir.trim_end_matches(['/', '\\']);
            let base = dir.rsplit(['/', '\\']).next().unwrap_or_default();
            if matches!(base, "" | "." | "..") {
                None
            } else {
                Some(base.to_owned())
            }
        });
    }
    file_name(trimmed)
}

fn strip_script_extension(file: &str) -> Option<&str> {
    let (stem, ext) = file.rsplit_once('.')?;
    (!stem.is_empty() && SCRIPT_EXTENSIONS.contains(&ext)).then_some(stem)
}

/// The name without surrounding whitespace; a name that is only whitespace (a file ` .ts`, a
/// folder ` `) is still a name, kept as it is (it gets a hashed key), so it cannot escape
/// group-mode filtering as a tool with no usable provenance would.
fn non_empty(s: &str) -> Option<String> {
    let trimmed = s.trim();
    let name = if trimmed.is_empty() { s } else { trimmed };
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::SourceScope;

    fn info(path: &str, source: &str, origin: &str, base_dir: Option<&str>) -> SourceInfo {
        SourceInfo {
            path: path.to_owned(),
            source: source.to_owned(),
            scope: Some(SourceScope::User),
            origin: Some(SourceOrigin::parse(origin)),
            base_dir: base_dir.map(str::to_owned),
        }
    }

    /// path, source, origin, baseDir, expected name.
    type Case<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, Option<&'a str>);

    /// Every row of the contracts' source table, and every example the spec gives.
    #[test]
    fn names_for_every_source_form() {
        let cases: &[Case] = &[
            // npm
            (
                "/a/npm/node_modules/@acme/pi-web/index.ts",
                "npm:@acme/pi-web@2.0.0",
                "package",
                Some("/a/npm/node_modules/@acme/pi-web"),
                Some("@acme/pi-web"),
            ),
            (
                "/a/npm/node_modules/pi-foo/index.ts",
                "npm:pi-foo@^1.2",
                "package",
                None,
                Some("pi-foo"),
            ),
            (
                "/a/npm/node_modules/pi-foo/index.ts",
                "npm:pi-foo",
                "package",
                None,
                Some("pi-foo"),
            ),
            (
                "/a/x.ts",
                "npm:@acme/pi-web",
                "package",
                None,
                Some("@acme/pi-web"),
            ),
            // git, every spelling
            (
                "/a/git/github.com/me/pi-bar/index.ts",
                "git:github.com/me/pi-bar@v2",
                "package",
                Some("/a/git/github.com/me/pi-bar"),
                Some("pi-bar"),
            ),
            (
                "/x",
                "git:github.com/me/pi-bar",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "git:github.com/me/pi-bar@feature/x",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "https://github.com/me/pi-bar",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "https://github.com/me/pi-bar.git#v2",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "https://github.com/me/pi-bar/",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "ssh://git@github.com/me/pi-bar.git",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "ssh://git@github.com:22/me/pi-bar.git",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "git@github.com:me/pi-bar@v2",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "git+https://github.com/me/pi-bar.git",
                "package",
                None,
                Some("pi-bar"),
            ),
            (
                "/x",
                "git:git@github.com:me/pi-bar",
                "package",
                None,
                Some("pi-bar"),
            ),
            // local package paths
            (
                "/w/local-pkgs/pi-local/index.ts",
                "./local-pkgs/pi-local",
                "package",
                Some("/w/local-pkgs/pi-local"),
                Some("pi-local"),
            ),
            (
                "/w/local-pkgs/pi-local/index.ts",
                "./local-pkgs/pi-local/",
                "package",
                Some("/w/local-pkgs/pi-local"),
                Some("pi-local"),
            ),
            (
                "/w/proj/index.ts",
                ".",
                "package",
                Some("/w/proj"),
                Some("proj"),
            ),
            ("/w/index.ts", "..", "package", Some("/w"), Some("w")),
            (
                "/w/up/index.ts",
                "../pkgs/..",
                "package",
                Some("/w/up"),
                Some("up"),
            ),
            (
                "/w/proj/index.ts",
                "./",
                "package",
                Some("/w/proj/"),
                Some("proj"),
            ),
            ("/w/proj/index.ts", ".", "package", None, None),
            (
                "C:\\w\\pkgs\\pi-win\\index.ts",
                "C:\\w\\pkgs\\pi-win",
                "package",
                None,
                Some("pi-win"),
            ),
            // CLI -e X (temporary): the raw string
            (
                "/w/ext/notes.ts",
                "./ext/notes.ts",
                "package",
                Some("/w/ext"),
                Some("notes"),
            ),
            (
                "/w/ext/todo/index.ts",
                "./ext/todo/index.ts",
                "package",
                Some("/w/ext/todo"),
                Some("todo"),
            ),
            // auto-discovered and settings `extensions` entries
            (
                "/home/u/.pi/agent/extensions/notes.ts",
                "auto",
                "top-level",
                Some("/home/u/.pi/agent"),
                Some("notes"),
            ),
            (
                "/home/u/.pi/agent/extensions/notes/index.ts",
                "auto",
                "top-level",
                Some("/home/u/.pi/agent"),
                Some("notes"),
            ),
            (
                "/w/.pi/extensions/notes.js",
                "auto",
                "top-level",
                Some("/w/.pi"),
                Some("notes"),
            ),
            ("/w/my/thing.mjs", "local", "top-level", None, Some("thing")),
            // additionalExtensionPaths / -e files, as a headless Pi 1.6.0 labels them
            (
                "/w/e2e/fixtures/toolbox/index.ts",
                "cli",
                "top-level",
                None,
                Some("toolbox"),
            ),
            (
                "/w/e2e/gatekeeper.ts",
                "cli",
                "top-level",
                None,
                Some("gatekeeper"),
            ),
            // SDK
            (
                "<inline:codemode>",
                "inline",
                "top-level",
                None,
                Some("codemode"),
            ),
            ("<inline:2>", "inline", "top-level", None, Some("inline-2")),
            ("<inline:>", "inline", "top-level", None, None),
            // an SDK host tool (`customTools`) is named by its synthetic path (issue 30, item 7)
            ("<sdk:my_tool>", "sdk", "top-level", None, Some("my_tool")),
            ("<sdk:>", "sdk", "top-level", None, None),
            ("<other:x>", "sdk", "top-level", None, None),
            // built-in provenance is never an extension
            ("builtin:read", "builtin", "top-level", None, None),
            ("builtin:mcp", "builtin", "top-level", None, None),
            // a local package whose settings string is literally `builtin` is an extension
            (
                "/w/builtin/index.ts",
                "builtin",
                "package",
                Some("/w/builtin"),
                Some("builtin"),
            ),
            // nothing usable
            ("", "", "package", None, None),
            // a name that is only whitespace is still a name (never left unfiltered)
            (
                "/a/extensions/ /index.ts",
                "auto",
                "top-level",
                Some("/a"),
                Some(" "),
            ),
            (
                "/a/extensions/\u{3000}.ts",
                "auto",
                "top-level",
                None,
                Some("\u{3000}"),
            ),
        ];
        for (path, source, origin, base_dir, expected) in cases {
            let got = extension_name(&info(path, source, origin, *base_dir));
            assert_eq!(got.as_deref(), *expected, "path={path} source={source}");
        }
    }

    /// A git URL's credentials (`https://user:token@host/…`) are never the extension's name:
    /// the name is a label that decision requests, `groups`, `/decisions` views, ledger group
    /// keys and recordings carry.
    #[test]
    fn a_git_url_with_a_password_is_named_after_its_repository() {
        const TOKEN: &str = "sk-live-PLANT-gitpw";
        for source in [
            format!("https://me:{TOKEN}@github.com/me/pi-bar.git"),
            format!("https://me:{TOKEN}@github.com/me/pi-bar@v2"),
            format!("git+https://me:{TOKEN}@github.com/me/pi-bar.git#v2"),
            format!("git:https://me:{TOKEN}@github.com/me/pi-bar"),
            format!("ssh://git:{TOKEN}@github.com:22/me/pi-bar.git"),
            format!("http://me:{TOKEN}@git.local:8080/me/pi-bar/"),
            format!("https://{TOKEN}:x-oauth-basic@github.com/me/pi-bar"),
        ] {
            let got = extension_name(&info("/x/index.ts", &source, "package", None));
            assert_eq!(got.as_deref(), Some("pi-bar"), "source={source}");
        }
        // No path: named after the host, never the password.
        let got = extension_name(&info(
            "/x/index.ts",
            &format!("https://me:{TOKEN}@github.com"),
            "package",
            None,
        ));
        assert!(!got.unwrap_or_default().contains("PLANT"));
    }
}
