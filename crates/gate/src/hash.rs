//! A small FNV-1a hasher for the name index. The gate hashes one short, locally produced tool
//! name per call; SipHash's flooding resistance buys nothing there (the names come from Pi's own
//! registry) and costs a third of the verdict's budget.

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default)]
pub(crate) struct Fnv(u64);

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
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

pub(crate) type FnvBuild = BuildHasherDefault<Fnv>;
