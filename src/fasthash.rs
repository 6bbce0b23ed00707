//! A small, fast, non-cryptographic hasher (the Fx hash used by rustc) for
//! interning millions of paths. Evidence files are local build outputs, so
//! hash flooding is a performance concern at worst, never a safety one.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Fx hasher state.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
            ]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` using [`FxHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    #[test]
    fn distinct_keys_stay_distinct() {
        let mut m = super::FastMap::default();
        for i in 0..10_000 {
            m.insert(format!("/src/dir{}/file{}.h", i % 97, i), i);
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get("/src/dir4/file100.h"), None);
        assert_eq!(m.get("/src/dir3/file100.h"), Some(&100));
        assert_eq!(m.get("/src/dir3/file3.h"), Some(&3));
    }
}
