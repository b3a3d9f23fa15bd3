//! Reading a `getAllTools()`-shaped inventory file, bounded, with errors that name the file.

use pcd_bounded_read::{read_bounded, Follow};
use pcd_model::{parse_inventory, FileReadProblem, Inventory, InventoryError, ToolProblem};
use pcd_ui_text::{tools_file_error, ToolsFileProblem as P};
use std::path::Path;

/// The largest inventory file read (100,000 tools with long descriptions fit).
pub const MAX_INVENTORY_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// How many rejected entries an error lists before it only counts the rest.
const MAX_LISTED_PROBLEMS: usize = 10;

/// Why an inventory file could not be used. The file is named; no value from it is echoed. The
/// sentences are ui-text's ([`pcd_ui_text::tools_file_error`]).
#[derive(Debug, thiserror::Error)]
pub enum InventoryFileError {
    /// The file is not a regular file, is larger than [`MAX_INVENTORY_FILE_BYTES`], or could not
    /// be opened or read.
    #[error("{}", tools_file_error(file, P::Read(*problem)))]
    Read {
        /// The file as given.
        file: String,
        /// What is wrong.
        problem: FileReadProblem,
    },
    /// The file is not UTF-8.
    #[error("{}", tools_file_error(file, P::NotUtf8))]
    NotUtf8 {
        /// The file as given.
        file: String,
    },
    /// The file is not a JSON array.
    #[error("{}", tools_file_error(file, P::Invalid(error)))]
    Invalid {
        /// The file as given.
        file: String,
        /// What is wrong.
        error: InventoryError,
    },
    /// Some entries are not usable tools.
    #[error("{}", tools_file_error(file, P::BadEntries { problems, total: *total }))]
    BadEntries {
        /// The file as given.
        file: String,
        /// The first problems: (entry index, problem).
        problems: Vec<(usize, ToolProblem)>,
        /// How many entries were rejected in all.
        total: usize,
    },
}

/// Reads and parses an inventory file strictly: an entry that is not a usable tool is an error.
pub fn read_inventory_file(path: &Path) -> Result<Inventory, InventoryFileError> {
    let file = path.display().to_string();
    let bytes =
        read_bounded(path, MAX_INVENTORY_FILE_BYTES, Follow::Symlinks).map_err(|problem| {
            InventoryFileError::Read {
                file: file.clone(),
                problem,
            }
        })?;
    let text =
        String::from_utf8(bytes).map_err(|_| InventoryFileError::NotUtf8 { file: file.clone() })?;
    parse_inventory_text(&text, &file)
}

/// Parses inventory text strictly, naming `file` in errors.
/// Writes `tools_json` (Pi's `getAllTools()` as JSON text) to `file`, a new file (never over an
/// existing one), readable by its owner only, after checking it is an inventory the program
/// accepts. Returns the sentence to show: how many tools were written, or why nothing was.
pub fn export_inventory(tools_json: &str, file: &Path) -> String {
    use std::io::Write;
    let shown = file.display().to_string();
    let count = match parse_inventory(tools_json) {
        Ok(inventory) => inventory.tools.len() + inventory.rejected.len(),
        Err(_) => {
            return pcd_ui_text::tools_export_failed(
                &shown,
                pcd_ui_text::EXPORT_REGISTRY_UNREADABLE,
            )
        }
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(file).and_then(|mut f| {
        f.write_all(tools_json.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()
    });
    match written {
        Ok(()) => pcd_ui_text::tools_exported(&shown, count),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            pcd_ui_text::tools_export_failed(&shown, pcd_ui_text::EXPORT_FILE_EXISTS)
        }
        Err(e) => pcd_ui_text::tools_export_failed(&shown, &e.kind().to_string()),
    }
}

/// Parses Pi's `getAllTools()` JSON text as an inventory file's contents (`file` names it in
/// errors).
pub fn parse_inventory_text(text: &str, file: &str) -> Result<Inventory, InventoryFileError> {
    let inventory = parse_inventory(text).map_err(|error| InventoryFileError::Invalid {
        file: file.to_owned(),
        error,
    })?;
    if !inventory.rejected.is_empty() {
        return Err(InventoryFileError::BadEntries {
            file: file.to_owned(),
            total: inventory.rejected.len(),
            problems: inventory
                .rejected
                .iter()
                .take(MAX_LISTED_PROBLEMS)
                .map(|r| (r.index, r.problem.clone()))
                .collect(),
        });
    }
    Ok(inventory)
}
