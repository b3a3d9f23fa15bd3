use super::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("pcd-bounded-read-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mkfifo(path: &Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_regular_file_is_read_whole_up_to_the_bound() {
    let dir = TempDir::new("regular");
    let at = dir.write("at", &[b' '; 10]);
    let over = dir.write("over", &[b' '; 11]);
    let empty = dir.write("empty", b"");
    assert_eq!(read_bounded(&at, 10, Follow::Symlinks).unwrap().len(), 10);
    assert_eq!(
        read_bounded(&over, 10, Follow::Symlinks),
        Err(FileReadProblem::TooLarge { limit: 10 })
    );
    assert_eq!(read_bounded(&empty, 10, Follow::Symlinks).unwrap(), b"");
    // No bound at all (u64::MAX) is a bound too: "one byte past it" does not overflow.
    assert_eq!(
        read_bounded(&over, u64::MAX, Follow::Symlinks)
            .unwrap()
            .len(),
        11
    );
    let mut file = open_bounded(&over, u64::MAX, Follow::Symlinks).unwrap();
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    assert_eq!(bytes.len(), 11);
}

#[test]
fn what_is_not_a_regular_file_is_named() {
    let dir = TempDir::new("kinds");
    let file = dir.write("f", b"{}");
    let missing = dir.0.join("missing");
    assert_eq!(
        read_bounded(&missing, 10, Follow::Symlinks),
        Err(FileReadProblem::NotFound)
    );
    assert_eq!(
        read_bounded(&file.join("below-a-file"), 10, Follow::Symlinks),
        Err(FileReadProblem::NotFound)
    );
    assert_eq!(
        read_bounded(&dir.0, 10, Follow::Symlinks),
        Err(FileReadProblem::Directory)
    );
    assert_eq!(
        read_bounded(Path::new("/dev/null"), 10, Follow::Symlinks),
        Err(FileReadProblem::Device)
    );
    #[cfg(unix)]
    {
        let link = dir.0.join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_bounded(&link, 10, Follow::Symlinks).unwrap(), b"{}");
        assert_eq!(
            read_bounded(&link, 10, Follow::NoSymlinks),
            Err(FileReadProblem::Symlink)
        );
        let dangling = dir.0.join("dangling");
        std::os::unix::fs::symlink(&missing, &dangling).unwrap();
        assert_eq!(
            read_bounded(&dangling, 10, Follow::NoSymlinks),
            Err(FileReadProblem::Symlink)
        );
        assert_eq!(
            read_bounded(&dangling, 10, Follow::Symlinks),
            Err(FileReadProblem::NotFound)
        );
        // A folder above the file may be a link.
        std::os::unix::fs::symlink(&dir.0, dir.0.join("alias")).unwrap();
        assert_eq!(
            read_bounded(&dir.0.join("alias/f"), 10, Follow::NoSymlinks).unwrap(),
            b"{}"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = TempDir::new("fifo");
    let fifo = dir.0.join("fifo");
    assert!(mkfifo(&fifo), "mkfifo");
    let started = Instant::now();
    assert_eq!(
        read_bounded(&fifo, 10, Follow::Symlinks).err(),
        Some(FileReadProblem::Fifo)
    );
    assert_eq!(
        open_bounded(&fifo, 10, Follow::NoSymlinks).err(),
        Some(FileReadProblem::Fifo)
    );
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[cfg(target_os = "linux")]
#[test]
fn dev_zero_and_a_huge_sparse_file_fail_fast_without_allocating() {
    let dir = TempDir::new("zero");
    let started = Instant::now();
    assert_eq!(
        read_bounded(Path::new("/dev/zero"), 1 << 20, Follow::Symlinks),
        Err(FileReadProblem::Device)
    );
    let sparse = dir.0.join("sparse");
    File::create(&sparse).unwrap().set_len(2 << 30).unwrap();
    assert_eq!(
        read_bounded(&sparse, 1 << 20, Follow::Symlinks),
        Err(FileReadProblem::TooLarge { limit: 1 << 20 })
    );
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn a_file_that_grows_past_the_bound_after_the_open_stops_one_byte_past_it() {
    let dir = TempDir::new("grows");
    let path = dir.write("f", b"0123456789");
    let mut file = open_bounded(&path, 12, Follow::Symlinks).unwrap();
    assert_eq!(file.len_at_open(), 10);
    std::fs::write(&path, b"0123456789abcdef").unwrap();
    let mut out = Vec::new();
    let error = file.read_to_end(&mut out).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::FileTooLarge);
    assert!(out.len() <= 13);
    // Seeking back and reading within the bound still works.
    file.seek(SeekFrom::Start(2)).unwrap();
    let mut two = [0; 2];
    file.read_exact(&mut two).unwrap();
    assert_eq!(&two, b"23");
}
