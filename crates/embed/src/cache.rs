//! Vectors cached on disk, keyed by the SHA-256 of the model's key and the exact text, so a text
//! is embedded once per machine and model. The key is [`crate::MiniLm::vectors_key`]: the weights'
//! checksum and the encoder (its arithmetic and its bound on tokens), so a vector cached by
//! another bound or implementation is never read as this one's.
//!
//! The file is read as every file is (`pcd-bounded-read`: a regular file, at most the bound) and
//! written whole to a temporary file that is renamed over it, so a reader never sees a half-written
//! cache and two writers never interleave (the last rename wins; both files are complete). A file
//! that is not a cache of this model (wrong magic, torn, truncated, another dimension) is ignored
//! and rebuilt. When the entries outgrow the bound, the least recently used go first.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The first bytes of a cache file, with its format version.
const MAGIC: &[u8; 8] = b"PCDVEC01";

/// The default bound on a cache file: 16 MiB, about 10,000 vectors.
pub const DEFAULT_MAX_BYTES: u64 = 16 << 20;

/// A cached vector and when it was last used.
type Entry = (Vec<f32>, u64);

/// A cache of vectors of one dimension, for one model.
#[derive(Debug)]
pub struct VectorCache {
    path: PathBuf,
    model: String,
    dimension: usize,
    max_bytes: u64,
    /// Key to (vector, last use).
    entries: HashMap<[u8; 32], Entry>,
    clock: u64,
    dirty: bool,
}

impl VectorCache {
    /// The bytes one entry takes in the file.
    fn entry_bytes(dimension: usize) -> u64 {
        32 + 4 * dimension as u64
    }

    /// Opens the cache at `path` for the model with key `model`, reading what a previous
    /// run left there. Anything unreadable or not a cache of this dimension starts an empty
    /// cache, which [`VectorCache::save`] writes over it.
    pub fn open(path: &Path, model: &str, dimension: usize, max_bytes: u64) -> VectorCache {
        let mut cache = VectorCache {
            path: path.to_owned(),
            model: model.to_owned(),
            dimension,
            max_bytes,
            entries: HashMap::new(),
            clock: 0,
            dirty: false,
        };
        if let Ok(bytes) =
            pcd_bounded_read::read_bounded(path, max_bytes, pcd_bounded_read::Follow::NoSymlinks)
        {
            cache.read(&bytes);
        }
        cache
    }

    /// Reads the file's entries, or none if the file is not a whole cache of this dimension.
    fn read(&mut self, bytes: &[u8]) {
        let header = MAGIC.len() + 4;
        let size = Self::entry_bytes(self.dimension) as usize;
        if bytes.len() < header
            || &bytes[..MAGIC.len()] != MAGIC
            || u32::from_le_bytes(bytes[MAGIC.len()..header].try_into().unwrap_or_default())
                as usize
                != self.dimension
            || (bytes.len() - header) % size != 0
        {
            return;
        }
        for (order, entry) in bytes[header..].chunks_exact(size).enumerate() {
            let mut key = [0u8; 32];
            key.copy_from_slice(&entry[..32]);
            let vector: Vec<f32> = entry[32..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            if vector.iter().any(|x| !x.is_finite()) {
                self.entries.clear();
                return;
            }
            self.entries.insert(key, (vector, order as u64));
            self.clock = order as u64 + 1;
        }
    }

    /// The key of `text`: the SHA-256 of the model's key and the text.
    fn key(&self, text: &str) -> [u8; 32] {
        let mut hash = Sha256::new();
        hash.update(self.model.as_bytes());
        hash.update([0u8]);
        hash.update(text.as_bytes());
        hash.finalize().into()
    }

    /// The cached vector of `text`, if any.
    pub fn get(&mut self, text: &str) -> Option<Vec<f32>> {
        let key = self.key(text);
        self.clock += 1;
        let clock = self.clock;
        let (vector, used) = self.entries.get_mut(&key)?;
        *used = clock;
        Some(vector.clone())
    }

    /// Caches the vector of `text` (ignored if its dimension is not the cache's).
    pub fn insert(&mut self, text: &str, vector: &[f32]) {
        if vector.len() != self.dimension || vector.iter().any(|x| !x.is_finite()) {
            return;
        }
        let key = self.key(text);
        self.clock += 1;
        self.entries.insert(key, (vector.to_vec(), self.clock));
        self.dirty = true;
    }

    /// How many vectors the cache holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache holds no vector.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the cache if anything was added: the most recently used entries that fit the
    /// bound, to a temporary file in the same folder renamed over the cache.
    pub fn save(&mut self) -> std::io::Result<()> {
        match self.take_save() {
            Some(pending) => pending.write(),
            None => Ok(()),
        }
    }

    /// What [`VectorCache::save`] would write, taken now so the writing can happen without the
    /// cache (a host that shares the cache behind a lock writes after releasing it, and readers
    /// are not held up by the disk). `None` when nothing was added. The cache counts as saved
    /// from here on and keeps only the entries written; a failed write only costs time later.
    pub fn take_save(&mut self) -> Option<PendingSave> {
        if !self.dirty {
            return None;
        }
        let size = Self::entry_bytes(self.dimension);
        let header = MAGIC.len() as u64 + 4;
        let fits = (self.max_bytes.saturating_sub(header) / size) as usize;
        let mut order: Vec<(&[u8; 32], &Entry)> = self.entries.iter().collect();
        // Most recent first; keep what fits, then write oldest first so a reread keeps the order.
        order.sort_unstable_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(b.0)));
        order.truncate(fits);
        order.reverse();
        let mut bytes = Vec::with_capacity(header as usize + order.len() * size as usize);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(self.dimension as u32).to_le_bytes());
        for (key, (vector, _)) in &order {
            bytes.extend_from_slice(&key[..]);
            for x in vector {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        let kept: std::collections::HashSet<[u8; 32]> = order.iter().map(|(k, _)| **k).collect();
        self.entries.retain(|k, _| kept.contains(k));
        self.dirty = false;
        Some(PendingSave {
            path: self.path.clone(),
            bytes,
        })
    }
}

/// A cache's file as [`VectorCache::take_save`] took it, to be written.
#[derive(Debug)]
pub struct PendingSave {
    path: PathBuf,
    bytes: Vec<u8>,
}

impl PendingSave {
    /// Writes the file: to a new temporary file in the cache's folder (never one that is already
    /// there, nor through a link; readable by its owner alone), synced, then renamed over the
    /// cache.
    pub fn write(self) -> std::io::Result<()> {
        if let Some(folder) = self.path.parent() {
            std::fs::create_dir_all(folder)?;
        }
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "vectors".into());
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let write = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temporary = self
            .path
            .with_file_name(format!(".{name}.{}.{write}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut created = false;
        let written = (|| {
            let mut file = options.open(&temporary)?;
            created = true;
            file.write_all(&self.bytes)?;
            file.sync_all()?;
            std::fs::rename(&temporary, &self.path)
        })();
        if written.is_err() && created {
            let _ = std::fs::remove_file(&temporary);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(seed: f32) -> Vec<f32> {
        (0..4).map(|i| seed + i as f32).collect()
    }

    #[test]
    fn vectors_survive_a_reopen_and_are_keyed_by_model_and_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut cache = VectorCache::open(&path, "model-a", 4, 1 << 20);
        cache.insert("send mail", &vector(1.0));
        cache.save().unwrap();
        let mut again = VectorCache::open(&path, "model-a", 4, 1 << 20);
        assert_eq!(again.get("send mail"), Some(vector(1.0)));
        assert_eq!(again.get("send mail "), None);
        let mut other = VectorCache::open(&path, "model-b", 4, 1 << 20);
        assert_eq!(other.get("send mail"), None);
    }

    #[test]
    fn a_truncated_or_foreign_file_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut cache = VectorCache::open(&path, "m", 4, 1 << 20);
        cache.insert("a", &vector(1.0));
        cache.insert("b", &vector(2.0));
        cache.save().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let mut torn = VectorCache::open(&path, "m", 4, 1 << 20);
        assert!(torn.is_empty());
        torn.insert("c", &vector(3.0));
        torn.save().unwrap();
        assert_eq!(VectorCache::open(&path, "m", 4, 1 << 20).len(), 1);
        std::fs::write(&path, b"not a cache at all").unwrap();
        assert!(VectorCache::open(&path, "m", 4, 1 << 20).is_empty());
        // Another dimension.
        assert!(VectorCache::open(&path, "m", 8, 1 << 20).is_empty());
        // A folder where the file should be: empty, and saving reports the error.
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        let mut in_folder = VectorCache::open(&folder, "m", 4, 1 << 20);
        in_folder.insert("a", &vector(1.0));
        assert!(in_folder.save().is_err());
    }

    #[test]
    fn the_least_recently_used_go_first_when_the_bound_is_reached() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let entry = VectorCache::entry_bytes(4);
        let bound = 12 + 2 * entry;
        let mut cache = VectorCache::open(&path, "m", 4, bound);
        cache.insert("old", &vector(1.0));
        cache.insert("used", &vector(2.0));
        assert!(cache.get("old").is_some());
        cache.insert("new", &vector(3.0));
        cache.save().unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() <= bound);
        let mut again = VectorCache::open(&path, "m", 4, bound);
        assert_eq!(again.len(), 2);
        assert!(again.get("used").is_none());
        assert!(again.get("old").is_some() && again.get("new").is_some());
    }

    /// The temporary file is always a new one: a link planted at its name (another user's, in a
    /// shared folder) is never written through, and the file saved is its owner's alone.
    #[cfg(unix)]
    #[test]
    fn a_save_never_writes_through_a_planted_link_and_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        // Every temporary name this process could use next.
        for n in 0..10_000 {
            let name = format!(".vectors.bin.{}.{n}.tmp", std::process::id());
            std::os::unix::fs::symlink(&victim, dir.path().join(name)).unwrap();
        }
        let mut cache = VectorCache::open(&path, "m", 4, 1 << 20);
        cache.insert("a", &vector(1.0));
        assert!(cache.save().is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        assert!(!path.exists());

        let elsewhere = tempfile::tempdir().unwrap();
        let path = elsewhere.path().join("vectors.bin");
        let mut cache = VectorCache::open(&path, "m", 4, 1 << 20);
        cache.insert("a", &vector(1.0));
        cache.save().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        assert_eq!(VectorCache::open(&path, "m", 4, 1 << 20).len(), 1);
    }

    /// A save taken under a lock and written after it gives the same file as a plain save.
    #[test]
    fn a_save_taken_now_and_written_later_is_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one.bin"), dir.path().join("two.bin"));
        let mut a = VectorCache::open(&one, "m", 4, 1 << 20);
        let mut b = VectorCache::open(&two, "m", 4, 1 << 20);
        for (text, seed) in [("x", 1.0), ("y", 2.0)] {
            a.insert(text, &vector(seed));
            b.insert(text, &vector(seed));
        }
        a.save().unwrap();
        let pending = b.take_save().expect("something was added");
        assert!(b.take_save().is_none(), "taken once");
        pending.write().unwrap();
        assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&two).unwrap());
    }

    #[test]
    fn concurrent_writers_leave_a_whole_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for round in 0..20 {
                        let mut cache = VectorCache::open(&path, "m", 4, 1 << 20);
                        cache.insert(&format!("{t}-{round}"), &vector(t as f32));
                        cache.save().unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut cache = VectorCache::open(&path, "m", 4, 1 << 20);
        assert!(!cache.is_empty(), "the last writer's whole file is read");
        let any = (0..8).any(|t| cache.get(&format!("{t}-19")) == Some(vector(t as f32)));
        assert!(any);
        let leftovers = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name() != "vectors.bin")
            .count();
        assert_eq!(leftovers, 0, "no temporary file is left behind");
    }
}
