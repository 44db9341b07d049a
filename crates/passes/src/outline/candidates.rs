//! Repeated substrings of the module's instruction string.
//!
//! The instructions of every function, mapped to integers, are concatenated
//! into one string `S` ([`super::find`]; illegal instructions and block
//! boundaries are unique separators, so no repeat spans them). A suffix array
//! of `S` (prefix doubling with radix sorts, `O(n log n)`: `O(n)` per
//! round) and its LCP array ([Kasai et al.
//! 2001], `O(n)`) give the internal nodes of the suffix tree as LCP intervals
//! ([Abouelhoda et al. 2004], one stack pass): an interval `[l, r]` of depth
//! `d` says that the `r - l + 1` suffixes `SA[l..=r]` share their first `d`
//! symbols. Each interval is one repeated substring with its occurrences —
//! what LLVM's MachineOutliner reads off its suffix tree (Lee, Ren and Hoag,
//! *Optimistic Global Function Merger*, arXiv:2312.03214, 2023, §2.1; full
//! references in the [outliner's module doc](super#references)).
//!
//! # References
//!
//! - [Kasai et al. 2001] Toru Kasai, Gunho Lee, Hiroki Arimura, Setsuo
//!   Arikawa and Kunsoo Park. *Linear-Time Longest-Common-Prefix
//!   Computation in Suffix Arrays and Its Applications.* In Combinatorial
//!   Pattern Matching (CPM 2001), LNCS 2089, pages 181–192. Springer, 2001.
//! - [Abouelhoda et al. 2004] Mohamed Ibrahim Abouelhoda, Stefan Kurtz and
//!   Enno Ohlebusch. *Replacing suffix trees with enhanced suffix arrays.*
//!   Journal of Discrete Algorithms 2(1), pages 53–86, 2004.
//!   <https://doi.org/10.1016/S1570-8667(03)00065-0>
//!
//! [Kasai et al. 2001]: #references
//! [Abouelhoda et al. 2004]: #references

/// A repeated substring: `len` symbols, starting at each of `starts` (sorted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repeat {
    pub len: usize,
    pub starts: Vec<usize>,
}

/// The suffix array of `s`.
///
/// Prefix doubling: round `k` orders the suffixes by their first `2k`
/// symbols, as pairs of ranks by their first `k`. Each round is two stable
/// counting sorts (by the second rank, read off the previous order, then by
/// the first), not a comparison sort: the module's string has a few
/// symbols per instruction, millions for a large module, and a comparison
/// sort of that many random-access keys per round made the outliner
/// superlinear. The suffix array is unique, so the method changes no output.
pub fn suffix_array(s: &[u32]) -> Vec<usize> {
    let n = s.len();
    if n <= 1 {
        return (0..n).collect();
    }
    // Dense ranks of the symbols, in symbol order.
    let mut symbols = s.to_vec();
    symbols.sort_unstable();
    symbols.dedup();
    let mut rank: Vec<usize> = s
        .iter()
        .map(|c| symbols.binary_search(c).expect("a symbol of s"))
        .collect();
    let mut sa: Vec<usize> = (0..n).collect();
    let mut by_second: Vec<usize> = Vec::with_capacity(n);
    counting_sort(&(0..n).collect::<Vec<_>>(), &rank, symbols.len(), &mut sa);
    let mut tmp = vec![0usize; n];
    let mut k = 1;
    loop {
        // By second rank: the suffixes without a second half first (rank
        // 0), then the others in the order of their second halves.
        by_second.clear();
        by_second.extend(n - k.min(n)..n);
        by_second.extend(sa.iter().filter(|&&i| i >= k).map(|&i| i - k));
        counting_sort(&by_second, &rank, n, &mut sa);
        let key = |i: usize| (rank[i], if i + k < n { rank[i + k] + 1 } else { 0 });
        tmp[sa[0]] = 0;
        for w in 1..n {
            tmp[sa[w]] = tmp[sa[w - 1]] + usize::from(key(sa[w - 1]) < key(sa[w]));
        }
        std::mem::swap(&mut rank, &mut tmp);
        if rank[sa[n - 1]] == n - 1 {
            break;
        }
        k *= 2;
    }
    sa
}

/// `order` stably sorted by `rank` (values below `bound`), into `out`.
fn counting_sort(order: &[usize], rank: &[usize], bound: usize, out: &mut [usize]) {
    let mut start = vec![0usize; bound + 1];
    for &i in order {
        start[rank[i] + 1] += 1;
    }
    for r in 0..bound {
        start[r + 1] += start[r];
    }
    for &i in order {
        out[start[rank[i]]] = i;
        start[rank[i]] += 1;
    }
}

/// `lcp[i]` = length of the common prefix of suffixes `sa[i-1]` and `sa[i]`
/// (`lcp[0] = 0`).
pub fn lcp_array(s: &[u32], sa: &[usize]) -> Vec<usize> {
    let n = s.len();
    let mut rank = vec![0usize; n];
    for (i, &p) in sa.iter().enumerate() {
        rank[p] = i;
    }
    let mut lcp = vec![0usize; n];
    let mut h = 0usize;
    for i in 0..n {
        if rank[i] > 0 {
            let j = sa[rank[i] - 1];
            while i + h < n && j + h < n && s[i + h] == s[j + h] {
                h += 1;
            }
            lcp[rank[i]] = h;
            h = h.saturating_sub(1);
        } else {
            h = 0;
        }
    }
    lcp
}

/// Every repeated substring of length ≥ `min_len` that is an internal node
/// of the suffix tree, with all its occurrences.
pub fn repeats(s: &[u32], min_len: usize) -> Vec<Repeat> {
    if s.len() < 2 {
        return Vec::new();
    }
    let sa = suffix_array(s);
    let lcp = lcp_array(s, &sa);
    let mut out = Vec::new();
    // Stack of (depth, left boundary).
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    for i in 1..=s.len() {
        let cur = if i < s.len() { lcp[i] } else { 0 };
        let mut left = i - 1;
        while stack.last().is_some_and(|&(d, _)| d > cur) {
            let (depth, l) = stack.pop().unwrap_or((0, 0));
            left = l;
            if depth >= min_len {
                let mut starts: Vec<usize> = sa[l..i].to_vec();
                starts.sort_unstable();
                out.push(Repeat { len: depth, starts });
            }
        }
        if stack.last().is_none_or(|&(d, _)| d < cur) {
            stack.push((cur, left));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_repeats(s: &[u32], min_len: usize) -> Vec<(Vec<u32>, usize)> {
        // Every substring of length ≥ min_len occurring at least twice,
        // keeping only those that are right-branching or maximal (the
        // internal nodes).
        let mut found = std::collections::BTreeMap::new();
        for len in min_len..s.len() {
            for i in 0..=s.len() - len {
                let sub = s[i..i + len].to_vec();
                let count = (0..=s.len() - len)
                    .filter(|&j| s[j..j + len] == sub[..])
                    .count();
                if count >= 2 {
                    let nexts: std::collections::BTreeSet<Option<u32>> = (0..=s.len() - len)
                        .filter(|&j| s[j..j + len] == sub[..])
                        .map(|j| s.get(j + len).copied())
                        .collect();
                    if nexts.len() > 1 {
                        found.insert(sub, count);
                    }
                }
            }
        }
        found.into_iter().collect()
    }

    #[test]
    fn repeats_match_a_naive_search() {
        let inputs: Vec<Vec<u32>> = vec![
            vec![1, 2, 3, 1, 2, 3, 1, 2, 4],
            vec![5, 5, 5, 5, 5],
            vec![1, 2, 100, 1, 2, 101, 3, 1, 2, 102],
            vec![7, 8, 9, 7, 8, 9, 200, 7, 8, 9, 201],
        ];
        for s in inputs {
            let mut got: Vec<(Vec<u32>, usize)> = repeats(&s, 2)
                .into_iter()
                .map(|r| (s[r.starts[0]..r.starts[0] + r.len].to_vec(), r.starts.len()))
                .collect();
            got.sort();
            assert_eq!(got, naive_repeats(&s, 2), "{s:?}");
        }
    }

    #[test]
    fn suffix_array_is_sorted() {
        let s = vec![3, 1, 2, 1, 2, 1, 0];
        let sa = suffix_array(&s);
        for w in sa.windows(2) {
            assert!(s[w[0]..] < s[w[1]..]);
        }
    }

    /// The radix-sorted suffix array equals a plain sort of the suffixes,
    /// on strings with runs, repeats, large separators and one symbol.
    #[test]
    fn suffix_array_matches_a_naive_sort() {
        let mut state = 7u64;
        let mut next = |bound: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) % bound
        };
        let mut inputs: Vec<Vec<u32>> = vec![vec![4], vec![9, 9], vec![5; 33]];
        for len in [2, 3, 10, 64, 500] {
            for alphabet in [1, 2, 3, 50] {
                let mut s: Vec<u32> = (0..len).map(|_| next(alphabet) as u32).collect();
                if len > 10 {
                    s[len / 2] = u32::MAX;
                    s[len - 1] = u32::MAX - 1;
                }
                inputs.push(s);
            }
        }
        for s in inputs {
            let mut naive: Vec<usize> = (0..s.len()).collect();
            naive.sort_by(|&a, &b| s[a..].cmp(&s[b..]));
            assert_eq!(suffix_array(&s), naive, "{s:?}");
        }
    }
}
