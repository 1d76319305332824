//! A graph's level-0 links (`index::hnsw`): `M0` slots a row while the graph is being built,
//! where inserting a row rewrites its neighbours' slots; packed once the graph is sealed,
//! where nothing changes them again.
//!
//! Packed, a row's links are the slots it uses (about three quarters of them on 384-d data),
//! each row number in [`link_width`] bytes (2 for a graph of up to 65,536 rows, 3 up to 2²⁴,
//! else 4), one row after the other, with the offset where each row's links start: a
//! 100,000-row graph's level-0 links take about 7.8 MB instead of 12.8. The stored byte form
//! (`counts:u8×rows` then the links) is the packed one, so a snapshot's links are kept as
//! they are read.

/// Links per row on the graph's upper levels.
pub const M: usize = 16;
/// Links per row on level 0.
pub const M0: usize = 2 * M;

/// An empty slot.
pub(super) const EMPTY: u32 = u32::MAX;

/// Bytes a packed level-0 link of a graph of `rows` rows takes.
pub(super) fn link_width(rows: usize) -> usize {
    match rows {
        0..=0x1_0000 => 2,
        0x1_0001..=0x100_0000 => 3,
        _ => 4,
    }
}

/// The slots of `links` in use (they fill from the front).
fn used(links: &[u32]) -> usize {
    links.iter().position(|&n| n == EMPTY).unwrap_or(links.len())
}

/// A row's links, packed: row `r`'s are `bytes[starts[r]..starts[r + 1]]`, [`link_width`]
/// bytes each.
#[derive(Debug, Clone)]
struct Packed {
    width: usize,
    starts: Vec<u32>,
    bytes: Vec<u8>,
}

impl Packed {
    /// The links of a graph of `rows` rows in their stored form: `counts` (a row each) and
    /// `bytes`. Refused when a count exceeds `M0` or the bytes are not what the counts say.
    fn new(counts: &[u8], bytes: Vec<u8>, rows: usize) -> Result<Packed, String> {
        if counts.len() != rows {
            return Err(format!("{} level-0 link counts for {rows} rows", counts.len()));
        }
        let width = link_width(rows);
        let mut starts = Vec::new();
        if starts.try_reserve_exact(rows + 1).is_err() {
            return Err(format!("{rows} rows: not enough memory"));
        }
        let mut at = 0u64;
        starts.push(0);
        for &c in counts {
            if usize::from(c) > M0 {
                return Err(format!("{c} level-0 links for one row, at most {M0}"));
            }
            at += u64::from(c) * width as u64;
            starts.push(u32::try_from(at).map_err(|_| "level-0 links past 4 GiB".to_string())?);
        }
        if at != bytes.len() as u64 {
            let n = bytes.len();
            return Err(format!("{n} bytes of level-0 links where the counts say {at}"));
        }
        Ok(Packed { width, starts, bytes })
    }

    #[inline]
    fn each(&self, row: usize, mut f: impl FnMut(u32)) {
        let links = &self.bytes[self.starts[row] as usize..self.starts[row + 1] as usize];
        let mut word = [0u8; 4];
        for link in links.chunks_exact(self.width) {
            word[..self.width].copy_from_slice(link);
            f(u32::from_le_bytes(word));
        }
    }
}

/// Level-0 links (module docs): slots while `packed` is `None`, else packed.
#[derive(Debug, Clone, Default)]
pub(super) struct Zero {
    /// `M0` slots a row, filled from the front (empty once packed).
    slots: Vec<u32>,
    packed: Option<Packed>,
}

impl Zero {
    /// Calls `f` with each of `row`'s links, in slot order.
    #[inline]
    pub fn each(&self, row: u32, mut f: impl FnMut(u32)) {
        let r = row as usize;
        match &self.packed {
            Some(p) => p.each(r, f),
            None => {
                let links = &self.slots[r * M0..r * M0 + M0];
                links[..used(links)].iter().for_each(|&n| f(n));
            }
        }
    }

    /// Links in use, over every row.
    pub fn used(&self) -> usize {
        match &self.packed {
            Some(p) => p.bytes.len() / p.width,
            None => self.slots.chunks(M0).map(used).sum(),
        }
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        let packed =
            self.packed.as_ref().map_or(0, |p| p.starts.capacity() * 4 + p.bytes.capacity());
        self.slots.capacity() * 4 + packed
    }

    /// The slots, for a graph being built (packed links are unpacked first).
    pub fn slots(&mut self) -> &mut Vec<u32> {
        if let Some(p) = self.packed.take() {
            let rows = p.starts.len().saturating_sub(1);
            self.slots = Vec::with_capacity(rows * M0);
            for r in 0..rows {
                let before = self.slots.len();
                p.each(r, |n| self.slots.push(n));
                let filled = self.slots.len() - before;
                self.slots.extend(std::iter::repeat_n(EMPTY, M0.saturating_sub(filled)));
            }
        }
        &mut self.slots
    }

    /// Packs the links of a graph of `rows` rows (module docs): nothing changes them again.
    pub fn pack(&mut self, rows: usize) {
        if self.packed.is_some() {
            return;
        }
        let mut bytes = Vec::with_capacity(self.used() * link_width(rows));
        self.put_links(rows, &mut |b| bytes.extend_from_slice(b));
        // The slots of a built graph always pack; were they not to, they stay slots.
        if let Ok(p) = Packed::new(&self.counts(), bytes, rows) {
            self.slots = Vec::new();
            self.packed = Some(p);
        }
    }

    /// Each row's link count: the stored form's `counts`.
    pub fn counts(&self) -> Vec<u8> {
        match &self.packed {
            Some(p) => {
                p.starts.windows(2).map(|w| ((w[1] - w[0]) as usize / p.width) as u8).collect()
            }
            None => self.slots.chunks(M0).map(|l| used(l) as u8).collect(),
        }
    }

    /// Puts the links of every row of a graph of `rows` rows in their stored form
    /// ([`link_width`] bytes each; [`Zero::counts`] says how many a row has).
    pub fn put_links(&self, rows: usize, put: &mut impl FnMut(&[u8])) {
        let width = link_width(rows);
        match &self.packed {
            Some(p) if p.width == width => put(&p.bytes),
            _ => {
                let mut buf = Vec::with_capacity(4096 + M0 * 4);
                for r in 0..rows as u32 {
                    self.each(r, |n| buf.extend_from_slice(&n.to_le_bytes()[..width]));
                    if buf.len() >= 4096 {
                        put(&buf);
                        buf.clear();
                    }
                }
                put(&buf);
            }
        }
    }

    /// Packed links of a graph of `rows` rows from their stored form: `counts` (a row each)
    /// and `bytes`. Refused when a count exceeds `M0`, the bytes are not what the counts
    /// say, or a link leads past the rows.
    pub fn from_stored(counts: &[u8], bytes: Vec<u8>, rows: usize) -> Result<Zero, String> {
        let packed = Packed::new(counts, bytes, rows)?;
        for r in 0..rows {
            let mut past = None;
            packed.each(r, |n| {
                if n as usize >= rows {
                    past.get_or_insert(n);
                }
            });
            if let Some(n) = past {
                return Err(format!("graph link to row {n} of {rows}"));
            }
        }
        Ok(Zero { slots: Vec::new(), packed: Some(packed) })
    }

    /// Bytes of the stored links of a graph of `rows` rows whose counts are `counts`
    /// (`usize::MAX` when damaged counts add up past what a `usize` holds: more than any
    /// stored graph has).
    pub fn stored_len(counts: &[u8], rows: usize) -> usize {
        let links: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        usize::try_from(links * link_width(rows) as u64).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_links_are_the_slots_in_use_in_the_bytes_row_numbers_need() {
        for rows in [300usize, 70_000] {
            // Row r links to r % (M0 + 1) rows: some none, some all M0.
            let mut slots = Vec::new();
            for r in 0..rows {
                let n = r % (M0 + 1);
                slots.extend((1..=n).map(|i| ((r + i * 997) % rows) as u32));
                slots.extend(std::iter::repeat_n(EMPTY, M0 - n));
            }
            let mut zero = Zero { slots: slots.clone(), packed: None };
            let used = zero.used();
            zero.pack(rows);
            let width = if rows <= 65_536 { 2 } else { 3 };
            assert_eq!(zero.used(), used);
            assert!(zero.memory() <= used * width + (rows + 1) * 4, "{rows} rows");
            let mut bytes = Vec::new();
            zero.put_links(rows, &mut |b| bytes.extend_from_slice(b));
            let counts = zero.counts();
            assert_eq!(bytes.len(), Zero::stored_len(&counts, rows));
            let mut back = Zero::from_stored(&counts, bytes, rows).unwrap();
            assert_eq!(back.slots(), &slots, "{rows} rows");
        }
    }

    #[test]
    fn stored_links_past_the_rows_or_counts_are_refused() {
        let counts = [2u8, 1, 0];
        let bytes = |links: [u16; 3]| links.iter().flat_map(|l| l.to_le_bytes()).collect();
        assert!(Zero::from_stored(&counts, bytes([1, 2, 0]), 3).is_ok());
        assert!(Zero::from_stored(&counts, bytes([1, 3, 0]), 3).is_err());
        assert!(Zero::from_stored(&[33, 0, 0], vec![0; 66], 3).is_err());
        assert!(Zero::from_stored(&counts, vec![0; 5], 3).is_err());
        assert!(Zero::from_stored(&counts[..2], bytes([1, 2, 0]), 3).is_err());
    }
}
