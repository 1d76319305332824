//! One term's BM25 posting list — (document, term frequency) pairs in ascending document order —
//! held in the byte form a snapshot stores it in (`index::persist`), not as 16-byte pairs:
//!
//! ```text
//! bytes := (id_gap:var tf:var)×n      id_gap = id − the previous id (the first: id − 0)
//! ```
//!
//! `var` is LEB128 (`store::codec`): a gap below 128 and a frequency below 128 take a byte each,
//! so a posting takes 2–3 bytes where a `(u64, u32)` pair takes 16. Every [`SKIP`]-th posting
//! starts a block, and `skips[b]` holds (the id just before block `b + 1`, the byte offset where
//! it starts), so finding one document's frequency is a binary search over the skips and a
//! decode of at most [`SKIP`] postings. Appending a document above the last one (the usual
//! case: ids grow) writes its pair at the end; inserting or removing elsewhere re-encodes the
//! list.

use smallvec::SmallVec;

use crate::error::Result;
use crate::store::codec::{leb128, Reader};

/// Postings per block between skip entries.
pub const SKIP: usize = 16;

/// A posting list (module docs).
///
/// Most terms of a large index occur once (a name, a number, an id), so a short list costs
/// little: up to 8 bytes of postings sit in the struct itself, and a list longer than [`SKIP`]
/// keeps its skip entries and last document behind one pointer; 20 bytes in wasm32, with no
/// allocation of its own for a list of one or two postings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Postings {
    bytes: SmallVec<[u8; 8]>,
    /// Boxed so that a short list pays one pointer for the skips it does not have.
    long: Option<Box<Long>>,
    n: u32,
}

/// What a list longer than [`SKIP`] keeps beside its bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Long {
    skips: Vec<(u64, u32)>,
    /// The last document, so that appending does not decode the last block.
    last: u64,
}

/// The pairs of a [`Postings`], in ascending document order.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    rest: &'a [u8],
    prev: u64,
}

impl Iterator for Iter<'_> {
    type Item = (u64, u32);

    #[inline]
    fn next(&mut self) -> Option<(u64, u32)> {
        if self.rest.is_empty() {
            return None;
        }
        let gap = var(&mut self.rest)?;
        let tf = var(&mut self.rest)?;
        self.prev += gap;
        Some((self.prev, tf as u32))
    }
}

/// Reads one LEB128 value written by [`push_var`] (`None` past the end, which a list made by
/// [`Postings`] never reaches mid-value).
#[inline]
fn var(rest: &mut &[u8]) -> Option<u64> {
    let (&b, tail) = rest.split_first()?;
    *rest = tail;
    if b < 0x80 {
        return Some(u64::from(b));
    }
    let mut v = u64::from(b & 0x7f);
    for shift in (7..64).step_by(7) {
        let (&b, tail) = rest.split_first()?;
        *rest = tail;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

fn push_var(bytes: &mut SmallVec<[u8; 8]>, v: u64) {
    let (var, n) = leb128(v);
    bytes.extend_from_slice(&var[..n]);
}

impl Postings {
    /// A list of the given pairs, which must be in strictly ascending document order (pairs out
    /// of order are skipped).
    pub fn from_sorted(pairs: impl IntoIterator<Item = (u64, u32)>) -> Self {
        let mut list = Self::default();
        let mut last = None;
        for (id, tf) in pairs {
            if last.is_none_or(|last| id > last) {
                list.append(last, id, tf);
                last = Some(id);
            }
        }
        list.shrink_to_fit();
        list
    }

    /// Reads `n` pairs in the byte form (module docs) from `r`, checking that the ids
    /// ascend strictly and each frequency fits a `u32`, and keeps those bytes as they are: a
    /// snapshot's list is copied once, not decoded and written again.
    pub fn read(r: &mut Reader, n: usize, term: &str) -> Result<Self> {
        let start = r.rest();
        let mut list = Self::default();
        let mut skips = Vec::new();
        let mut id = 0u64;
        for i in 0..n {
            if i > 0 && i.is_multiple_of(SKIP) {
                skips.push((id, (start.len() - r.remaining()) as u32));
            }
            let gap = r.var()?;
            if gap == 0 && i > 0 {
                return Err(r.corrupt(format!("postings of {term:?} repeat an id")));
            }
            id = id.checked_add(gap).ok_or_else(|| r.corrupt("posting id overflow".into()))?;
            u32::try_from(r.var()?).map_err(|_| r.corrupt("term frequency".into()))?;
        }
        let n = u32::try_from(n).map_err(|_| r.corrupt(format!("{n} postings")))?;
        list.bytes = SmallVec::from_slice(&start[..start.len() - r.remaining()]);
        skips.shrink_to_fit();
        list.long = (!skips.is_empty()).then(|| Box::new(Long { skips, last: id }));
        list.n = n;
        Ok(list)
    }

    /// Documents in the list (the term's document frequency).
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// True when no document holds the term.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The highest document in the list.
    pub fn last(&self) -> Option<u64> {
        match &self.long {
            Some(long) => Some(long.last),
            None => self.iter().last().map(|p| p.0),
        }
    }

    fn skips(&self) -> &[(u64, u32)] {
        self.long.as_deref().map_or(&[], |l| l.skips.as_slice())
    }

    /// Every pair, in ascending document order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { rest: &self.bytes, prev: 0 }
    }

    /// The pairs from the block that would hold document `id`: every pair at or above `id`,
    /// preceded by at most [`SKIP`] − 1 below it.
    fn block_of(&self, id: u64) -> Iter<'_> {
        let skips = self.skips();
        match skips.partition_point(|s| s.0 < id) {
            0 => self.iter(),
            b => {
                let (prev, at) = skips[b - 1];
                Iter { rest: self.bytes.get(at as usize..).unwrap_or_default(), prev }
            }
        }
    }

    /// The pairs whose document is at or above `id`.
    pub fn from(&self, id: u64) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.block_of(id).skip_while(move |p| p.0 < id)
    }

    /// The frequency of the term in document `id` (`None`: the document does not hold it).
    pub fn tf(&self, id: u64) -> Option<u32> {
        if self.long.as_ref().is_some_and(|l| id > l.last) {
            return None;
        }
        // Recall asks this for every candidate and query term: the gaps are summed and the
        // frequencies passed over without decoding them, until the block reaches `id`.
        let Iter { mut rest, mut prev } = self.block_of(id);
        loop {
            prev += var(&mut rest)?;
            if prev >= id {
                return if prev == id { var(&mut rest).map(|tf| tf as u32) } else { None };
            }
            let end = rest.iter().position(|&b| b < 0x80)?;
            rest = &rest[end + 1..];
        }
    }

    /// Adds document `id` above every document in the list; an `id` at or below the last one is
    /// inserted in order instead ([`Postings::insert`]).
    pub fn push(&mut self, id: u64, tf: u32) {
        let last = self.last();
        if last.is_some_and(|last| id <= last) {
            return self.insert(id, tf);
        }
        self.append(last, id, tf);
    }

    /// Appends document `id` after `last`, the list's last document (`None`: it is empty).
    fn append(&mut self, last: Option<u64>, id: u64, tf: u32) {
        let prev = last.unwrap_or(0);
        if self.n > 0 && (self.n as usize).is_multiple_of(SKIP) {
            let at = self.bytes.len() as u32;
            self.long.get_or_insert_with(Box::default).skips.push((prev, at));
        }
        push_var(&mut self.bytes, id - prev);
        push_var(&mut self.bytes, u64::from(tf));
        self.n += 1;
        if let Some(long) = self.long.as_mut() {
            long.last = id;
        }
    }

    /// Sets the frequency of document `id`, adding it in order when absent.
    pub fn insert(&mut self, id: u64, tf: u32) {
        if self.last().is_none_or(|last| id > last) {
            return self.push(id, tf);
        }
        let mut pairs: Vec<(u64, u32)> = self.iter().collect();
        match pairs.binary_search_by_key(&id, |p| p.0) {
            Ok(i) => pairs[i].1 = tf,
            Err(i) => pairs.insert(i, (id, tf)),
        }
        *self = Self::from_sorted(pairs);
    }

    /// Removes document `id`; false when the list does not hold it.
    pub fn remove(&mut self, id: u64) -> bool {
        if self.tf(id).is_none() {
            return false;
        }
        let pairs: Vec<(u64, u32)> = self.iter().filter(|p| p.0 != id).collect();
        *self = Self::from_sorted(pairs);
        true
    }

    /// Releases the spare capacity appending left.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        if let Some(long) = self.long.as_mut() {
            long.skips.shrink_to_fit();
        }
    }

    /// Approximate bytes held beside the struct itself.
    pub fn memory(&self) -> usize {
        let bytes = if self.bytes.spilled() { self.bytes.capacity() } else { 0 };
        let skips = self.long.as_ref().map_or(0, |l| 32 + l.skips.capacity() * 16);
        bytes + skips
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pseudo-random ascending list with gaps from 1 to past 2^32 and frequencies to 2^20.
    fn pairs(n: usize, seed: u64) -> Vec<(u64, u32)> {
        let mut s = seed | 1;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut id = 0;
        (0..n)
            .map(|i| {
                let r = next();
                id += match r % 5 {
                    0 => 1 + (r >> 40) % (1 << 33),
                    _ => 1 + (r >> 40) % 200,
                } * u64::from(i > 0 || r % 3 != 0);
                (id, ((r >> 8) % if r % 7 == 0 { 1 << 20 } else { 4 }) as u32 + 1)
            })
            .collect()
    }

    #[test]
    fn reads_back_what_it_holds_at_every_block_boundary() {
        for n in [0, 1, SKIP - 1, SKIP, SKIP + 1, 5 * SKIP, 5 * SKIP + 7] {
            let want = pairs(n, n as u64 + 3);
            let list = Postings::from_sorted(want.iter().copied());
            assert_eq!(list.len(), n);
            assert_eq!(list.iter().collect::<Vec<_>>(), want, "n {n}");
            for (i, &(id, tf)) in want.iter().enumerate() {
                assert_eq!(list.tf(id), Some(tf), "n {n}, posting {i}");
                assert_eq!(list.from(id).next(), Some((id, tf)));
                let below = if i == 0 { id.checked_sub(1) } else { Some(want[i - 1].0 + 1) };
                if let Some(b) = below.filter(|&b| b < id) {
                    assert_eq!(list.tf(b), None, "n {n}: {b} is not in the list");
                    assert_eq!(list.from(b).next(), Some((id, tf)));
                }
            }
            assert_eq!(list.tf(u64::MAX), want.last().filter(|p| p.0 == u64::MAX).map(|p| p.1));
        }
    }

    #[test]
    fn inserting_and_removing_anywhere_keeps_the_order_and_the_skips() {
        let want = pairs(3 * SKIP, 11);
        let mut list = Postings::default();
        // Every other pair first (appended), then the rest in reverse (inserted in the middle).
        for p in want.iter().step_by(2) {
            list.push(p.0, p.1);
        }
        for p in want.iter().skip(1).step_by(2).rev() {
            list.push(p.0, p.1);
        }
        assert_eq!(list, Postings::from_sorted(want.iter().copied()));
        list.insert(want[5].0, 99);
        assert_eq!(list.tf(want[5].0), Some(99));
        assert_eq!(list.len(), want.len(), "an insert of a held id replaces it");
        for (i, p) in want.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
            assert!(list.remove(p.0), "posting {i}");
            assert!(!list.remove(p.0));
        }
        let kept: Vec<(u64, u32)> = want
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(i, &(id, tf))| (id, if i == 5 { 99 } else { tf }))
            .collect();
        assert_eq!(list.last(), kept.last().map(|p| p.0));
        assert_eq!(list, Postings::from_sorted(kept));
    }

    #[test]
    fn a_list_read_from_its_byte_form_is_the_list_written() {
        for n in [0, 1, SKIP, 3 * SKIP + 5] {
            let want = Postings::from_sorted(pairs(n, 5));
            let mut w = crate::store::codec::Writer::new();
            let mut prev = 0;
            for (id, tf) in want.iter() {
                w.var(id - prev).var(u64::from(tf));
                prev = id;
            }
            w.u8(7);
            let bytes = w.finish();
            let mut r = Reader::new(&bytes, "test");
            assert_eq!(Postings::read(&mut r, n, "t").unwrap(), want, "n {n}");
            assert_eq!(r.u8().unwrap(), 7, "the reader stops after the list");
        }
        // A repeated id, and a list cut short, are errors.
        let mut r = Reader::new(&[3, 1, 0, 1], "test");
        assert!(Postings::read(&mut r, 2, "t").is_err());
        let mut r = Reader::new(&[3, 1], "test");
        assert!(Postings::read(&mut r, 2, "t").is_err());
    }

    #[test]
    fn a_posting_takes_bytes_not_a_pair() {
        let list = Postings::from_sorted((1..=10_000u64).map(|id| (id * 3, 1)));
        assert_eq!(list.memory(), 2 * 10_000 + 32 + (10_000 - 1) / SKIP * 16);
        // A term's one or two postings allocate nothing.
        assert_eq!(Postings::from_sorted([(123_456, 1)]).memory(), 0);
        assert_eq!(Postings::from_sorted([(5, 1), (123_456, 2)]).memory(), 0);
        let size = std::mem::size_of::<Postings>();
        assert!(size <= 5 * std::mem::size_of::<usize>(), "{size} bytes");
    }
}
