//! Choices drawn from an [`Unstructured`] byte stream, and the seeded byte
//! source used for reproducible runs.
//!
//! Invariant: every choice is total. When the bytes run out, `arbitrary`
//! returns the low end of each range, so [`Rng::below`] and
//! [`Rng::weighted`] return their first option and [`Rng::chance`] returns
//! `false`. The generator orders its options so that the first one is always
//! the smallest, simplest valid choice; an exhausted stream therefore yields
//! a small default program instead of an error.

use arbitrary::Unstructured;

/// Total choice functions over an [`Unstructured`].
pub(crate) struct Rng<'u, 'd> {
    u: &'u mut Unstructured<'d>,
}

impl<'u, 'd> Rng<'u, 'd> {
    pub(crate) fn new(u: &'u mut Unstructured<'d>) -> Self {
        Rng { u }
    }

    /// A number in `0..n` (0 when `n <= 1` or when out of bytes).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.u.int_in_range(0..=n - 1).unwrap_or(0)
    }

    /// A number in `lo..=hi` (`lo` when the range is empty or out of bytes).
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        self.u.int_in_range(lo..=hi).unwrap_or(lo)
    }

    /// True with probability `num / den`; false when out of bytes.
    pub(crate) fn chance(&mut self, num: u32, den: u32) -> bool {
        if num == 0 || den == 0 {
            return false;
        }
        if num >= den {
            return true;
        }
        let x = self.u.int_in_range(0..=den - 1).unwrap_or(0);
        x >= den - num
    }

    /// True with probability `p` (resolution 1/10000); false when out of bytes.
    pub(crate) fn prob(&mut self, p: f64) -> bool {
        let num = (p.clamp(0.0, 1.0) * 10000.0).round() as u32;
        self.chance(num, 10000)
    }

    /// An index into `weights`, chosen with probability proportional to its
    /// weight; the first option with a non-zero weight when out of bytes.
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        if total == 0 {
            return 0;
        }
        let mut r = self.u.int_in_range(0..=total - 1).unwrap_or(0);
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }

    /// One element of a non-empty slice (`None` for an empty one).
    pub(crate) fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        if xs.is_empty() {
            return None;
        }
        xs.get(self.below(xs.len()))
    }
}

/// The splitmix64 step: a small, well-mixed deterministic PRNG.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` pseudo-random bytes determined by `seed` alone.
pub(crate) fn seed_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed;
    let mut bytes = Vec::with_capacity(len + 8);
    while bytes.len() < len {
        bytes.extend_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    bytes.truncate(len);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhausted_stream_gives_first_options() {
        let mut u = Unstructured::new(&[]);
        let mut rng = Rng::new(&mut u);
        assert_eq!(rng.below(10), 0);
        assert_eq!(rng.range(-3, 7), -3);
        assert!(!rng.chance(9, 10));
        assert!(!rng.prob(0.99));
        assert_eq!(rng.weighted(&[0, 3, 4]), 1);
    }

    #[test]
    fn seed_bytes_are_deterministic() {
        assert_eq!(seed_bytes(7, 100), seed_bytes(7, 100));
        assert_ne!(seed_bytes(7, 100), seed_bytes(8, 100));
        assert_eq!(seed_bytes(1, 13).len(), 13);
    }
}
