//! A snapshot's parts decoded as their bytes arrive (`store::fields`), and assembled into the
//! loaded namespace's episodes and indexes. The byte forms are in `persist::snapshot`; a
//! segment part is decoded by `index::segment_fields`, a rows part by `index::rows_fields`
//! (every segment part comes before the rows parts, which fill the segments' rows).
//!
//! An episodes part (`bm25:bytes n:u32 block×⌈n/256⌉ records:bytes`) is read field by field:
//! its BM25 documents from a scratch buffer, its `hot` entries a block of 256 at a time, and
//! its records into the buffer that becomes the episodes' arena. No part is ever
//! held whole, so loading needs little more memory than what it loads.

use super::snapshot::HOTS_PER_BLOCK;
use crate::engine::episodes::{Episodes, Hot};
use crate::error::{Error, Result};
use crate::index::bm25::Bm25;
use crate::index::progress::ProgressFields;
use crate::index::rows_fields::{Fill, RowsFields};
use crate::index::segment_fields::SegmentFields;
use crate::index::vectors::{QVec, VectorConfig, VectorIndex};
use crate::record::episode::status_from;
use crate::store::codec::Reader;
use crate::store::fields::{word, Field, Fields, Want};

/// The fewest bytes a `hot` entry takes: a byte for each varint, importance (4), tier,
/// status and cold (1 each).
const HOT_MIN: usize = 13;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Bm25Len,
    Bm25,
    Count,
    BlockLen,
    Block,
    RecordsLen,
    Records,
    Done,
}

/// The decoder of one episodes part, the episodes with ids in `[lo, hi)`.
pub(crate) struct EpisodesFields {
    lo: u64,
    hi: u64,
    /// Where this part's records will start in the arena.
    base: u32,
    /// The part's length, which bounds what its count may reserve.
    len: usize,
    step: Step,
    bm25: Bm25,
    count: usize,
    /// The last hot entry's id and creation time, which the next one's are stored from.
    last: (u64, i64),
    hots: Vec<Hot>,
    /// Each episode's record in the arena.
    spans: Vec<(u32, u32)>,
    end: u32,
    records: Vec<u8>,
}

impl EpisodesFields {
    fn new(lo: u64, hi: u64, base: u32, len: usize) -> Self {
        EpisodesFields {
            lo,
            hi,
            base,
            len,
            step: Step::Bm25Len,
            bm25: Bm25::default(),
            count: 0,
            last: (lo, 0),
            hots: Vec::new(),
            spans: Vec::new(),
            end: base,
            records: Vec::new(),
        }
    }

    fn corrupt(&self, detail: String) -> Error {
        Error::Corrupt { what: Self::WHAT.into(), detail }
    }

    /// Reads a block of hot entries (module docs of `persist::snapshot`).
    fn block(&mut self, b: &[u8]) -> Result<()> {
        let mut r = Reader::new(b, Self::WHAT);
        let n = HOTS_PER_BLOCK.min(self.count - self.hots.len());
        for _ in 0..n {
            self.hot(&mut r)?;
        }
        r.end()
    }

    /// Reads the next hot entry, stored from the one before (`self.last`).
    fn hot(&mut self, r: &mut Reader) -> Result<()> {
        let (gap, created) = (r.var()?, r.zvar()?);
        let id = self.last.0.saturating_add(gap);
        let created_at = self.last.1.wrapping_add(created);
        let (accessed, count) = (r.zvar()?, r.var()?);
        let access_count = u32::try_from(count)
            .map_err(|_| self.corrupt(format!("episode {id} accessed {count} times")))?;
        let hot = Hot {
            id,
            created_at,
            last_accessed_at: created_at.wrapping_add(accessed),
            access_count,
            importance: r.f32()?,
            tier: r.u8()?,
            status: status_from(r.u8()?)?,
            expires_at: r.zvar()?,
            cold: r.u8()? != 0,
        };
        // Ids ascend strictly: the first may be `lo` itself, no later one repeats.
        if !(self.lo..self.hi).contains(&id) || (!self.hots.is_empty() && gap == 0) {
            return Err(self.corrupt(format!(
                "episode {id} outside its part's ids [{}, {}) or listed twice",
                self.lo, self.hi
            )));
        }
        let start = self.end;
        let len = u32::try_from(r.var()?).ok();
        let end = len.and_then(|len| start.checked_add(len));
        self.end = end.ok_or_else(|| self.corrupt("records past 4 GiB".into()))?;
        self.last = (hot.id, hot.created_at);
        self.hots.push(hot);
        self.spans.push((start, self.end));
        Ok(())
    }

    /// The next block's length prefix, or after the last block the records'.
    fn next_block(&mut self) -> Want {
        self.step = if self.hots.len() < self.count { Step::BlockLen } else { Step::RecordsLen };
        Want::Read(4)
    }
}

impl Fields for EpisodesFields {
    const WHAT: &'static str = "snapshot episodes part";

    fn first(&self) -> Want {
        Want::Read(4)
    }

    fn take(&mut self, field: Field) -> Result<Want> {
        let b = match &field {
            Field::Read(b) => *b,
            _ => &[],
        };
        Ok(match (self.step, field) {
            (Step::Bm25Len, _) => {
                self.step = Step::Bm25;
                Want::Read(word(b) as usize)
            }
            (Step::Bm25, _) => {
                self.bm25 = Bm25::decode(&mut Reader::new(b, "snapshot BM25"))?;
                self.step = Step::Count;
                Want::Read(4)
            }
            (Step::Count, _) => {
                self.count = word(b) as usize;
                self.hots.reserve(self.count.min(self.len / HOT_MIN));
                self.spans.reserve(self.count.min(self.len / HOT_MIN));
                self.next_block()
            }
            (Step::BlockLen, _) => {
                self.step = Step::Block;
                Want::Read(word(b) as usize)
            }
            (Step::Block, _) => {
                self.block(b)?;
                self.next_block()
            }
            (Step::RecordsLen, _) => {
                let len = word(b);
                if len != self.end - self.base {
                    return Err(self.corrupt(format!(
                        "{len} bytes of records, {} listed",
                        self.end - self.base
                    )));
                }
                self.step = Step::Records;
                Want::Keep(len as usize)
            }
            (Step::Records, Field::Keep(records)) => {
                self.records = records;
                self.step = Step::Done;
                Want::Done
            }
            (step, _) => return Err(self.corrupt(format!("a field of the wrong kind at {step:?}"))),
        })
    }
}

/// A part's decoder, by the part's kind.
pub(crate) enum PartFields {
    // Boxed: a decoder is a few hundred bytes, moved from the cutter to the assembler.
    Episodes(Box<EpisodesFields>),
    Segment(Box<SegmentFields>),
    Rows(Box<RowsFields>),
    /// A graph build's progress: its entry's `lo` and `hi` (`VectorIndex::building`), and
    /// what was decoded.
    Progress(u64, u64, Box<ProgressFields>),
}

/// A namespace's snapshot assembled part by part, in the order they are read.
pub(crate) struct Assembler {
    watermark: u64,
    bm25: Option<Bm25>,
    vectors: VectorIndex,
    /// The segment rows filled by the rows parts so far.
    fill: Fill,
    /// Rows parts are being read: no segment part may follow.
    rows_started: bool,
    hots: Vec<Hot>,
    spans: Vec<(u32, u32)>,
    arena: Vec<u8>,
    /// Episodes parts cover the ids below this.
    covered: u64,
    /// A graph build's progress (`index::progress`), taken up once the rows are filled.
    progress: Option<(u64, u64, Box<ProgressFields>)>,
}

impl Assembler {
    pub fn new(watermark: u64, dim: usize, config: VectorConfig) -> Self {
        Self {
            watermark,
            bm25: None,
            vectors: VectorIndex::new(dim, config),
            fill: Fill::default(),
            rows_started: false,
            hots: Vec::new(),
            spans: Vec::new(),
            arena: Vec::new(),
            covered: 0,
            progress: None,
        }
    }

    /// A decoder for the next part, of `len` bytes: the episodes with ids in `[lo, hi)`.
    pub fn episodes(&self, lo: u64, hi: u64, len: usize) -> Result<EpisodesFields> {
        let base = u32::try_from(self.arena.len()).map_err(|_| Error::Corrupt {
            what: EpisodesFields::WHAT.into(),
            detail: "records past 4 GiB".into(),
        })?;
        Ok(EpisodesFields::new(lo, hi, base, len))
    }

    /// A decoder for the next part, the vector segment whose serial is `serial`.
    pub fn segment(&self, serial: u64) -> SegmentFields {
        SegmentFields::new(self.vectors.dim(), serial)
    }

    /// A decoder for the next part, the rows of seqs `[lo, hi)`: it holds the index until it
    /// is added back ([`Assembler::add`]).
    pub fn rows(&mut self, lo: u64, hi: u64) -> RowsFields {
        let empty = VectorIndex::new(self.vectors.dim(), self.vectors.config());
        self.rows_started = true;
        RowsFields::new(std::mem::replace(&mut self.vectors, empty), self.fill, lo, hi)
    }

    /// Adds a part its decoder has read whole.
    pub fn add(&mut self, part: PartFields) -> Result<()> {
        let f = match part {
            PartFields::Segment(_) if self.rows_started => {
                return Err(Error::Corrupt {
                    what: "snapshot".into(),
                    detail: "a segment part after rows parts".into(),
                })
            }
            PartFields::Segment(f) => return self.vectors.add_segment(*f),
            PartFields::Rows(f) => {
                (self.vectors, self.fill) = f.finish()?;
                return Ok(());
            }
            PartFields::Progress(..) if self.progress.is_some() => {
                return Err(Error::Corrupt {
                    what: "snapshot".into(),
                    detail: "two builds' progress".into(),
                })
            }
            PartFields::Progress(older, newer, f) => {
                self.progress = Some((older, newer, f));
                return Ok(());
            }
            PartFields::Episodes(f) => *f,
        };
        if f.step != Step::Done {
            return Err(f.corrupt("its bytes end before its records".into()));
        }
        if f.lo != self.covered || f.hi < f.lo || f.hi > self.watermark {
            return Err(f.corrupt(format!(
                "episodes part [{}, {}) after ids below {}, watermark {}",
                f.lo, f.hi, self.covered, self.watermark
            )));
        }
        self.covered = f.hi;
        match self.bm25.as_mut() {
            None => self.bm25 = Some(f.bm25),
            Some(b) => b.absorb(f.bm25)?,
        }
        if self.hots.is_empty() {
            (self.hots, self.spans) = (f.hots, f.spans);
        } else {
            self.hots.extend(f.hots);
            self.spans.extend(f.spans);
        }
        if self.arena.is_empty() {
            self.arena = f.records;
        } else {
            self.arena.extend_from_slice(&f.records);
        }
        Ok(())
    }

    /// The assembled namespace, once every part is added; `unsealed` are the rows of the
    /// vectors no segment holds yet (read from their records), added after the segments in
    /// their order, each replacing a sealed row of the same key (left in its graph as a
    /// tombstone).
    pub fn finish(mut self, unsealed: Vec<(u64, QVec)>) -> Result<(Episodes, Bm25, VectorIndex)> {
        if self.covered != self.watermark {
            return Err(Error::Corrupt {
                what: "snapshot".into(),
                detail: format!(
                    "its parts cover ids below {}, its watermark is {}",
                    self.covered, self.watermark
                ),
            });
        }
        let (filled, rows) = (self.fill.filled(), self.vectors.sealed_rows());
        if filled != rows {
            return Err(Error::Corrupt {
                what: "snapshot".into(),
                detail: format!("its rows parts hold {filled} of its segments' {rows} rows"),
            });
        }
        self.vectors.number_rows_from(self.fill.covered());
        if let Some((lo, hi, f)) = self.progress {
            self.vectors.resume(lo, hi, *f)?;
        }
        for (key, row) in unsealed {
            self.vectors.insert_row(key, row);
        }
        let episodes = Episodes::from_arena(self.hots, self.spans, self.arena);
        Ok((episodes, self.bm25.unwrap_or_default(), self.vectors))
    }
}
