//! FNV-1a, the hasher for the small name indexes on the hot paths (the gate's tool index, the
//! `mcp.json` reader's key merging, the embedded scorer's term index). The names come from Pi's
//! registry or a local file: SipHash's protection against chosen collisions buys nothing there,
//! and its cost is a large share of a per-call verdict.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// 64-bit FNV-1a.
#[derive(Debug, Default, Clone, Copy)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Builds [`Fnv`] hashers.
pub type FnvBuild = BuildHasherDefault<Fnv>;

/// A `HashMap` hashed with [`Fnv`].
pub type FnvMap<K, V> = HashMap<K, V, FnvBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    #[test]
    fn known_vectors() {
        // FNV-1a 64 of "a" and "foobar" (published test vectors).
        let hash = |s: &[u8]| {
            let mut h = Fnv::default();
            h.write(s);
            h.finish()
        };
        assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash(b"foobar"), 0x8594_4171_f739_67e8);
        let mut map: FnvMap<&str, u32> = FnvMap::default();
        map.insert("tool", 1);
        assert_eq!(map.get("tool"), Some(&1));
        let mut h = Fnv::default();
        "x".hash(&mut h);
        assert_ne!(h.finish(), 0);
    }
}
