//! Function fingerprints: [F3M] §III-B's MinHash over instruction shingles
//! and the opcode-frequency fingerprint of [HYFM] and [ROCHA-PHD]
//! ("Focusing on Profitable Functions"), kept for comparison and for the
//! exhaustive baseline search (full references in docs/DESIGN.md).
//!
//! # Instruction encoding
//!
//! F3M hashes a function not as text but as a sequence of 32-bit integers,
//! one per instruction, holding what decides whether two instructions can be
//! merged ([`encode`]):
//!
//! ```text
//! bits  0..8   opcode
//! bits  8..16  type of the first result (0: none)
//! bits 16..20  operand count (saturating at 15)
//! bits 20..28  product of the operand types' primes, mod 251
//! bits 28..32  memory-flags class: notrap, aligned, readonly, big-endian
//! ```
//!
//! Constant-like instructions (`iconst`, float and vector constants,
//! `symbol_value`, `func_addr`; see [`is_constant`]) are *operands* to the
//! merger, as constants are in LLVM, and are left out of the sequence.
//!
//! # MinHash
//!
//! The sequence is cut into overlapping shingles of length 2; each shingle
//! is hashed once with FNV-1a (32 bits) and the hash is xored with `k` fixed
//! random values ([`SEEDS`], from SplitMix64 with a fixed seed, so the same
//! on every machine and in every run) to stand for `k` hash functions. The
//! fingerprint keeps, per hash function, the smallest value over all
//! shingles. The fraction of positions where two fingerprints agree
//! estimates the Jaccard index of their shingle sets within `O(1/√k)`.
//!
//! Cost: `O(n·k)` per function of `n` instructions; `O(k)` per comparison.

use cranelift_codegen::ir::{Function, Inst, InstructionData, Opcode, Type};

/// The largest fingerprint size (F3M's default `k`).
pub const MAX_HASHES: usize = 200;

/// `k` fixed random values, one per MinHash hash function.
pub const SEEDS: [u32; MAX_HASHES] = seeds();

const fn seeds() -> [u32; MAX_HASHES] {
    // SplitMix64 (Steele, Lea and Flood, OOPSLA 2014) from a fixed seed.
    let mut out = [0u32; MAX_HASHES];
    let mut state: u64 = 0xF3F3_2022_C0DE_5EED;
    let mut i = 0;
    while i < MAX_HASHES {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        out[i] = (z >> 32) as u32;
        i += 1;
    }
    out
}

/// FNV-1a, 32 bits, over the little-endian bytes of `words`.
pub fn fnv1a(words: &[u32]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for w in words {
        for b in w.to_le_bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// Whether `inst` only materialises a constant (an integer, float or vector
/// constant, a symbol's address or a function's address). The merger treats
/// these as operands: it rematerialises them where they are used and
/// selects between two different ones.
pub fn is_constant(func: &Function, inst: Inst) -> bool {
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            ..
        }
        | InstructionData::UnaryIeee16 { .. }
        | InstructionData::UnaryIeee32 { .. }
        | InstructionData::UnaryIeee64 { .. }
        | InstructionData::FuncAddr { .. } => true,
        InstructionData::UnaryConst {
            opcode: Opcode::Vconst,
            ..
        } => true,
        InstructionData::UnaryGlobalValue {
            opcode: Opcode::SymbolValue,
            global_value,
        } => matches!(
            func.global_values[global_value],
            cranelift_codegen::ir::GlobalValueData::Symbol { tls: false, .. }
        ),
        _ => false,
    }
}

/// A small code for a type: lane kind, log2 of the lane width, log2 of the
/// lane count.
pub fn type_code(ty: Type) -> u32 {
    if ty == cranelift_codegen::ir::types::INVALID {
        return 0;
    }
    let lane = ty.lane_type();
    let kind = if lane.is_int() {
        1
    } else if lane.is_float() {
        2
    } else {
        3
    };
    kind | (lane.lane_bits().max(1).trailing_zeros() << 2) | (ty.log2_lane_count() << 5)
}

/// The prime standing for a type in the operand-type product.
fn type_prime(ty: Type) -> u32 {
    const PRIMES: [u32; 16] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53];
    PRIMES[(type_code(ty) % 16) as usize]
}

/// The F3M integer encoding of one instruction (see the module doc).
pub fn encode(func: &Function, inst: Inst) -> u32 {
    let dfg = &func.dfg;
    let opcode = dfg.insts[inst].opcode() as u32 & 0xff;
    let result = dfg
        .inst_results(inst)
        .first()
        .map_or(0, |&r| type_code(dfg.value_type(r)) & 0xff);
    let args = dfg.inst_args(inst);
    let count = (args.len() as u32).min(15);
    let product = args
        .iter()
        .fold(1u32, |p, &a| (p * type_prime(dfg.value_type(a))) % 251);
    opcode | (result << 8) | (count << 16) | (product << 20) | (memory_class(func, inst) << 28)
}

/// Four bits of a memory access's flags (0 for other instructions).
fn memory_class(func: &Function, inst: Inst) -> u32 {
    let Some(flags) = func.dfg.insts[inst].memflags() else {
        return 0;
    };
    let data = func.dfg.mem_flags[flags];
    u32::from(data.notrap())
        | u32::from(data.aligned()) << 1
        | u32::from(data.readonly()) << 2
        | u32::from(data.explicit_endianness() == Some(cranelift_codegen::ir::Endianness::Big)) << 3
}

/// The encodings of `func`'s non-constant instructions in layout order.
pub fn encodings(func: &Function) -> Vec<u32> {
    func.layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .filter(|&i| !is_constant(func, i))
        .map(|i| encode(func, i))
        .collect()
}

/// A MinHash fingerprint: per hash function, the smallest hash of a shingle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MinHash {
    pub hashes: Vec<u32>,
}

impl MinHash {
    /// The fingerprint of `k ≤ MAX_HASHES` hash functions over the
    /// 2-shingles of `encodings` (a single instruction is one shingle with
    /// a zero partner; no instruction gives all-`u32::MAX`).
    pub fn new(encodings: &[u32], k: usize) -> MinHash {
        let k = k.min(MAX_HASHES);
        let mut hashes = vec![u32::MAX; k];
        let mut add = |shingle: [u32; 2]| {
            let h = fnv1a(&shingle);
            for (min, seed) in hashes.iter_mut().zip(&SEEDS) {
                *min = (*min).min(h ^ seed);
            }
        };
        match encodings {
            [] => {}
            [only] => add([*only, 0]),
            _ => encodings.windows(2).for_each(|w| add([w[0], w[1]])),
        }
        MinHash { hashes }
    }

    /// The Jaccard estimate: the fraction of hash functions whose minima agree.
    pub fn similarity(&self, other: &MinHash) -> f64 {
        let k = self.hashes.len().min(other.hashes.len());
        if k == 0 {
            return 0.0;
        }
        let equal = self
            .hashes
            .iter()
            .zip(&other.hashes)
            .filter(|(a, b)| a == b)
            .count();
        equal as f64 / k as f64
    }
}

/// The opcode-frequency fingerprint of HyFM (Rocha et al.) with the
/// thesis' type frequencies: sparse `(key, count)` lists sorted by key.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OpcodeFrequency {
    pub opcodes: Vec<(u16, u32)>,
    pub types: Vec<(u16, u32)>,
}

impl OpcodeFrequency {
    /// The frequencies of `func`'s non-constant instructions' opcodes and
    /// result types.
    pub fn of(func: &Function) -> OpcodeFrequency {
        OpcodeFrequency::from_encodings(&encodings(func))
    }

    /// The frequencies read off F3M encodings (opcode in bits 0..8, result
    /// type in bits 8..16).
    pub fn from_encodings(encodings: &[u32]) -> OpcodeFrequency {
        OpcodeFrequency {
            opcodes: counts(encodings.iter().map(|e| (e & 0xff) as u16).collect()),
            types: counts(encodings.iter().map(|e| ((e >> 8) & 0xff) as u16).collect()),
        }
    }

    /// The thesis' estimate `s = min(UB(opcodes), UB(types))`, where
    /// `UB(K) = Σ min(f1, f2) / Σ (f1 + f2)` over the keys `K`, doubled to
    /// range over `[0, 1]` like the MinHash similarity (1: same frequencies).
    pub fn similarity(&self, other: &OpcodeFrequency) -> f64 {
        2.0 * upper_bound(&self.opcodes, &other.opcodes).min(upper_bound(&self.types, &other.types))
    }

    /// HyFM's Manhattan distance between opcode-frequency vectors.
    pub fn distance(&self, other: &OpcodeFrequency) -> u32 {
        let (mut i, mut j, mut d) = (0, 0, 0u32);
        let (a, b) = (&self.opcodes, &other.opcodes);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    d += x.1.abs_diff(y.1);
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x.0 < y.0 => {
                    d += x.1;
                    i += 1;
                }
                (Some(x), None) => {
                    d += x.1;
                    i += 1;
                }
                (_, Some(y)) => {
                    d += y.1;
                    j += 1;
                }
                (None, None) => unreachable!(),
            }
        }
        d
    }
}

/// `(key, count)` pairs of `keys`, sorted by key.
fn counts(mut keys: Vec<u16>) -> Vec<(u16, u32)> {
    keys.sort_unstable();
    let mut out: Vec<(u16, u32)> = Vec::new();
    for k in keys {
        match out.last_mut() {
            Some((last, n)) if *last == k => *n += 1,
            _ => out.push((k, 1)),
        }
    }
    out
}

/// `Σ min(a_k, b_k) / Σ (a_k + b_k)` over sorted sparse frequency lists.
fn upper_bound(a: &[(u16, u32)], b: &[(u16, u32)]) -> f64 {
    let total: u32 = a.iter().chain(b).map(|&(_, n)| n).sum();
    if total == 0 {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0u32);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Equal => {
                common += a[i].1.min(b[j].1);
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    f64::from(common) / f64::from(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_fixed_and_distinct() {
        // The fingerprint's reproducibility across machines rests on these.
        assert_eq!(SEEDS[0], seeds()[0]);
        let mut sorted = SEEDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), MAX_HASHES);
    }

    #[test]
    fn fnv1a_matches_the_reference_values() {
        // FNV-1a 32 of the empty input is the offset basis; of "a" (one byte
        // 0x61) it is 0xe40c292c. A u32 word hashes its four LE bytes.
        assert_eq!(fnv1a(&[]), 0x811c_9dc5);
        let mut h: u32 = 0x811c_9dc5;
        for b in [0x61u8, 0, 0, 0] {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        assert_eq!(fnv1a(&[0x61]), h);
    }

    #[test]
    fn minhash_estimates_jaccard() {
        let a: Vec<u32> = (0..400).collect();
        let same = MinHash::new(&a, 200);
        assert_eq!(same.similarity(&MinHash::new(&a, 200)), 1.0);
        // Half the shingles shared: J = 200 / 599 ≈ 0.33.
        let b: Vec<u32> = (200..600).collect();
        let s = same.similarity(&MinHash::new(&b, 200));
        assert!((0.2..0.47).contains(&s), "{s}");
        let c: Vec<u32> = (1000..1400).collect();
        assert!(same.similarity(&MinHash::new(&c, 200)) < 0.05);
    }

    #[test]
    fn frequency_similarity_is_one_for_equal_counts() {
        let f = OpcodeFrequency {
            opcodes: vec![(1, 3), (2, 1)],
            types: vec![(5, 4)],
        };
        assert_eq!(f.similarity(&f), 1.0);
        assert_eq!(f.distance(&f), 0);
        let g = OpcodeFrequency {
            opcodes: vec![(1, 1), (3, 2)],
            types: vec![(5, 3)],
        };
        assert_eq!(f.distance(&g), 2 + 1 + 2);
        // UB(opcodes) = 1/7, UB(types) = 3/7.
        assert!((f.similarity(&g) - 2.0 / 7.0).abs() < 1e-9);
    }
}
