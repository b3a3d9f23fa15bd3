//! Vectors cached on disk, keyed by the SHA-256 of the model's key and the exact text, so a text
//! is embedded once per machine and model. The key is [`crate::MiniLm::vectors_key`]: the weights'
//! checksum and the encoder (its arithmetic and its bound on tokens), so a vector cached by
//! another bound or implementation is never read as this one's.
//!
//! Those keys are public, so a vector is trusted only when this user wrote it:
//! - the cache's folder must be private to the user, as OpenSSH judges `~/.ssh` (owned by the
//!   user, writable by nobody else, not a link), and the file a regular file the user owns that
//!   nobody else may write; otherwise the whole file is ignored (and replaced when it is the
//!   user's);
//! - every entry carries an HMAC-SHA-256 over its key and vector with a per-user secret
//!   ([`CacheSecret`], 32 random bytes in a mode 0600 file in the agent folder), checked the first
//!   time the entry is used; an entry that fails is dropped and its text embedded again.
//!
//! The file is read as every file is (`pcd-bounded-read`: a regular file, at most the bound) and
//! written whole through `pcd_bounded_read::replace` (a temporary file renamed only over an absent
//! path or the user's own regular file), so a reader never sees a half-written cache and two
//! writers never interleave (the last rename wins; both files are complete). A file that is not a
//! cache of this model (wrong magic, torn, truncated, another dimension) is ignored and rebuilt.
//! When the entries outgrow the bound, the least recently used go first.
//!
//! Vectors are kept at half precision (IEEE binary16), as the model gives them
//! ([`crate::MiniLm::embed`] rounds its output to it): a vector read back is exactly the one
//! computed, and there are half the bytes to read, keep and authenticate.

use half::f16;
use half::slice::HalfFloatSliceExt;
use hmac::{Hmac, Mac};
use pcd_bounded_read::replace::{effective_uid, private_folder, replace_file, replaceable};
use pcd_model::{FileReadProblem, VectorCacheProblem};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The first bytes of a cache file, with its format version (02: entries carry their HMAC; 03:
/// their vectors are f16).
const MAGIC: &[u8; 8] = b"PCDVEC03";

/// The default bound on a cache file: 16 MiB, about 20,000 vectors of 384 dimensions.
pub const DEFAULT_MAX_BYTES: u64 = 16 << 20;

/// The length of an entry's key, of its HMAC and of the secret.
const HASH: usize = 32;

/// The name of the secret's file in `<agent dir>/pi-context-decisions/`.
pub use crate::pinned::CACHE_SECRET_FILE as SECRET_FILE;

/// The per-user secret that authenticates the cache's entries.
#[derive(Clone)]
pub struct CacheSecret([u8; HASH]);

impl std::fmt::Debug for CacheSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CacheSecret(..)")
    }
}

impl CacheSecret {
    /// A secret from its bytes (tests and benchmarks).
    pub fn from_bytes(bytes: [u8; HASH]) -> CacheSecret {
        CacheSecret(bytes)
    }

    /// The secret kept at `path`, made (32 random bytes, mode 0600) when there is none. A file
    /// there that is not exactly a secret of this user's alone (another owner, readable or
    /// writable by others, another size) is an error, except that a regular file of the user's
    /// with another size or mode is replaced by a new secret (which only costs the cache).
    pub fn load_or_create(path: &Path) -> Result<CacheSecret, VectorCacheProblem> {
        match pcd_bounded_read::read_bounded(path, 64, pcd_bounded_read::Follow::NoSymlinks) {
            Ok(bytes) => {
                let meta = std::fs::symlink_metadata(path).map_err(|e| {
                    VectorCacheProblem::KeyUnreadable(FileReadProblem::Io(e.kind()))
                })?;
                if replaceable(&meta, effective_uid()).is_some() {
                    return Err(VectorCacheProblem::KeyNotPrivate);
                }
                if let (Ok(secret), true) = (<[u8; HASH]>::try_from(&bytes[..]), is_private(&meta))
                {
                    return Ok(CacheSecret(secret));
                }
                Self::create(path)
            }
            Err(FileReadProblem::NotFound) => Self::create(path),
            Err(FileReadProblem::TooLarge { .. }) => Self::create(path),
            Err(problem) => Err(VectorCacheProblem::KeyUnreadable(problem)),
        }
    }

    fn create(path: &Path) -> Result<CacheSecret, VectorCacheProblem> {
        let mut secret = [0u8; HASH];
        getrandom::fill(&mut secret).map_err(|_| {
            VectorCacheProblem::KeyUnwritable(pcd_model::FileWriteProblem::Io(
                std::io::ErrorKind::Other,
            ))
        })?;
        if let Some(folder) = path.parent() {
            create_private_folder(folder).map_err(|e| {
                VectorCacheProblem::KeyUnwritable(pcd_model::FileWriteProblem::Io(e.kind()))
            })?;
        }
        replace_file(path, &secret, 0o600).map_err(VectorCacheProblem::KeyUnwritable)?;
        Ok(CacheSecret(secret))
    }
}

/// Whether nobody but the owner may read or write the file (`mode & 0o077 == 0`).
fn is_private(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.mode() & 0o077 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// Creates `folder` and any missing folder above it, the new ones with mode 0700.
fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(folder)
}

/// The HMAC of one entry: over its key and its vector's bytes (the definition that
/// [`vector_mac`] computes without allocating).
#[cfg(test)]
fn entry_mac(keyed: &Hmac<Sha256>, key: &[u8; HASH], vector: &[u8]) -> [u8; HASH] {
    let mut mac = keyed.clone();
    mac.update(key);
    mac.update(vector);
    mac.finalize().into_bytes().into()
}

/// [`entry_mac`] of a vector held in memory: its file bytes fed through a small buffer, so
/// checking an entry allocates nothing.
fn vector_mac(keyed: &Hmac<Sha256>, key: &[u8; HASH], vector: &[f16]) -> [u8; HASH] {
    let mut mac = keyed.clone();
    mac.update(key);
    let mut buffer = [0u8; 256];
    for chunk in vector.chunks(buffer.len() / 2) {
        for (bytes, x) in buffer.chunks_exact_mut(2).zip(chunk) {
            bytes.copy_from_slice(&x.to_le_bytes());
        }
        mac.update(&buffer[..chunk.len() * 2]);
    }
    mac.finalize().into_bytes().into()
}

/// A vector's bytes as the file holds them (little-endian f16s).
#[cfg(test)]
fn vector_bytes(vector: &[f16]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A cached vector (f16), when it was last used, its HMAC, and whether that was checked.
#[derive(Debug)]
struct Entry {
    vector: Vec<f16>,
    used: u64,
    mac: [u8; HASH],
    checked: bool,
}

/// A cache of vectors of one dimension, for one model.
pub struct VectorCache {
    /// The file, or `None` for a cache kept in memory for the run.
    path: Option<PathBuf>,
    /// The HMAC keyed with the user's secret, cloned for each entry.
    keyed: Hmac<Sha256>,
    /// SHA-256 fed the vectors' key ([`MiniLm::vectors_key`](crate::MiniLm::vectors_key), some
    /// 200 bytes) and the byte 0, cloned for each text's key: a decision looks up every
    /// candidate's text, and hashing that prefix again was most of each key's work.
    key_prefix: Sha256,
    dimension: usize,
    max_bytes: u64,
    entries: HashMap<[u8; HASH], Entry>,
    clock: u64,
    dirty: bool,
}

impl std::fmt::Debug for VectorCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorCache")
            .field("on_disk", &self.path.is_some())
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl VectorCache {
    /// The bytes one entry takes in the file.
    fn entry_bytes(dimension: usize) -> u64 {
        2 * HASH as u64 + 2 * dimension as u64
    }

    fn empty(
        path: Option<PathBuf>,
        secret: &CacheSecret,
        model: &str,
        dimension: usize,
        max_bytes: u64,
    ) -> VectorCache {
        VectorCache {
            path,
            keyed: <Hmac<Sha256> as Mac>::new_from_slice(&secret.0)
                .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length")),
            key_prefix: {
                let mut hash = Sha256::new();
                hash.update(model.as_bytes());
                hash.update([0u8]);
                hash
            },
            dimension,
            max_bytes,
            entries: HashMap::new(),
            clock: 0,
            dirty: false,
        }
    }

    /// A cache kept in memory for the run: nothing is read or written.
    pub fn in_memory(model: &str, dimension: usize) -> VectorCache {
        let mut secret = [0u8; HASH];
        // Nothing is read back from outside, so the secret only has to be some key.
        let _ = getrandom::fill(&mut secret);
        VectorCache::empty(None, &CacheSecret(secret), model, dimension, u64::MAX)
    }

    /// Opens the cache at `path` for the model with key `model`, reading what this user's
    /// previous runs left there (see the module's comment for what is trusted). A file that is
    /// absent, unreadable or not a cache of this dimension starts an empty cache, which
    /// [`VectorCache::save`] writes over it. The problem, if any, says why the file was not read
    /// (a folder that is not private keeps the cache in memory: nothing is read or written there).
    pub fn open(
        path: &Path,
        secret: &CacheSecret,
        model: &str,
        dimension: usize,
        max_bytes: u64,
    ) -> (VectorCache, Option<VectorCacheProblem>) {
        let uid = effective_uid();
        let mut cache =
            VectorCache::empty(Some(path.to_owned()), secret, model, dimension, max_bytes);
        if let Some(folder) = path.parent() {
            match std::fs::symlink_metadata(folder) {
                Ok(meta) => {
                    if let Some(problem) = private_folder(&meta, uid) {
                        cache.path = None;
                        return (cache, Some(VectorCacheProblem::Folder(problem)));
                    }
                }
                // Made private by the first save.
                Err(_) => return (cache, None),
            }
        }
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(_) => return (cache, None),
        };
        if let Some(problem) = replaceable(&meta, uid) {
            return (cache, Some(VectorCacheProblem::File(problem)));
        }
        if !is_unwritable_by_others(&meta) {
            // The user's own file, but others could have written it: replaced by the next save.
            cache.dirty = true;
            return (cache, Some(VectorCacheProblem::FileWritableByOthers));
        }
        if let Ok(bytes) =
            pcd_bounded_read::read_bounded(path, max_bytes, pcd_bounded_read::Follow::NoSymlinks)
        {
            cache.read(&bytes);
        }
        (cache, None)
    }

    /// Reads the file's entries, or none if the file is not a whole cache of this dimension.
    /// Their HMACs are checked when they are first used ([`VectorCache::get`]).
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
            let mut key = [0u8; HASH];
            key.copy_from_slice(&entry[..HASH]);
            let mut mac = [0u8; HASH];
            mac.copy_from_slice(&entry[size - HASH..]);
            let vector: Vec<f16> = entry[HASH..size - HASH]
                .chunks_exact(2)
                .map(|b| f16::from_le_bytes([b[0], b[1]]))
                .collect();
            if vector.iter().any(|x| !x.is_finite()) {
                self.entries.clear();
                return;
            }
            let used = order as u64;
            self.entries.insert(
                key,
                Entry {
                    vector,
                    used,
                    mac,
                    checked: false,
                },
            );
            self.clock = used + 1;
        }
    }

    /// The key of `text`: the SHA-256 of the model's key and the text.
    fn key(&self, text: &str) -> [u8; HASH] {
        let mut hash = self.key_prefix.clone();
        hash.update(text.as_bytes());
        hash.finalize().into()
    }

    /// The cached vector of `text`, if any this user's runs wrote: an entry whose HMAC fails is
    /// dropped (and counts as missing, so the text is embedded again).
    pub fn get(&mut self, text: &str) -> Option<Vec<f32>> {
        let key = self.key(text);
        self.get_key(&key)
    }

    /// The cached vectors of `texts`, in order, as [`VectorCache::get`] gives each: every text's
    /// key is hashed once, and the entries not checked yet are checked side by side first (see
    /// [`VectorCache::check`]). What a warm start calls with every candidate's text.
    pub fn get_all(&mut self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        let keys: Vec<[u8; HASH]> = texts.iter().map(|t| self.key(t)).collect();
        self.check_keys(&keys);
        keys.iter().map(|key| self.get_key(key)).collect()
    }

    fn get_key(&mut self, key: &[u8; HASH]) -> Option<Vec<f32>> {
        self.clock += 1;
        let clock = self.clock;
        let entry = self.entries.get_mut(key)?;
        if !entry.checked {
            let expected = vector_mac(&self.keyed, key, &entry.vector);
            // Not a secret comparison worth timing: a forger learns nothing it can use offline.
            if expected != entry.mac {
                self.entries.remove(key);
                self.dirty = true;
                return None;
            }
            entry.checked = true;
        }
        entry.used = clock;
        let mut vector = vec![0f32; entry.vector.len()];
        entry.vector.convert_to_f32_slice(&mut vector);
        Some(vector)
    }

    /// Checks, side by side on rayon's pool, the HMACs of the entries of `texts` not checked yet,
    /// and drops those that fail (hashing the 800 bytes of an entry is most of their cost; a
    /// second core helps only when it has the bytes in its cache). [`VectorCache::get`] checks
    /// anything left unchecked itself.
    pub fn check(&mut self, texts: &[&str]) {
        let keys: Vec<[u8; HASH]> = texts.iter().map(|t| self.key(t)).collect();
        self.check_keys(&keys);
    }

    fn check_keys(&mut self, keys: &[[u8; HASH]]) {
        use rayon::prelude::*;
        let keys: Vec<&[u8; HASH]> = keys
            .iter()
            .filter(|k| self.entries.get(*k).is_some_and(|e| !e.checked))
            .collect();
        let keyed = &self.keyed;
        let entries = &self.entries;
        let verdicts: Vec<([u8; HASH], bool)> = keys
            .par_iter()
            .filter_map(|key| {
                let entry = entries.get(*key)?;
                Some((**key, vector_mac(keyed, key, &entry.vector) == entry.mac))
            })
            .collect();
        for (key, good) in verdicts {
            if good {
                if let Some(entry) = self.entries.get_mut(&key) {
                    entry.checked = true;
                }
            } else {
                self.entries.remove(&key);
                self.dirty = true;
            }
        }
    }

    /// Caches the vector of `text` at half precision (ignored if its dimension is not the
    /// cache's, or if a component is not finite at half precision).
    pub fn insert(&mut self, text: &str, vector: &[f32]) {
        if vector.len() != self.dimension {
            return;
        }
        let mut half = vec![f16::ZERO; vector.len()];
        half.convert_from_f32_slice(vector);
        if half.iter().any(|x| !x.is_finite()) {
            return;
        }
        let vector = half;
        let key = self.key(text);
        let mac = vector_mac(&self.keyed, &key, &vector);
        self.clock += 1;
        self.entries.insert(
            key,
            Entry {
                vector,
                used: self.clock,
                mac,
                checked: true,
            },
        );
        self.dirty = true;
    }

    /// How many vectors the cache holds (checked or not yet).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache holds no vector.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the cache is kept on disk (`false`: in memory for the run).
    pub fn on_disk(&self) -> bool {
        self.path.is_some()
    }

    /// Writes the cache if anything was added: the most recently used entries that fit the
    /// bound, to a temporary file in the same folder renamed over the cache.
    pub fn save(&mut self) -> Result<(), VectorCacheProblem> {
        match self.take_save() {
            Some(pending) => pending.write(),
            None => Ok(()),
        }
    }

    /// What [`VectorCache::save`] would write, taken now so the writing can happen without the
    /// cache (a host that shares the cache behind a lock writes after releasing it, and readers
    /// are not held up by the disk). `None` when nothing was added or the cache is in memory. The
    /// cache counts as saved from here on and keeps only the entries written; a failed write only
    /// costs time later.
    pub fn take_save(&mut self) -> Option<PendingSave> {
        if !self.dirty {
            return None;
        }
        let path = self.path.clone()?;
        let size = Self::entry_bytes(self.dimension);
        let header = MAGIC.len() as u64 + 4;
        let fits = (self.max_bytes.saturating_sub(header) / size) as usize;
        let mut order: Vec<(&[u8; HASH], &Entry)> = self.entries.iter().collect();
        // Most recent first; keep what fits, then write oldest first so a reread keeps the order.
        order.sort_unstable_by(|a, b| b.1.used.cmp(&a.1.used).then(a.0.cmp(b.0)));
        order.truncate(fits);
        order.reverse();
        let mut bytes = Vec::with_capacity(header as usize + order.len() * size as usize);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(self.dimension as u32).to_le_bytes());
        for (key, entry) in &order {
            bytes.extend_from_slice(&key[..]);
            for x in &entry.vector {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
            bytes.extend_from_slice(&entry.mac);
        }
        let kept: std::collections::HashSet<[u8; HASH]> = order.iter().map(|(k, _)| **k).collect();
        self.entries.retain(|k, _| kept.contains(k));
        self.dirty = false;
        Some(PendingSave { path, bytes })
    }
}

/// Whether no one but the owner may write the file.
fn is_unwritable_by_others(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.mode() & 0o022 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// A cache's file as [`VectorCache::take_save`] took it, to be written.
#[derive(Debug)]
pub struct PendingSave {
    path: PathBuf,
    bytes: Vec<u8>,
}

impl PendingSave {
    /// Writes the file: its folder made (mode 0700) when missing and checked to be private, then
    /// through `pcd_bounded_read::replace` (a new owner-only temporary file, synced, renamed only
    /// over an absent path or the user's own regular file).
    pub fn write(self) -> Result<(), VectorCacheProblem> {
        if let Some(folder) = self.path.parent() {
            create_private_folder(folder)
                .map_err(|e| VectorCacheProblem::CreateFolder(e.kind()))?;
            let meta = std::fs::symlink_metadata(folder)
                .map_err(|e| VectorCacheProblem::CreateFolder(e.kind()))?;
            if let Some(problem) = private_folder(&meta, effective_uid()) {
                return Err(VectorCacheProblem::Folder(problem));
            }
        }
        replace_file(&self.path, &self.bytes, 0o600).map_err(VectorCacheProblem::File)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entrys_mac_is_over_its_key_and_its_vectors_file_bytes() {
        let keyed = <Hmac<Sha256> as Mac>::new_from_slice(&[7; HASH]).unwrap();
        let key = [3u8; HASH];
        // Dimensions below, at and across the buffer's 128 halves.
        for dimension in [0, 1, 127, 128, 129, 384] {
            let v: Vec<f16> = (0..dimension)
                .map(|i| f16::from_f32(i as f32 * 0.25 - 3.0))
                .collect();
            assert_eq!(
                vector_mac(&keyed, &key, &v),
                entry_mac(&keyed, &key, &vector_bytes(&v)),
                "dimension {dimension}"
            );
        }
    }

    #[test]
    fn get_all_gives_what_get_gives_and_drops_a_forged_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache").join("vectors.bin");
        let mut cache = open(&path, "m", 4, 1 << 20);
        cache.insert("a", &vector(1.0));
        cache.insert("b", &vector(2.0));
        cache.save().unwrap();
        let mut reopened = open(&path, "m", 4, 1 << 20);
        // The second entry's vector altered on disk: its MAC fails, so it reads as missing.
        let mut bytes = std::fs::read(&path).unwrap();
        // The last byte of the last entry's vector (its 32-byte HMAC follows).
        let last = bytes.len() - HASH - 1;
        bytes[last] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let mut forged = open(&path, "m", 4, 1 << 20);
        let all = forged.get_all(&["a", "b", "never"]);
        let good = all.iter().filter(|v| v.is_some()).count();
        assert_eq!(good, 1, "one of the two entries was altered");
        assert!(all[2].is_none());
        assert_eq!(forged.len(), 1, "the forged entry is dropped");
        assert_eq!(
            reopened.get_all(&["a", "b"]),
            vec![reopened.get("a"), reopened.get("b")]
        );
        assert_eq!(reopened.get("a"), Some(vector(1.0)));
    }

    /// The secret every test cache is keyed with.
    fn secret() -> CacheSecret {
        CacheSecret::from_bytes([7; HASH])
    }

    /// Opens a cache with the test secret, expecting no problem.
    fn open(path: &Path, model: &str, dimension: usize, max_bytes: u64) -> VectorCache {
        let (cache, problem) = VectorCache::open(path, &secret(), model, dimension, max_bytes);
        assert_eq!(problem, None);
        cache
    }

    fn vector(seed: f32) -> Vec<f32> {
        (0..4).map(|i| seed + i as f32).collect()
    }

    /// A text's key is SHA-256 of the vectors' key, the byte 0 and the text, whatever the
    /// lengths (so files written before the prefix was kept read the same): below, at and across
    /// SHA-256's 64-byte blocks.
    #[test]
    fn a_texts_key_is_the_hash_of_the_model_a_zero_and_the_text() {
        for model in ["m", &"k".repeat(63), &"k".repeat(64), &"k".repeat(215)] {
            let cache = VectorCache::in_memory(model, 4);
            for text in ["", "send mail", &"t".repeat(200)] {
                let mut whole = model.as_bytes().to_vec();
                whole.push(0);
                whole.extend_from_slice(text.as_bytes());
                let expected: [u8; HASH] = Sha256::digest(&whole).into();
                assert_eq!(cache.key(text), expected, "{} {}", model.len(), text.len());
            }
        }
    }

    #[test]
    fn vectors_survive_a_reopen_and_are_keyed_by_model_and_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut cache = open(&path, "model-a", 4, 1 << 20);
        cache.insert("send mail", &vector(1.0));
        cache.save().unwrap();
        let mut again = open(&path, "model-a", 4, 1 << 20);
        assert_eq!(again.get("send mail"), Some(vector(1.0)));
        assert_eq!(again.get("send mail "), None);
        let mut other = open(&path, "model-b", 4, 1 << 20);
        assert_eq!(other.get("send mail"), None);
    }

    #[test]
    fn a_truncated_or_foreign_file_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut cache = open(&path, "m", 4, 1 << 20);
        cache.insert("a", &vector(1.0));
        cache.insert("b", &vector(2.0));
        cache.save().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let mut torn = open(&path, "m", 4, 1 << 20);
        assert!(torn.is_empty());
        torn.insert("c", &vector(3.0));
        torn.save().unwrap();
        assert_eq!(open(&path, "m", 4, 1 << 20).len(), 1);
        std::fs::write(&path, b"not a cache at all").unwrap();
        assert!(open(&path, "m", 4, 1 << 20).is_empty());
        // Another dimension.
        assert!(open(&path, "m", 8, 1 << 20).is_empty());
        // A folder where the file should be: empty, and saving reports the error.
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        let (mut in_folder, problem) = VectorCache::open(&folder, &secret(), "m", 4, 1 << 20);
        assert_eq!(
            problem,
            Some(VectorCacheProblem::File(
                pcd_model::FileWriteProblem::Directory
            ))
        );
        in_folder.insert("a", &vector(1.0));
        assert_eq!(
            in_folder.save(),
            Err(VectorCacheProblem::File(
                pcd_model::FileWriteProblem::Directory
            ))
        );
        assert!(folder.is_dir());
    }

    #[test]
    fn the_least_recently_used_go_first_when_the_bound_is_reached() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let entry = VectorCache::entry_bytes(4);
        let bound = 12 + 2 * entry;
        let mut cache = open(&path, "m", 4, bound);
        cache.insert("old", &vector(1.0));
        cache.insert("used", &vector(2.0));
        assert!(cache.get("old").is_some());
        cache.insert("new", &vector(3.0));
        cache.save().unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() <= bound);
        let mut again = open(&path, "m", 4, bound);
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
        let mut cache = open(&path, "m", 4, 1 << 20);
        cache.insert("a", &vector(1.0));
        assert!(cache.save().is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        assert!(!path.exists());

        let elsewhere = tempfile::tempdir().unwrap();
        let path = elsewhere.path().join("vectors.bin");
        let mut cache = open(&path, "m", 4, 1 << 20);
        cache.insert("a", &vector(1.0));
        cache.save().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        assert_eq!(open(&path, "m", 4, 1 << 20).len(), 1);
    }

    /// A save taken under a lock and written after it gives the same file as a plain save.
    #[test]
    fn a_save_taken_now_and_written_later_is_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one.bin"), dir.path().join("two.bin"));
        let mut a = open(&one, "m", 4, 1 << 20);
        let mut b = open(&two, "m", 4, 1 << 20);
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
                        let mut cache = open(&path, "m", 4, 1 << 20);
                        cache.insert(&format!("{t}-{round}"), &vector(t as f32));
                        cache.save().unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut cache = open(&path, "m", 4, 1 << 20);
        assert!(!cache.is_empty(), "the last writer's whole file is read");
        let any = (0..8).any(|t| cache.get(&format!("{t}-19")) == Some(vector(t as f32)));
        assert!(any);
        let leftovers = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name() != "vectors.bin")
            .count();
        assert_eq!(leftovers, 0, "no temporary file is left behind");
    }

    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Issue 32, item 1: whoever could write the file chose every tool's vector, since its keys
    /// are public. A cache written with another secret (another account's, or a planted file
    /// made from the public keys) has no entry that is used: each is dropped on first use, so
    /// its text is embedded again, and the next save replaces them.
    #[test]
    fn entries_written_without_this_users_secret_are_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let planted = CacheSecret::from_bytes([9; HASH]);
        let (mut theirs, _) = VectorCache::open(&path, &planted, "m", 4, 1 << 20);
        theirs.insert("send mail", &vector(9.0));
        theirs.save().unwrap();
        let mut ours = open(&path, "m", 4, 1 << 20);
        assert_eq!(ours.len(), 1, "read, but not yet used");
        let mut batch = open(&path, "m", 4, 1 << 20);
        batch.check(&["send mail", "not cached"]);
        assert_eq!(batch.len(), 0, "a batch check drops it too");
        assert_eq!(ours.get("send mail"), None, "a forged entry is never used");
        assert_eq!(ours.len(), 0, "and dropped");
        ours.insert("send mail", &vector(1.0));
        ours.save().unwrap();
        assert_eq!(
            open(&path, "m", 4, 1 << 20).get("send mail"),
            Some(vector(1.0))
        );
        // One flipped bit in a vector the user wrote: that entry alone is recomputed.
        let mut both = open(&path, "m", 4, 1 << 20);
        both.insert("read file", &vector(2.0));
        both.save().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let first_vector = MAGIC.len() + 4 + HASH;
        bytes[first_vector] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let mut flipped = open(&path, "m", 4, 1 << 20);
        let found = [flipped.get("send mail"), flipped.get("read file")];
        assert_eq!(found.iter().filter(|v| v.is_none()).count(), 1, "{found:?}");
    }

    /// A cache in a folder others can write (a shared `XDG_CACHE_HOME`, a folder that became the
    /// cache folder) is not read, and nothing is written there: the run keeps its vectors in
    /// memory. A folder another account owns is the same (checked with its owner's id here, and
    /// for real as root).
    #[test]
    fn a_cache_in_a_folder_others_can_write_or_own_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("shared");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("vectors.bin");
        let mut mine = open(&path, "m", 4, 1 << 20);
        mine.insert("a", &vector(1.0));
        mine.save().unwrap();
        let before = std::fs::read(&path).unwrap();
        chmod(&folder, 0o777);
        let (mut cache, problem) = VectorCache::open(&path, &secret(), "m", 4, 1 << 20);
        assert_eq!(
            problem,
            Some(VectorCacheProblem::Folder(
                pcd_model::FolderProblem::WritableByOthers
            ))
        );
        assert!(!cache.on_disk() && cache.is_empty());
        cache.insert("b", &vector(2.0));
        assert_eq!(cache.save(), Ok(()));
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "nothing written there"
        );
        chmod(&folder, 0o700);
        if effective_uid() == 0 {
            std::os::unix::fs::chown(&folder, Some(4242), Some(4242)).unwrap();
            let (cache, problem) = VectorCache::open(&path, &secret(), "m", 4, 1 << 20);
            assert_eq!(
                problem,
                Some(VectorCacheProblem::Folder(
                    pcd_model::FolderProblem::NotOwned
                ))
            );
            assert!(cache.is_empty());
        }
    }

    /// The cache's own file: another account's (root can make one) is neither read nor
    /// replaced; the user's own that others may write is not read and is replaced by the save.
    #[test]
    fn a_cache_file_others_own_or_can_write_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut mine = open(&path, "m", 4, 1 << 20);
        mine.insert("a", &vector(1.0));
        mine.save().unwrap();
        chmod(&path, 0o666);
        let (mut cache, problem) = VectorCache::open(&path, &secret(), "m", 4, 1 << 20);
        assert_eq!(problem, Some(VectorCacheProblem::FileWritableByOthers));
        assert!(cache.is_empty());
        cache.save().unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().mode() & 0o777,
            0o600,
            "replaced"
        );
        assert!(open(&path, "m", 4, 1 << 20).is_empty());
        if effective_uid() == 0 {
            let mut mine = open(&path, "m", 4, 1 << 20);
            mine.insert("a", &vector(1.0));
            mine.save().unwrap();
            std::os::unix::fs::chown(&path, Some(4242), Some(4242)).unwrap();
            let before = std::fs::read(&path).unwrap();
            let (mut cache, problem) = VectorCache::open(&path, &secret(), "m", 4, 1 << 20);
            assert_eq!(
                problem,
                Some(VectorCacheProblem::File(
                    pcd_model::FileWriteProblem::NotOwned
                ))
            );
            assert!(cache.is_empty());
            cache.insert("b", &vector(2.0));
            assert_eq!(
                cache.save(),
                Err(VectorCacheProblem::File(
                    pcd_model::FileWriteProblem::NotOwned
                ))
            );
            assert_eq!(std::fs::read(&path).unwrap(), before);
        }
    }

    /// Issue 32, item 2: a FIFO or a device at the cache's path (`PCD_VECTOR_CACHE`) is read
    /// without waiting, refused by the save with its kind, and stays what it was.
    #[test]
    fn a_fifo_or_device_at_the_cache_path_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let (mut cache, problem) = VectorCache::open(&fifo, &secret(), "m", 4, 1 << 20);
        assert_eq!(
            problem,
            Some(VectorCacheProblem::File(pcd_model::FileWriteProblem::Fifo))
        );
        cache.insert("a", &vector(1.0));
        assert_eq!(
            cache.save(),
            Err(VectorCacheProblem::File(pcd_model::FileWriteProblem::Fifo))
        );
        let device = dir.path().join("null");
        let made = std::process::Command::new("mknod")
            .arg(&device)
            .args(["c", "1", "3"])
            .status()
            .is_ok_and(|s| s.success());
        if made {
            let (mut cache, _) = VectorCache::open(&device, &secret(), "m", 4, 1 << 20);
            cache.insert("a", &vector(1.0));
            assert_eq!(
                cache.save(),
                Err(VectorCacheProblem::File(
                    pcd_model::FileWriteProblem::Device
                ))
            );
            let kind = std::fs::symlink_metadata(&device).unwrap().file_type();
            assert!(std::os::unix::fs::FileTypeExt::is_char_device(&kind));
        }
        let names = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(names, if made { 2 } else { 1 }, "no temporary file is left");
    }

    /// The secret: made once with mode 0600 and read back the same; one others may read is
    /// replaced by a new one; one that is a link or another account's is refused.
    #[test]
    fn the_secret_is_private_and_a_shared_one_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pi-context-decisions").join(SECRET_FILE);
        let first = CacheSecret::load_or_create(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(CacheSecret::load_or_create(&path).unwrap().0, first.0);
        chmod(&path, 0o644);
        let second = CacheSecret::load_or_create(&path).unwrap();
        assert_ne!(second.0, first.0, "a secret others could read is replaced");
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        let link = dir.path().join("link.key");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(
            CacheSecret::load_or_create(&link).unwrap_err(),
            VectorCacheProblem::KeyUnreadable(FileReadProblem::Symlink)
        );
        if effective_uid() == 0 {
            std::os::unix::fs::chown(&path, Some(4242), Some(4242)).unwrap();
            assert_eq!(
                CacheSecret::load_or_create(&path).unwrap_err(),
                VectorCacheProblem::KeyNotPrivate
            );
        }
    }
}
