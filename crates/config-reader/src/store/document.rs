//! The settings document: reading and parsing the global settings file and the project
//! allowlist file. A bounded read, a JSON object (a leading byte-order mark allowed), a lone
//! surrogate escape read as U+FFFD so only the field that holds it falls back, and the three
//! results of [`Loaded`]. The save's read under the lock goes through [`object_of`] too.

use super::{
    global_settings_path, project_allowlist_path, Loaded, StoreError, StoreFile, StoreStep,
    MAX_SETTINGS_FILE_BYTES,
};
use crate::bounded::{read_bounded, FileRead};
use pcd_model::{ProjectAllowlistFile, ScopedAllowlist, Settings, SettingsWarning};
use serde_json::{Map, Value};
use std::path::Path;

/// The raw JSON object of a file, or why there is none.
fn read_object(path: &Path, file: StoreFile) -> Result<Option<Map<String, Value>>, StoreError> {
    Ok(object_of(read_bounded(path, MAX_SETTINGS_FILE_BYTES), file)?.map(|parsed| parsed.map))
}

/// A file's JSON object, and where its first lone surrogate escape is (1-based line and column),
/// if it has one.
pub(super) struct Parsed {
    pub(super) map: Map<String, Value>,
    pub(super) lone_surrogate: Option<(usize, usize)>,
    /// Where its first number too large for an f64 (`1e400`) is, if it has one.
    pub(super) huge_number: Option<(usize, usize)>,
}

/// What one bounded read gave, as a JSON object.
pub(super) fn object_of(read: FileRead, file: StoreFile) -> Result<Option<Parsed>, StoreError> {
    let bytes = match read {
        FileRead::Absent => return Ok(None),
        FileRead::Bytes(bytes) => bytes,
        FileRead::NotRegular => return Err(StoreError::NotRegularFile { file }),
        FileRead::TooLarge => return Err(StoreError::TooLarge { file }),
        FileRead::Unreadable(kind) => {
            return Err(StoreError::Io {
                file,
                step: StoreStep::Read,
                kind,
            })
        }
    };
    parse_object(&bytes, file).map(Some)
}

/// A file's bytes as a JSON object (a leading byte-order mark is allowed). A lone surrogate
/// escape reads as U+FFFD, so only the field or entry that holds it falls back.
fn parse_object(bytes: &[u8], file: StoreFile) -> Result<Parsed, StoreError> {
    if bytes.len() as u64 > MAX_SETTINGS_FILE_BYTES {
        return Err(StoreError::TooLarge { file });
    }
    let text = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let stood_in = stand_in_for_lone_surrogates(text);
    let (text, lone_surrogate) = match &stood_in {
        Some((text, at)) => (text.as_slice(), Some(line_and_column(text, *at))),
        None => (text, None),
    };
    let finite = stand_in_for_huge_numbers(text);
    let (text, huge_number) = match &finite {
        Some((text, at)) => (text.as_slice(), Some(line_and_column(text, *at))),
        None => (text, None),
    };
    match serde_json::from_slice::<Value>(text) {
        Ok(Value::Object(map)) => Ok(Parsed {
            map,
            lone_surrogate,
            huge_number,
        }),
        Ok(_) => Err(StoreError::NotJson {
            file,
            line: 0,
            column: 0,
        }),
        Err(e) => Err(StoreError::NotJson {
            file,
            line: e.line(),
            column: e.column(),
        }),
    }
}

/// `text` with every lone surrogate escape in it (`\ud800` without its other half, which
/// `JSON.parse` accepts and serde_json refuses with the whole file) replaced by `\ufffd`, and the
/// byte offset of the first one; `None` when there is none. The replacement has the same length,
/// so every position the parser reports stays true. Escapes are only looked for inside strings;
/// the text is otherwise left to the parser.
fn stand_in_for_lone_surrogates(text: &[u8]) -> Option<(Vec<u8>, usize)> {
    let unit_at = |i: usize| -> Option<u16> {
        let digits = text.get(i..i + 4)?;
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let escape_at = |i: usize| text.get(i) == Some(&b'\\') && text.get(i + 1) == Some(&b'u');
    let mut out: Option<(Vec<u8>, usize)> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        match (in_string, text[i]) {
            (_, b'"') => {
                in_string = !in_string;
                i += 1;
            }
            (true, b'\\') if escape_at(i) => {
                let lone = match unit_at(i + 2) {
                    Some(0xD800..=0xDBFF) => {
                        if escape_at(i + 6) && matches!(unit_at(i + 8), Some(0xDC00..=0xDFFF)) {
                            i += 12;
                            continue;
                        }
                        true
                    }
                    Some(0xDC00..=0xDFFF) => true,
                    _ => false,
                };
                if lone {
                    let (copy, _) = out.get_or_insert_with(|| (text.to_vec(), i));
                    copy[i + 2..i + 6].copy_from_slice(b"fffd");
                }
                i += 6;
            }
            (true, b'\\') => i += 2,
            _ => i += 1,
        }
    }
    out
}

/// `text` with every number outside a string that is too large for an f64 (`1e400`, valid JSON
/// that serde_json refuses with the whole file) replaced by `1e300` (`-1e300` for a negative one)
/// and spaces to the same length, and the byte offset of the first one; `None` when there is
/// none. The stand-in is finite and outside the range of every numeric setting, so only the
/// field that holds it is out of range and falls back to its default; every position the parser
/// reports stays true. Anything that is not a number is left to the parser.
fn stand_in_for_huge_numbers(text: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out: Option<(Vec<u8>, usize)> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        match (in_string, text[i]) {
            (_, b'"') => {
                in_string = !in_string;
                i += 1;
            }
            (true, b'\\') => i += 2,
            (false, b'-' | b'0'..=b'9') => {
                let end = text[i..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .map_or(text.len(), |n| i + n);
                let token = &text[i..end];
                let huge = std::str::from_utf8(token)
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .is_some_and(f64::is_infinite);
                if huge {
                    // An infinite literal has an exponent of three digits or 309 digits, so
                    // it is never shorter than the stand-in.
                    let stand_in: &[u8] = if token[0] == b'-' {
                        b"-1e300"
                    } else {
                        b"1e300"
                    };
                    if token.len() >= stand_in.len() {
                        let (copy, _) = out.get_or_insert_with(|| (text.to_vec(), i));
                        copy[i..i + stand_in.len()].copy_from_slice(stand_in);
                        copy[i + stand_in.len()..end].fill(b' ');
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

/// The 1-based line and column (in bytes) of byte `at` of `text`.
fn line_and_column(text: &[u8], at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.len()
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, column)
}

/// The sans-IO part of [`read_global_settings`]: the file's bytes in, the settings out.
pub fn parse_global_settings(bytes: &[u8]) -> Result<(Settings, Vec<SettingsWarning>), StoreError> {
    let map = parse_object(bytes, StoreFile::GlobalSettings)?.map;
    Ok(Settings::from_json(&Value::Object(map)))
}

/// The sans-IO part of [`read_project_allowlist`]: the file's bytes in, the allowlists out.
pub fn parse_project_allowlist(
    bytes: &[u8],
) -> Result<(ScopedAllowlist, Vec<SettingsWarning>), StoreError> {
    let map = parse_object(bytes, StoreFile::ProjectAllowlists)?.map;
    Ok(ProjectAllowlistFile::from_json(&Value::Object(map)))
}

fn load<T>(
    path: &Path,
    file: StoreFile,
    parse: impl Fn(&Value) -> (T, Vec<SettingsWarning>),
) -> Loaded<T> {
    match read_object(path, file) {
        Ok(None) => Loaded::Absent,
        Ok(Some(map)) => {
            let (value, warnings) = parse(&Value::Object(map));
            Loaded::Read { value, warnings }
        }
        Err(e) => Loaded::Unreadable(e),
    }
}

/// Reads the global settings, field by field.
pub fn read_global_settings(agent_dir: &Path) -> Loaded<Settings> {
    load(
        &global_settings_path(agent_dir),
        StoreFile::GlobalSettings,
        Settings::from_json,
    )
}

/// Reads the project allowlists, field by field.
pub fn read_project_allowlist(cwd: &Path) -> Loaded<ScopedAllowlist> {
    load(
        &project_allowlist_path(cwd),
        StoreFile::ProjectAllowlists,
        ProjectAllowlistFile::from_json,
    )
}

#[cfg(test)]
mod tests;
