//! The session file reader on arbitrary bytes: indexing, every branch walk, reading entries and
//! folding never panic, and a branch never has more entries than the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcd_ledger::SessionFile;
use std::io::Cursor;

fuzz_target!(|bytes: &[u8]| {
    let Ok(mut file) = SessionFile::from_reader(Cursor::new(bytes.to_vec())) else {
        return;
    };
    let positions: Vec<_> = file.positions().take(64).collect();
    for leaf in std::iter::once(file.leaf()).chain(positions.into_iter().map(Some)) {
        let Some(leaf) = leaf else { continue };
        let branch = file.branch(leaf);
        assert!(branch.len() <= file.len());
        let _ = file
            .read_branch(&branch)
            .expect("an indexed in-memory line reads back");
        let replay = file
            .fold_branch(&branch)
            .expect("folding reads only indexed lines");
        assert_eq!(replay.entries, branch.len());
    }
});
