//! The Pi extension holds no user-visible sentence of its own: every text a person or the model
//! reads comes from ui-text through the addon. The one exception is the reason given when the
//! addon itself cannot be loaded (then there is nothing to ask), with what to run for each install
//! form: the values of the one object `ADDON_MISSING`.

use std::path::Path;

/// Every string literal of a TypeScript source ('…', "…" and `…`), naively but without missing any:
/// comments are skipped so their prose does not count.
fn literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == '"' || c == '\'' || c == '`' {
            let mut text = String::new();
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    text.push(ch);
                }
                i += 1;
            }
            out.push(text);
        }
        i += 1;
    }
    out
}

/// A literal a person would read as a sentence: three or more words of letters.
fn is_sentence(text: &str) -> bool {
    text.split_whitespace()
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
        .count()
        >= 3
}

/// The dialog's layout (drawn with Pi's components) holds no sentence either: its words are
/// the addon's data.
#[test]
fn the_dialog_layout_holds_no_sentence() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/dialog.ts");
    let source = std::fs::read_to_string(path).unwrap();
    let sentences: Vec<String> = literals(&source)
        .into_iter()
        .filter(|l| is_sentence(l))
        .collect();
    assert!(sentences.is_empty(), "{sentences:#?}");
    assert!(source.contains("from \"@earendil-works/pi-tui\""));
}

/// Every TypeScript file of the extension is one of the two checked here.
#[test]
fn the_extension_has_no_other_typescript() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ts"))
        .collect();
    found.sort();
    assert_eq!(found, ["dialog.ts", "index.ts"]);
}

#[test]
fn the_extension_holds_no_sentence_but_the_addon_missing_ones() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/index.ts");
    let source = std::fs::read_to_string(path).unwrap();
    let start = source
        .find("const ADDON_MISSING = {")
        .expect("the sentences are the ADDON_MISSING object's");
    let end = start + source[start..].find("\n};\n").expect("the object ends");
    let (before, rest) = source.split_at(start);
    let (object, after) = rest.split_at(end - start);
    let outside: Vec<String> = literals(before)
        .into_iter()
        .chain(literals(after))
        .filter(|l| is_sentence(l))
        .collect();
    assert!(outside.is_empty(), "{outside:#?}");
    let inside: Vec<String> = literals(object)
        .into_iter()
        .filter(|l| is_sentence(l))
        .collect();
    // What is blocked, the form-specific instructions, and the way out.
    assert_eq!(inside.len(), 7, "{inside:#?}");
}

/// The repository's root `index.ts` (the entry of a path or git install, so Pi lists the package
/// under the clone's name) only re-exports the extension.
#[test]
fn the_root_entry_only_re_exports_the_extension() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../index.ts");
    let source = std::fs::read_to_string(path).unwrap();
    assert_eq!(literals(&source), ["./extension/index.ts"]);
    let code: Vec<&str> = source
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && !l.trim().is_empty())
        .collect();
    assert_eq!(code, ["export { default } from \"./extension/index.ts\";"]);
}

#[test]
fn the_scan_finds_sentences() {
    let found = literals("const a = \"tool_call\"; // a comment with words in it\nconst b = `Blocked: this is a sentence`;");
    assert_eq!(found, ["tool_call", "Blocked: this is a sentence"]);
    assert!(!is_sentence(&found[0]));
    assert!(is_sentence(&found[1]));
}

/// Issue 18, finding 5: the extension's one file read of its own (the switch, when the addon
/// cannot load) opens the file non-blocking, takes only a regular file and reads with a bound,
/// as the Rust readers do; nothing reads a whole file unbounded.
#[test]
fn the_extension_reads_files_only_bounded_and_non_blocking() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/index.ts");
    let source = std::fs::read_to_string(path).unwrap();
    for unbounded in ["readFileSync", "createReadStream", "readFile("] {
        assert!(!source.contains(unbounded), "{unbounded}");
    }
    assert!(source.contains("constants.O_RDONLY | constants.O_NONBLOCK"));
    assert!(source.contains("fstatSync(fd)"));
    assert!(source.contains("!stat.isFile() || stat.size > limit"));
    assert!(source.contains("const MAX_SETTINGS_FILE_BYTES = 64 * 1024;"));
}
