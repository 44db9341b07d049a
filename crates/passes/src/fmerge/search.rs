//! Candidate search: [F3M] §III-C and §III-D's locality-sensitive hashing
//! and, as the baseline it replaces, exhaustive ranking over every pair
//! ([HYFM] and [ROCHA-PHD]'s exploration framework; full references in
//! docs/DESIGN.md).
//!
//! # LSH
//!
//! A MinHash fingerprint of `k = b·r` hashes is cut into `b` bands of `r`
//! rows; each band is hashed (FNV-1a) and the function is put in that band's
//! bucket. Two functions whose MinHash similarity is `s` share at least one
//! bucket with probability `p = 1 − (1 − s^r)^b` (Equation 2), so a query
//! compares a function only with the members of its `b` buckets — at most
//! [`BUCKET_CAP`] members taken per bucket, since a few buckets of very common
//! shingles collect many functions and would make the search quadratic
//! again. Of more than [`COMPARE_BUDGET`] distinct members, only those
//! sharing the most bands with the query are compared (a departure from
//! F3M, which compares all: the shared-band count estimates `b·s^r`, and
//! without the budget a query's comparisons grew with the module until the
//! buckets filled, 2.9 times from 1,000 to 10,000 functions). Candidates
//! whose similarity is below the threshold `t` are
//! dropped; the rest are ranked by similarity, ties by id (ids are given in
//! name order, so the ranking does not depend on the module's order), and
//! the first `N` (the exploration threshold) are returned.
//!
//! *Static* parameters are F3M's defaults `k = 200, r = 2, b = 100, t = 0`.
//! *Adaptive* ones depend on the number `x` of functions (Equation 3):
//!
//! ```text
//! t = 0.05                    x ≤ 10^3.5
//! t = (log10 x − 3) / 10      10^3.5 < x < 10^7
//! t = 0.4                     x ≥ 10^7
//! ```
//!
//! and `b = ⌈log 0.1 / log(1 − (t + 0.1)²)⌉` (Equation 4: a 90% chance of
//! finding pairs slightly above `t` with `r = 2`), set to exactly 100 below
//! 5,000 functions, as the paper does.
//!
//! # Exhaustive ranking
//!
//! Every live function is compared with the query, by MinHash similarity or
//! by the thesis' opcode/type-frequency estimate: `O(n)` per query, `O(n²)`
//! for a module. Kept for the scaling comparison and as an option.
//!
//! Cost: building is `O(n·b)`; an LSH query visits at most
//! `b · BUCKET_CAP` bucket members (counting shared bands) and compares at
//! most `COMPARE_BUDGET` fingerprints of `k` hashes.

use hashbrown::HashMap;

use super::fingerprint::{fnv1a, MinHash, OpcodeFrequency, MAX_HASHES};

/// F3M's cap on fingerprint comparisons per bucket and query (§III-C).
pub const BUCKET_CAP: usize = 100;

/// How candidates are found and ranked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Search {
    /// LSH with `t` and `b` from the number of functions (§III-D).
    #[default]
    LshAdaptive,
    /// LSH with `k = 200, r = 2, b = 100, t = 0`.
    LshStatic,
    /// Every pair, ranked by MinHash similarity.
    ExhaustiveMinHash,
    /// Every pair, ranked by the opcode/type-frequency estimate (HyFM).
    ExhaustiveFrequency,
}

impl Search {
    /// The name used in options and reports.
    pub fn name(self) -> &'static str {
        match self {
            Search::LshAdaptive => "adaptive",
            Search::LshStatic => "static",
            Search::ExhaustiveMinHash => "exhaustive",
            Search::ExhaustiveFrequency => "exhaustive-frequency",
        }
    }

    /// Looks a search up by [`Search::name`].
    pub fn from_name(name: &str) -> Option<Search> {
        [
            Search::LshAdaptive,
            Search::LshStatic,
            Search::ExhaustiveMinHash,
            Search::ExhaustiveFrequency,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

/// LSH parameters: `r` rows per band, `b` bands, similarity threshold `t`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LshParams {
    pub rows: usize,
    pub bands: usize,
    pub threshold: f64,
}

impl LshParams {
    /// F3M's static configuration.
    pub const STATIC: LshParams = LshParams {
        rows: 2,
        bands: 100,
        threshold: 0.0,
    };

    /// F3M-adapt for a program of `functions` functions (Equations 3, 4).
    pub fn adaptive(functions: usize) -> LshParams {
        let x = functions.max(1) as f64;
        let threshold = if x <= 10f64.powf(3.5) {
            0.05
        } else if x < 1e7 {
            (x.log10() - 3.0) / 10.0
        } else {
            0.4
        };
        let bands = if functions < 5_000 {
            100
        } else {
            let s = threshold + 0.1;
            (0.1f64.ln() / (1.0 - s * s).ln()).ceil() as usize
        };
        LshParams {
            rows: 2,
            bands: bands.clamp(1, MAX_HASHES / 2),
            threshold,
        }
    }

    /// The fingerprint size `k = b·r`.
    pub fn hashes(&self) -> usize {
        self.rows * self.bands
    }
}

/// Fingerprint comparisons per query at most: of more members of a
/// query's buckets, those sharing the most bands with it are compared.
///
/// The number of bands two functions share estimates `b·s^r`, so the
/// members sharing the most are the most similar ones, but only roughly:
/// the budget is many times the exploration threshold, and the exact
/// MinHash similarity ranks the members it keeps. Without it a query
/// compares up to `b ·` [`BUCKET_CAP`] members, which grows with the
/// module until buckets fill (a module of 10,000 functions compared 2.9
/// times as many per query as one of 1,000); with it, a query costs the
/// counting of bucket members plus at most this many comparisons.
pub const COMPARE_BUDGET: usize = 128;

/// A member of a query's buckets and the number of bands it shares with
/// the query.
#[derive(Clone, Copy, Debug)]
struct BandMatch {
    id: u32,
    bands: u32,
}

/// Which query last met an id in its buckets (so each id is taken once
/// per query, however many bands it shares) and its index in that query's
/// members.
#[derive(Clone, Copy, Debug)]
struct Mark {
    query: u32,
    slot: u32,
}

/// A ranked candidate: an id of the index and its estimated similarity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    pub id: usize,
    pub similarity: f64,
}

/// One indexed function.
#[derive(Clone, Debug)]
struct Entry {
    minhash: MinHash,
    frequency: Option<OpcodeFrequency>,
}

/// The ids in one LSH bucket, in insertion order, and how many of them were
/// removed since it was last compacted.
///
/// A query skips removed ids without counting them against
/// [`BUCKET_CAP`], so a bucket of a common shingle that fills with merged
/// functions would cost every later query a scan over them: the bucket is
/// compacted once half of it is removed (the live ids keep their order, so
/// queries find the same candidates).
#[derive(Clone, Debug, Default)]
struct Bucket {
    ids: Vec<u32>,
    removed: usize,
}

/// The search structure over a module's candidate functions.
pub struct SearchIndex {
    search: Search,
    params: LshParams,
    exploration: usize,
    entries: Vec<Entry>,
    /// `(band, band hash)` → ids, in insertion order.
    buckets: HashMap<(u32, u32), Bucket>,
    /// Per id, whether it is still a candidate (apart from `entries`, whose
    /// fingerprints a query's scan over bucket members does not read).
    alive: Vec<bool>,
    /// Per id, the last query that met it and where (see [`Mark`]).
    marks: Vec<Mark>,
    query: u32,
    /// Fingerprint comparisons made so far.
    pub comparisons: u64,
}

impl SearchIndex {
    /// An empty index for a program of `functions` functions, returning the
    /// best `exploration` candidates per query.
    pub fn new(search: Search, functions: usize, exploration: usize) -> SearchIndex {
        let params = match search {
            Search::LshAdaptive => LshParams::adaptive(functions),
            _ => LshParams::STATIC,
        };
        SearchIndex {
            search,
            params,
            exploration,
            entries: Vec::new(),
            buckets: HashMap::new(),
            alive: Vec::new(),
            marks: Vec::new(),
            query: 0,
            comparisons: 0,
        }
    }

    /// The LSH parameters in use (the exhaustive searches use only `k`).
    pub fn params(&self) -> LshParams {
        self.params
    }

    /// Adds a function given its instruction encodings (and, for the
    /// frequency ranking, its opcode frequencies); returns its id.
    pub fn insert(&mut self, encodings: &[u32], frequency: Option<OpcodeFrequency>) -> usize {
        let minhash = MinHash::new(encodings, self.params.hashes());
        let id = self.entries.len();
        if self.uses_lsh() {
            for key in self.band_keys(&minhash) {
                self.buckets.entry(key).or_default().ids.push(id as u32);
            }
        }
        self.entries.push(Entry { minhash, frequency });
        self.alive.push(true);
        self.marks.push(Mark {
            query: u32::MAX,
            slot: 0,
        });
        id
    }

    /// The `(band, band hash)` keys of a fingerprint's buckets.
    fn band_keys(&self, minhash: &MinHash) -> Vec<(u32, u32)> {
        minhash
            .hashes
            .chunks(self.params.rows)
            .enumerate()
            .map(|(band, rows)| (band as u32, fnv1a(rows)))
            .collect()
    }

    /// Takes `id` out of every future ranking (it was merged away).
    pub fn remove(&mut self, id: usize) {
        if !self.alive[id] {
            return;
        }
        self.alive[id] = false;
        if !self.uses_lsh() {
            return;
        }
        for key in self.band_keys(&self.entries[id].minhash) {
            let Some(bucket) = self.buckets.get_mut(&key) else {
                continue;
            };
            bucket.removed += 1;
            if 2 * bucket.removed > bucket.ids.len() {
                let alive = &self.alive;
                bucket.ids.retain(|&other| alive[other as usize]);
                bucket.removed = 0;
            }
        }
    }

    /// Whether `id` is still a candidate.
    pub fn is_alive(&self, id: usize) -> bool {
        self.alive[id]
    }

    fn uses_lsh(&self) -> bool {
        matches!(self.search, Search::LshAdaptive | Search::LshStatic)
    }

    /// The best candidates to merge `id` with, best first.
    pub fn candidates(&mut self, id: usize) -> Vec<Candidate> {
        let mut found = if self.uses_lsh() {
            self.lsh_candidates(id)
        } else {
            self.exhaustive_candidates(id)
        };
        found.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(a.id.cmp(&b.id)));
        found.truncate(self.exploration);
        found
    }

    /// The members of `id`'s buckets (at most [`BUCKET_CAP`] new ones
    /// taken per bucket) at or above the threshold; of more than
    /// [`COMPARE_BUDGET`] members, only the budget that share the most
    /// bands with `id` are compared.
    fn lsh_candidates(&mut self, id: usize) -> Vec<Candidate> {
        let members = self.bucket_members(id);
        let mut found = Vec::new();
        for &BandMatch { id: other, .. } in &members {
            let similarity = self.entries[id]
                .minhash
                .similarity(&self.entries[other as usize].minhash);
            if similarity >= self.params.threshold {
                found.push(Candidate {
                    id: other as usize,
                    similarity,
                });
            }
        }
        self.comparisons += members.len() as u64;
        found
    }

    /// The live members of `id`'s buckets with the number of bands each
    /// shares with `id`: per bucket, at most [`BUCKET_CAP`] members not met
    /// in an earlier bucket are taken. More than [`COMPARE_BUDGET`] are cut
    /// to the budget, most shared bands first (ties in the order met).
    fn bucket_members(&mut self, id: usize) -> Vec<BandMatch> {
        self.query = self.query.wrapping_add(1);
        self.marks[id].query = self.query;
        let mut members: Vec<BandMatch> = Vec::new();
        for key in self.band_keys(&self.entries[id].minhash) {
            let Some(bucket) = self.buckets.get(&key) else {
                continue;
            };
            let mut taken = 0;
            for &other in &bucket.ids {
                if taken == BUCKET_CAP {
                    break;
                }
                let o = other as usize;
                if !self.alive[o] {
                    continue;
                }
                let mark = &mut self.marks[o];
                if mark.query == self.query {
                    if o != id {
                        members[mark.slot as usize].bands += 1;
                    }
                    continue;
                }
                *mark = Mark {
                    query: self.query,
                    slot: members.len() as u32,
                };
                members.push(BandMatch {
                    id: other,
                    bands: 1,
                });
                taken += 1;
            }
        }
        if members.len() > COMPARE_BUDGET {
            // Stable: equal counts stay in the order met.
            members.sort_by_key(|m| std::cmp::Reverse(m.bands));
            members.truncate(COMPARE_BUDGET);
        }
        members
    }

    /// Every other live function.
    fn exhaustive_candidates(&mut self, id: usize) -> Vec<Candidate> {
        let query = &self.entries[id];
        let mut found = Vec::new();
        for (other, entry) in self.entries.iter().enumerate() {
            if other == id || !self.alive[other] {
                continue;
            }
            let similarity = match (self.search, &query.frequency, &entry.frequency) {
                (Search::ExhaustiveFrequency, Some(a), Some(b)) => a.similarity(b),
                _ => query.minhash.similarity(&entry.minhash),
            };
            found.push(Candidate {
                id: other,
                similarity,
            });
        }
        self.comparisons += found.len() as u64;
        found
    }

    /// The MinHash similarity of two indexed functions.
    pub fn similarity(&self, a: usize, b: usize) -> f64 {
        self.entries[a].minhash.similarity(&self.entries[b].minhash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_parameters_follow_the_paper() {
        // §III-D: 100 bands below 5k functions; 57 at 10k, 25 at 100k,
        // 14 at 1M; t = 0.05 up to 10^3.5 functions, 0.4 from 10^7.
        let p = LshParams::adaptive(1_000);
        assert_eq!((p.bands, p.rows, p.threshold), (100, 2, 0.05));
        assert_eq!(LshParams::adaptive(10_000).bands, 57);
        assert_eq!(LshParams::adaptive(100_000).bands, 25);
        assert_eq!(LshParams::adaptive(1_000_000).bands, 14);
        assert!((LshParams::adaptive(100_000).threshold - 0.2).abs() < 1e-12);
        assert_eq!(LshParams::adaptive(20_000_000).threshold, 0.4);
        assert_eq!(LshParams::STATIC.hashes(), 200);
    }

    #[test]
    fn a_query_compares_the_budget_sharing_most_bands() {
        // 400 functions share a third of the query's shingles (about 11 of
        // 100 bands each), one is a near copy (most bands): all are bucket
        // members, only the budget is compared, and the copy is among them.
        let base: Vec<u32> = (0..60).collect();
        let mut index = SearchIndex::new(Search::LshStatic, 402, 5);
        let query = index.insert(&base, None);
        for i in 0..400u32 {
            let mut f = base.clone();
            for (j, x) in f.iter_mut().take(30).enumerate() {
                *x = 10_000 + i * 100 + j as u32;
            }
            index.insert(&f, None);
        }
        let mut near = base.clone();
        near[59] = 99_999;
        let copy = index.insert(&near, None);
        let found = index.candidates(query);
        assert_eq!(index.comparisons, COMPARE_BUDGET as u64);
        assert_eq!(found.first().map(|c| c.id), Some(copy), "{found:?}");
    }

    #[test]
    fn lsh_finds_similar_and_ranks_them_first() {
        let base: Vec<u32> = (0..60).collect();
        let mut near = base.clone();
        near[30] = 999;
        let far: Vec<u32> = (500..560).collect();
        let mut index = SearchIndex::new(Search::LshStatic, 3, 5);
        let a = index.insert(&base, None);
        let b = index.insert(&far, None);
        let c = index.insert(&near, None);
        let found = index.candidates(a);
        assert_eq!(found.first().map(|c| c.id), Some(c));
        assert!(found.iter().all(|x| x.id != b), "{found:?}");
        index.remove(c);
        assert!(index.candidates(a).iter().all(|x| x.id != c));
        let mut exhaustive = SearchIndex::new(Search::ExhaustiveMinHash, 3, 5);
        for f in [&base, &far, &near] {
            exhaustive.insert(f, None);
        }
        let all = exhaustive.candidates(0);
        assert_eq!(all.iter().map(|c| c.id).collect::<Vec<_>>(), vec![2, 1]);
    }
}
