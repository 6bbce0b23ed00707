//! A small, fast, non-cryptographic hasher for interning millions of paths:
//! byte strings are mixed 16 bytes per 128-bit folded multiply (the scheme of
//! foldhash and wyhash), integers with the Fx step used by rustc. Evidence files are local build outputs, so
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

/// Multiplies as 128 bits and folds the halves together: every input bit
/// reaches every output bit (the mixing step of foldhash and wyhash).
#[inline]
fn folded_mul(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

#[inline]
fn word(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

const K1: u64 = 0x2436_f6a8_885a_308d;
const K2: u64 = 0x1319_8a2e_0370_7344;
const K3: u64 = 0xa409_3822_299f_31d0;

impl Hasher for FxHasher {
    /// Byte strings (paths, mostly 40-120 bytes) are taken 16 bytes per
    /// multiply; the last, partial block overlaps the one before it.
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let len = bytes.len();
        let mut h = self.hash ^ (len as u64).wrapping_mul(K3);
        if len <= 16 {
            let (a, b) = if len >= 8 {
                (word(bytes, 0), word(bytes, len - 8))
            } else if len >= 4 {
                let w = |at: usize| {
                    u64::from(u32::from_le_bytes([
                        bytes[at],
                        bytes[at + 1],
                        bytes[at + 2],
                        bytes[at + 3],
                    ]))
                };
                (w(0), w(len - 4))
            } else if len > 0 {
                (
                    u64::from(bytes[0])
                        | u64::from(bytes[len / 2]) << 8
                        | u64::from(bytes[len - 1]) << 16,
                    0,
                )
            } else {
                (0, 0)
            };
            h = folded_mul(a ^ K1 ^ h, b ^ K2);
        } else {
            let mut at = 0;
            while at + 16 < len {
                h = folded_mul(word(bytes, at) ^ K1 ^ h, word(bytes, at + 8) ^ K2);
                at += 16;
            }
            h = folded_mul(word(bytes, len - 16) ^ K1 ^ h, word(bytes, len - 8) ^ K2);
        }
        self.hash = h;
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
        folded_mul(self.hash ^ K3, K1)
    }
}

/// The hash a [`FastMap`] keyed by strings gives `s`, for tables that keep
/// the hash and not the string.
pub fn hash_str(s: &str) -> u64 {
    use std::hash::BuildHasher;
    BuildHasherDefault::<FxHasher>::default().hash_one(s)
}

/// A `HashMap` using [`FxHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A `HashSet` using [`FxHasher`].
pub type FastSet<T> = std::collections::HashSet<T, BuildHasherDefault<FxHasher>>;

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
