//! `cgdata`: the codegen summary that links the rounds of a two-round build.
//!
//! Round 1 of a build analyses every module and records what later rounds
//! need to know about the whole program: the merge summary
//! ([`crate::merge`]), the one the inliner planned with before it
//! inlined ([`crate::merge::InlinerSummary`]), and the outlining prefix
//! tree ([`crate::outline`]).
//! The same container carries execution profiles ([`crate::profile`]),
//! whose target is `clif`.
//! Round 2 (or a later one-round build) reads it back. A cgdata file is a
//! *container* of independent **sections**, one per pass; each pass encodes
//! and decodes its own section through the [`Section`] trait, and this module
//! only frames them.
//!
//! # Format (version [`VERSION`], all integers little-endian)
//!
//! ```text
//! magic     8 bytes   "PARECGD\0"
//! version   u32       VERSION
//! length    u64       the length of the whole file, checksum included
//! target    str       the architecture the data describes ("aarch64", ...)
//! count     u32       number of sections
//! section*  count ×   kind: u32, length: u64, payload: length bytes
//!                     (kinds strictly increasing)
//! checksum  u64       xxh3-64 of every byte before it
//! ```
//!
//! A `str` is a `u32` byte length followed by UTF-8 bytes.
//!
//! # Invariants
//!
//! - *Deterministic*: encoding depends only on the contents; sections are
//!   written in kind order and each section's own encoding must be canonical
//!   (sorted, no hash-map iteration order).
//! - *Mergeable in any order*: [`Section::merge`] must be commutative and
//!   associative on the decoded form, so `cgdata merge` of the same inputs in
//!   any order gives the same bytes.
//! - *Checked*: a file that is truncated, corrupt (checksum), of another
//!   format version, or for another target is rejected with a
//!   [`CgDataError`] that says which; nothing here panics on any input.
//!   Unknown section kinds from a newer writer are an error too, since the
//!   version number is bumped whenever a section's meaning changes.

use std::collections::BTreeMap;
use std::fmt;

/// The first eight bytes of every cgdata file.
pub const MAGIC: &[u8; 8] = b"PARECGD\0";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;

/// The sections a cgdata file may hold, by their on-disk kind number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SectionKind {
    /// Stable-hash global function merging summary ([`crate::merge`]).
    Merge = 1,
    /// Global outlining prefix tree ([`crate::outline`]).
    Outline = 2,
    /// Execution profile: block counts by function ([`crate::profile`]).
    Profile = 3,
    /// The merge summary the inliner plans with when merging follows it,
    /// taken before it inlines ([`crate::merge::InlinerSummary`]).
    Inliner = 4,
}

impl SectionKind {
    fn from_u32(kind: u32) -> Option<SectionKind> {
        match kind {
            1 => Some(SectionKind::Merge),
            2 => Some(SectionKind::Outline),
            3 => Some(SectionKind::Profile),
            4 => Some(SectionKind::Inliner),
            _ => None,
        }
    }

    /// A human-readable name, for messages and `cgdata show`.
    pub fn name(self) -> &'static str {
        match self {
            SectionKind::Merge => "merge",
            SectionKind::Outline => "outline",
            SectionKind::Profile => "profile",
            SectionKind::Inliner => "inliner",
        }
    }
}

/// Why a cgdata file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CgDataError {
    /// The input ends before `what` at byte `offset` could be read.
    Truncated { offset: usize, what: &'static str },
    /// The file does not start with [`MAGIC`].
    NotCgData,
    /// The file was written by a different format version.
    Version { found: u32, expected: u32 },
    /// The file describes another target.
    Target { found: String, expected: String },
    /// The checksum does not match the contents.
    Checksum,
    /// The contents are structurally invalid (`offset` is where it showed).
    Corrupt { offset: usize, reason: String },
}

impl fmt::Display for CgDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CgDataError::Truncated { offset, what } => {
                write!(
                    f,
                    "truncated: the file ends at byte {offset}, inside {what}"
                )
            }
            CgDataError::NotCgData => write!(f, "not a cgdata file (bad magic number)"),
            CgDataError::Version { found, expected } => write!(
                f,
                "cgdata format version {found}, but this parec reads version {expected}"
            ),
            CgDataError::Target { found, expected } => write!(
                f,
                "cgdata was generated for target `{found}`, but this build targets `{expected}`"
            ),
            CgDataError::Checksum => write!(f, "corrupt: checksum mismatch"),
            CgDataError::Corrupt { offset, reason } => {
                write!(f, "corrupt at byte {offset}: {reason}")
            }
        }
    }
}

impl std::error::Error for CgDataError {}

/// A pass's part of a cgdata file.
pub trait Section: Sized {
    /// The kind under which this section is stored.
    const KIND: SectionKind;
    /// Appends the canonical encoding of `self`.
    fn encode(&self, w: &mut Writer);
    /// Decodes a section written by [`Section::encode`]; must consume all of
    /// `r` or report [`CgDataError::Corrupt`].
    fn decode(r: &mut Reader<'_>) -> Result<Self, CgDataError>;
    /// Combines another summary into this one (commutative, associative).
    fn merge(&mut self, other: Self);
}

/// A decoded cgdata container: the target and the raw section payloads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CgData {
    pub target: String,
    sections: BTreeMap<SectionKind, Vec<u8>>,
}

impl CgData {
    /// An empty container for `target`.
    pub fn new(target: &str) -> CgData {
        CgData {
            target: target.to_string(),
            sections: BTreeMap::new(),
        }
    }

    /// The kinds of the sections present, in kind order.
    pub fn kinds(&self) -> impl Iterator<Item = SectionKind> + '_ {
        self.sections.keys().copied()
    }

    /// Stores `section`, replacing a previous one of its kind.
    pub fn put<S: Section>(&mut self, section: &S) {
        let mut w = Writer::default();
        section.encode(&mut w);
        self.sections.insert(S::KIND, w.into_bytes());
    }

    /// Decodes the section of type `S`, if present.
    pub fn get<S: Section>(&self) -> Result<Option<S>, CgDataError> {
        let Some(bytes) = self.sections.get(&S::KIND) else {
            return Ok(None);
        };
        let mut r = Reader::new(bytes);
        let section = S::decode(&mut r)?;
        r.expect_end(S::KIND.name())?;
        Ok(Some(section))
    }

    /// Merges section `S` of `other` into `self` (decoding both).
    pub fn merge_section<S: Section>(&mut self, other: &CgData) -> Result<(), CgDataError> {
        match (self.get::<S>()?, other.get::<S>()?) {
            (Some(mut mine), Some(theirs)) => {
                mine.merge(theirs);
                self.put(&mine);
            }
            (None, Some(theirs)) => self.put(&theirs),
            (_, None) => {}
        }
        Ok(())
    }

    /// The file encoding (see the module doc).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.bytes_raw(MAGIC);
        w.u32(VERSION);
        let length_at = w.buf.len();
        w.u64(0); // patched below, once the length is known
        w.str(&self.target);
        w.u32(self.sections.len() as u32);
        for (kind, payload) in &self.sections {
            w.u32(*kind as u32);
            w.u64(payload.len() as u64);
            w.bytes_raw(payload);
        }
        let total = (w.buf.len() + 8) as u64;
        w.buf[length_at..length_at + 8].copy_from_slice(&total.to_le_bytes());
        let checksum = xxhash_rust::xxh3::xxh3_64(&w.buf);
        w.u64(checksum);
        w.into_bytes()
    }

    /// Decodes a cgdata file, checking magic, version, checksum and framing.
    /// `expected_target`, if given, must match the file's target.
    pub fn decode(bytes: &[u8], expected_target: Option<&str>) -> Result<CgData, CgDataError> {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(if MAGIC.starts_with(bytes) {
                CgDataError::Truncated {
                    offset: bytes.len(),
                    what: "the magic number",
                }
            } else {
                CgDataError::NotCgData
            });
        }
        let mut r = Reader::new(bytes);
        r.pos = MAGIC.len();
        let version = r.u32("the version")?;
        if version != VERSION {
            return Err(CgDataError::Version {
                found: version,
                expected: VERSION,
            });
        }
        // The declared length tells a truncated file from a corrupt one;
        // the checksum (over everything before the last eight bytes) is
        // checked before any other length field is trusted.
        let declared = r.u64("the file length")?;
        if (bytes.len() as u64) < declared {
            return Err(CgDataError::Truncated {
                offset: bytes.len(),
                what: "the data its header declares",
            });
        }
        if bytes.len() as u64 > declared || bytes.len() < r.pos + 8 {
            return Err(CgDataError::Corrupt {
                offset: r.pos - 8,
                reason: format!(
                    "the file length says {declared} bytes, but it has {}",
                    bytes.len()
                ),
            });
        }
        let body_end = bytes.len() - 8;
        let stored = u64::from_le_bytes(bytes[body_end..].try_into().expect("eight bytes"));
        if xxhash_rust::xxh3::xxh3_64(&bytes[..body_end]) != stored {
            return Err(CgDataError::Checksum);
        }
        let mut r = Reader {
            buf: &bytes[..body_end],
            pos: r.pos,
        };
        let target = r.str("the target name")?;
        if let Some(expected) = expected_target {
            if target != expected {
                return Err(CgDataError::Target {
                    found: target,
                    expected: expected.to_string(),
                });
            }
        }
        let count = r.u32("the section count")?;
        let mut sections = BTreeMap::new();
        let mut previous: Option<u32> = None;
        for _ in 0..count {
            let at = r.pos;
            let raw_kind = r.u32("a section kind")?;
            let kind = SectionKind::from_u32(raw_kind).ok_or_else(|| CgDataError::Corrupt {
                offset: at,
                reason: format!("unknown section kind {raw_kind}"),
            })?;
            if previous.is_some_and(|p| p >= raw_kind) {
                return Err(CgDataError::Corrupt {
                    offset: at,
                    reason: "sections out of order or repeated".to_string(),
                });
            }
            previous = Some(raw_kind);
            let len = r.len_u64("a section length")?;
            let payload = r.take(len, "a section payload")?;
            sections.insert(kind, payload.to_vec());
        }
        r.expect_end("the container")?;
        Ok(CgData { target, sections })
    }
}

/// Little-endian encoder for section payloads.
#[derive(Default, Debug)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A length-prefixed UTF-8 string.
    pub fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }
    /// Bytes without a length prefix.
    pub fn bytes_raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// Bounds-checked little-endian decoder; every read names what it reads so
/// that a truncated file says where it ended.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// The current offset (for [`CgDataError::Corrupt`] messages).
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Whether every byte has been read.
    pub fn at_end(&self) -> bool {
        self.pos == self.buf.len()
    }

    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], CgDataError> {
        if self.buf.len() - self.pos < n {
            return Err(CgDataError::Truncated {
                offset: self.buf.len(),
                what,
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, CgDataError> {
        Ok(self.take(1, what)?[0])
    }
    pub fn u32(&mut self, what: &'static str) -> Result<u32, CgDataError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(b.try_into().expect("four bytes")))
    }
    pub fn u64(&mut self, what: &'static str) -> Result<u64, CgDataError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("eight bytes")))
    }

    /// A `u64` length that must fit in the remaining input (so corrupt
    /// lengths never cause huge allocations).
    pub fn len_u64(&mut self, what: &'static str) -> Result<usize, CgDataError> {
        let at = self.pos;
        let n = self.u64(what)?;
        self.check_len(at, n, what)
    }

    /// A `u32` count of items of at least `min_item_bytes` bytes each that
    /// must fit in the remaining input.
    pub fn count(
        &mut self,
        min_item_bytes: usize,
        what: &'static str,
    ) -> Result<usize, CgDataError> {
        let at = self.pos;
        let n = self.u32(what)? as u64;
        self.check_len(at, n.saturating_mul(min_item_bytes.max(1) as u64), what)?;
        Ok(n as usize)
    }

    fn check_len(&self, at: usize, n: u64, what: &'static str) -> Result<usize, CgDataError> {
        let remaining = (self.buf.len() - self.pos) as u64;
        if n > remaining {
            return Err(CgDataError::Corrupt {
                offset: at,
                reason: format!("{what} {n} exceeds the {remaining} bytes that follow"),
            });
        }
        Ok(n as usize)
    }

    /// A length-prefixed UTF-8 string.
    pub fn str(&mut self, what: &'static str) -> Result<String, CgDataError> {
        let at = self.pos;
        let n = self.u32(what)? as u64;
        let n = self.check_len(at, n, what)?;
        let bytes = self.take(n, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| CgDataError::Corrupt {
            offset: at,
            reason: format!("{what} is not UTF-8"),
        })
    }

    /// Fails unless every byte was consumed.
    pub fn expect_end(&self, what: &str) -> Result<(), CgDataError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(CgDataError::Corrupt {
                offset: self.pos,
                reason: format!(
                    "{} unexpected bytes after {what}",
                    self.buf.len() - self.pos
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy section: a sorted multiset of numbers; merge is union with sums.
    #[derive(Debug, PartialEq)]
    struct Counts(BTreeMap<u64, u64>);

    impl Section for Counts {
        const KIND: SectionKind = SectionKind::Merge;
        fn encode(&self, w: &mut Writer) {
            w.u32(self.0.len() as u32);
            for (k, v) in &self.0 {
                w.u64(*k);
                w.u64(*v);
            }
        }
        fn decode(r: &mut Reader<'_>) -> Result<Self, CgDataError> {
            let n = r.count(16, "the entry count")?;
            let mut m = BTreeMap::new();
            for _ in 0..n {
                m.insert(r.u64("a key")?, r.u64("a count")?);
            }
            Ok(Counts(m))
        }
        fn merge(&mut self, other: Self) {
            for (k, v) in other.0 {
                *self.0.entry(k).or_insert(0) += v;
            }
        }
    }

    fn sample(pairs: &[(u64, u64)]) -> CgData {
        let mut c = CgData::new("aarch64");
        c.put(&Counts(pairs.iter().copied().collect()));
        c
    }

    #[test]
    fn round_trip() {
        let c = sample(&[(1, 2), (7, 9)]);
        let bytes = c.encode();
        let back = CgData::decode(&bytes, Some("aarch64")).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.get::<Counts>().unwrap().unwrap().0.get(&7), Some(&9));
    }

    #[test]
    fn every_truncation_and_bit_flip_is_an_error() {
        let bytes = sample(&[(1, 2), (7, 9), (11, 3)]).encode();
        for len in 0..bytes.len() {
            assert!(
                matches!(
                    CgData::decode(&bytes[..len], None),
                    Err(CgDataError::Truncated { .. })
                ),
                "length {len}"
            );
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                assert!(CgData::decode(&b, None).is_err(), "byte {i} bit {bit}");
            }
        }
    }

    #[test]
    fn version_and_target_mismatches_say_so() {
        let mut bytes = sample(&[(1, 1)]).encode();
        assert!(matches!(
            CgData::decode(&bytes, Some("x86_64")),
            Err(CgDataError::Target { .. })
        ));
        bytes[8] = 2;
        assert_eq!(
            CgData::decode(&bytes, None),
            Err(CgDataError::Version {
                found: 2,
                expected: VERSION
            })
        );
        assert_eq!(
            CgData::decode(b"ELF\x7fjunkjunk", None),
            Err(CgDataError::NotCgData)
        );
    }

    #[test]
    fn merge_is_order_independent() {
        let a = sample(&[(1, 2), (5, 1)]);
        let b = sample(&[(5, 4), (9, 1)]);
        let c = sample(&[(1, 1)]);
        let mut x = a.clone();
        x.merge_section::<Counts>(&b).unwrap();
        x.merge_section::<Counts>(&c).unwrap();
        let mut y = c.clone();
        y.merge_section::<Counts>(&a).unwrap();
        y.merge_section::<Counts>(&b).unwrap();
        assert_eq!(x.encode(), y.encode());
    }
}
