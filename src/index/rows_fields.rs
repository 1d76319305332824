//! A snapshot's rows parts decoded as their bytes arrive (`store::fields`), each row copied
//! straight into the segment row that has its seq. The byte form is `rows_part` of
//! `index::persist`:
//!
//! ```text
//! rows_part := seqs:bytes (scale:f32 row:i8×dim)×(the seqs' count)
//! ```
//!
//! The segments are added first (`index::segment_fields`, rows zeroed); read in search order,
//! their rows' seqs ascend (`index::row_seqs`), and so do the rows parts', so one cursor walks
//! the segments' rows while the parts arrive: a row whose seq the cursor is at fills it, a row
//! of a seq no segment has any more (removed, then dropped by a merge) is skipped, and a
//! segment row passed over with no row for it makes the snapshot unusable.

use super::row_seqs::RowSeqs;
use super::vectors::VectorIndex;
use crate::error::{Error, Result};
use crate::store::codec::Reader;
use crate::store::fields::{word, Field, Fields, Want};

/// The next segment row to fill: segment `s`, row `r`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Fill {
    s: usize,
    r: usize,
    /// Rows parts read so far cover the seqs below this.
    covered: u64,
    /// Segment rows filled so far.
    filled: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    SeqsLen,
    Seqs,
    Rows,
    Done,
}

/// The decoder of one rows part of seqs `[lo, hi)`: it holds the index being assembled while
/// the part arrives ([`RowsFields::finish`] gives it back).
pub(crate) struct RowsFields {
    index: VectorIndex,
    fill: Fill,
    lo: u64,
    hi: u64,
    step: Step,
    /// The part's seqs, and the next row's place in them: run, offset.
    seqs: RowSeqs,
    at: (usize, u64),
    /// Rows left to read.
    left: usize,
    /// Where row `fill.r` of segment `fill.s` is in that segment's runs of seqs: in run
    /// `run`, whose first row is `run_row` (rows only move forward, so the walk is amortised
    /// over the segment instead of listing its seqs).
    run: usize,
    run_row: usize,
}

impl RowsFields {
    /// A decoder of the rows part of seqs `[lo, hi)` into `index`, whose segments were all
    /// added and whose rows before `fill` are filled.
    pub fn new(index: VectorIndex, fill: Fill, lo: u64, hi: u64) -> Self {
        RowsFields {
            index,
            fill,
            lo,
            hi,
            step: Step::SeqsLen,
            seqs: RowSeqs::default(),
            at: (0, 0),
            left: 0,
            run: 0,
            run_row: 0,
        }
    }

    fn corrupt(&self, detail: String) -> Error {
        Error::Corrupt {
            what: Self::WHAT.into(),
            detail: format!("rows of seqs [{}, {}): {detail}", self.lo, self.hi),
        }
    }

    /// The seq of the segment row the cursor is at (`None`: every segment row is filled).
    fn wanted(&mut self) -> Option<u64> {
        while let Some(seg) = self.index.segments.get(self.fill.s) {
            while let Some(&(first, len)) = seg.seqs.runs().get(self.run) {
                let offset = self.fill.r.checked_sub(self.run_row)?;
                if offset < len as usize {
                    return Some(first + offset as u64);
                }
                (self.run, self.run_row) = (self.run + 1, self.run_row + len as usize);
            }
            (self.fill.s, self.fill.r, self.run, self.run_row) = (self.fill.s + 1, 0, 0, 0);
        }
        None
    }

    /// The next row's seq, from the part's runs.
    fn next_seq(&mut self) -> Option<u64> {
        let &(first, len) = self.seqs.runs().get(self.at.0)?;
        let q = first + self.at.1;
        self.at.1 += 1;
        if self.at.1 == u64::from(len) {
            self.at = (self.at.0 + 1, 0);
        }
        Some(q)
    }

    /// Takes the next row (`scale:f32 row:i8×dim`).
    fn row(&mut self, b: &[u8]) -> Result<()> {
        let q = self.next_seq().ok_or_else(|| self.corrupt("more rows than seqs".into()))?;
        if !(self.lo..self.hi).contains(&q) {
            return Err(self.corrupt(format!("a row of seq {q}")));
        }
        match self.wanted() {
            Some(w) if w < q => {
                return Err(self.corrupt(format!("no row for seq {w}, which a segment has")));
            }
            Some(w) if w == q => {
                let dim = self.index.dim;
                let (s, r) = (self.fill.s, self.fill.r);
                let flat = &mut self.index.segments[s].flat;
                flat.scales[r] = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                for (out, &x) in flat.data[r * dim..(r + 1) * dim].iter_mut().zip(&b[4..]) {
                    *out = x as i8;
                }
                self.fill.r += 1;
                self.fill.filled += 1;
            }
            _ => {} // a row no segment has any more
        }
        Ok(())
    }

    /// The index, with this part's rows filled in, and where the next part goes on.
    pub fn finish(mut self) -> Result<(VectorIndex, Fill)> {
        if self.step != Step::Done {
            return Err(self.corrupt("its bytes end before its last row".into()));
        }
        if self.lo < self.fill.covered || self.hi < self.lo {
            let covered = self.fill.covered;
            return Err(self.corrupt(format!("after the rows below seq {covered}")));
        }
        // Every segment row below this part's end is filled by now.
        if let Some(w) = self.wanted().filter(|&w| w < self.hi) {
            return Err(self.corrupt(format!("no row for seq {w}, which a segment has")));
        }
        self.fill.covered = self.hi;
        Ok((self.index, self.fill))
    }
}

impl Fill {
    /// Segment rows filled so far.
    pub fn filled(&self) -> usize {
        self.filled
    }

    /// The rows parts read so far cover the seqs below this.
    pub fn covered(&self) -> u64 {
        self.covered
    }
}

impl Fields for RowsFields {
    const WHAT: &'static str = "snapshot rows part";

    fn first(&self) -> Want {
        Want::Read(4)
    }

    fn take(&mut self, field: Field) -> Result<Want> {
        let Field::Read(b) = field else {
            return Err(self.corrupt("a field of the wrong kind".into()));
        };
        let row = 4 + self.index.dim;
        Ok(match self.step {
            Step::SeqsLen => {
                self.step = Step::Seqs;
                Want::Read(word(b) as usize)
            }
            Step::Seqs => {
                // At most one row per seq of the part's range.
                let most = usize::try_from(self.hi.saturating_sub(self.lo)).unwrap_or(usize::MAX);
                let mut r = Reader::new(b, Self::WHAT);
                self.seqs = RowSeqs::decode_at_most(&mut r, most)
                    .and_then(|s| r.end().map(|()| s))
                    .map_err(|e| self.corrupt(e.to_string()))?;
                self.left = self.seqs.len();
                self.next_row(row)
            }
            Step::Rows => {
                self.row(b)?;
                self.left -= 1;
                self.next_row(row)
            }
            Step::Done => return Err(self.corrupt("bytes past its last row".into())),
        })
    }
}

impl RowsFields {
    fn next_row(&mut self, row: usize) -> Want {
        if self.left == 0 {
            self.step = Step::Done;
            Want::Done
        } else {
            self.step = Step::Rows;
            Want::Read(row)
        }
    }
}
