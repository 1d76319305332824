//! Where a sealed segment's rows are stored: each row sealed gets the next number of one
//! sequence (its *seq*), and a segment lists its rows' seqs as runs of consecutive numbers.
//!
//! A seal numbers its rows in order, so its segment is one run; a merge takes the rows of its
//! two sources in order (older segment first) and so keeps them ascending. Read in search
//! order, the segments' seqs therefore ascend strictly across the whole index: a snapshot
//! stores each row once, in a rows part of consecutive seqs (`index::persist`), and a
//! segment part stores only the runs — a merge rewrites ids and links, never rows.
//!
//! Byte form: `runs:var (gap:var len:var)×runs`, where `gap` is the run's first seq minus the
//! previous run's end (the first: minus 0).

use crate::error::Result;
use crate::store::codec::{leb128, Reader, Writer};

/// The seqs of a segment's rows, in row order, as runs `(first, len)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RowSeqs {
    runs: Vec<(u64, u32)>,
    rows: usize,
}

impl RowSeqs {
    /// The seqs `first .. first + len`.
    pub fn span(first: u64, len: usize) -> Self {
        let mut s = RowSeqs { runs: Vec::new(), rows: len };
        let (mut at, mut left) = (first, len as u64);
        while left > 0 {
            let n = left.min(u64::from(u32::MAX));
            s.runs.push((at, n as u32));
            (at, left) = (at + n, left - n);
        }
        s
    }

    /// Appends `seq`, which must be above every seq so far.
    pub fn push(&mut self, seq: u64) {
        debug_assert!(self.last().is_none_or(|l| l < seq), "seqs ascend");
        match self.runs.last_mut() {
            Some((first, len)) if *first + u64::from(*len) == seq && *len < u32::MAX => *len += 1,
            _ => self.runs.push((seq, 1)),
        }
        self.rows += 1;
    }

    /// Rows listed.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// The lowest seq, and the one past the highest.
    pub fn bounds(&self) -> Option<(u64, u64)> {
        let first = self.runs.first()?.0;
        let (last, len) = *self.runs.last()?;
        Some((first, last + u64::from(len)))
    }

    /// The runs, `(first, len)`.
    pub fn runs(&self) -> &[(u64, u32)] {
        &self.runs
    }

    fn last(&self) -> Option<u64> {
        self.runs.last().map(|&(first, len)| first + u64::from(len) - 1)
    }

    /// Every seq in row order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs.iter().flat_map(|&(first, len)| first..first + u64::from(len))
    }

    /// True when some seq lies in `[lo, hi)`.
    pub fn overlaps(&self, lo: u64, hi: u64) -> bool {
        self.runs.iter().any(|&(first, len)| first < hi && lo < first + u64::from(len))
    }

    /// Appends the byte form (module docs).
    pub fn encode(&self, w: &mut Writer) {
        w.var(self.runs.len() as u64);
        let mut end = 0;
        for &(first, len) in &self.runs {
            w.var(first - end).var(u64::from(len));
            end = first + u64::from(len);
        }
    }

    /// The length of [`RowSeqs::encode`]'s bytes.
    pub fn encoded_len(&self) -> usize {
        let var = |v: u64| leb128(v).1;
        let mut end = 0;
        let runs = self.runs.iter().map(|&(first, len)| {
            let n = var(first - end) + var(u64::from(len));
            end = first + u64::from(len);
            n
        });
        var(self.runs.len() as u64) + runs.sum::<usize>()
    }

    /// Reads what [`RowSeqs::encode`] wrote; the seqs must number exactly `rows`, ascend
    /// strictly and stay below 2⁶³.
    pub fn decode(r: &mut Reader, rows: usize) -> Result<Self> {
        let s = Self::decode_at_most(r, rows)?;
        if s.rows != rows {
            return Err(r.corrupt(format!("{} row seqs for {rows} rows", s.rows)));
        }
        Ok(s)
    }

    /// Reads what [`RowSeqs::encode`] wrote, at most `most` seqs.
    pub fn decode_at_most(r: &mut Reader, most: usize) -> Result<Self> {
        let rows = most;
        let n = r.var()?;
        let mut s = RowSeqs::default();
        // A run takes at least two bytes: damaged counts reserve no more than the bytes hold.
        s.runs.reserve(n.min(rows as u64).min(r.remaining() as u64 / 2) as usize);
        let mut end = 0u64;
        for _ in 0..n {
            let (gap, len) = (r.var()?, r.var()?);
            let first = end.checked_add(gap).filter(|&f| f < 1 << 63);
            let len32 = u32::try_from(len).ok().filter(|&l| l > 0);
            let (Some(first), Some(len32)) = (first, len32) else {
                return Err(r.corrupt(format!("a run of {len} rows {gap} past seq {end}")));
            };
            if (gap == 0 && !s.runs.is_empty()) || first + len > 1 << 63 {
                return Err(r.corrupt(format!("a run of {len} rows from seq {first}")));
            }
            s.rows = s.rows.saturating_add(len as usize);
            if s.rows > rows {
                return Err(r.corrupt(format!("more than {rows} row seqs")));
            }
            s.runs.push((first, len32));
            end = first + len;
        }
        Ok(s)
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        self.runs.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_read_back_as_written_and_bad_runs_are_refused() {
        let mut s = RowSeqs::span(10, 5);
        for seq in [15, 16, 40, 41, 90] {
            s.push(seq);
        }
        assert_eq!(s.runs, vec![(10, 7), (40, 2), (90, 1)]);
        assert_eq!((s.len(), s.bounds()), (10, Some((10, 91))));
        assert!(s.overlaps(16, 17) && !s.overlaps(17, 40) && s.overlaps(0, 11));
        let mut w = Writer::new();
        s.encode(&mut w);
        let bytes = w.finish();
        assert_eq!(bytes.len(), s.encoded_len());
        let back = RowSeqs::decode(&mut Reader::new(&bytes, "t"), 10).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.iter().collect::<Vec<_>>(), vec![10, 11, 12, 13, 14, 15, 16, 40, 41, 90]);
        let mut big = RowSeqs::span(1 << 40, 300);
        big.push((1 << 50) + 7);
        let mut w = Writer::new();
        big.encode(&mut w);
        assert_eq!(w.finish().len(), big.encoded_len(), "varints of several bytes");
        assert_eq!(RowSeqs::span(3, 0), RowSeqs::default());
        assert!(RowSeqs::decode(&mut Reader::new(&bytes, "t"), 9).is_err(), "too many");
        assert!(RowSeqs::decode(&mut Reader::new(&bytes, "t"), 11).is_err(), "too few");
        for bad in [[2, 0, 1, 0, 1], [1, 0, 0, 0, 0]] {
            // Two runs that touch (a gap of 0 after the first), and a run of no rows.
            let mut w = Writer::new();
            for x in bad {
                w.var(x);
            }
            assert!(RowSeqs::decode(&mut Reader::new(&w.finish(), "t"), 2).is_err());
        }
    }
}
