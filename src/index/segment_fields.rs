//! A sealed vector segment decoded as its bytes arrive (`store::fields`), for a snapshot handed
//! over a few chunks at a time. The byte form is `segment` of `index::persist`:
//!
//! ```text
//! segment := rows:u32 ids:bytes(id_step:var×rows) seqs:bytes
//!            graph:bytes(rows:u32 entry:u32 levels:u8×rows counts:u8×rows
//!                        level-0 links row by row, upper links)
//! ```
//!
//! The level-0 links (most of the bytes) are kept as they are stored, in the buffer the graph
//! keeps (`index::links`); the ids, seqs, levels, link counts and upper links are read from a
//! scratch buffer. So decoding holds little beside the decoded segment: no buffer of the whole
//! part, and no hole in the heap where one was. The segment's rows come later, from the rows
//! parts (`index::rows_fields`): its row buffer is allocated here, zeroed, at its full size.

use super::hnsw::Graph;
use super::links::Zero;
use super::persist::read_ids;
use super::row_seqs::RowSeqs;
use super::vectors::{Flat, Loc, Segment, VectorIndex};
use crate::error::{Error, Result};
use crate::store::codec::Reader;
use crate::store::fields::{word, Field, Fields, Want};

/// The decoder of one segment (module docs); [`VectorIndex::add_segment`] adds what it decoded.
pub(crate) struct SegmentFields {
    dim: usize,
    serial: u64,
    /// Fields taken so far.
    step: u8,
    rows: usize,
    ids: Vec<u64>,
    seqs: RowSeqs,
    /// The graph's bytes, from its length prefix.
    graph_len: usize,
    entry: u32,
    levels: Vec<u8>,
    /// Level-0 links stored per row, then the links.
    counts: Vec<u8>,
    zero: Zero,
    segment: Option<Segment>,
}

impl SegmentFields {
    /// A decoder of the segment whose serial is `serial`, of `dim`-dimensional rows.
    pub fn new(dim: usize, serial: u64) -> Self {
        SegmentFields {
            dim,
            serial,
            step: 0,
            rows: 0,
            ids: Vec::new(),
            seqs: RowSeqs::default(),
            graph_len: 0,
            entry: 0,
            levels: Vec::new(),
            counts: Vec::new(),
            zero: Zero::default(),
            segment: None,
        }
    }

    fn corrupt(&self, detail: String) -> Error {
        Error::Corrupt {
            what: Self::WHAT.into(),
            detail: format!("segment {}: {detail}", self.serial),
        }
    }
}

impl Fields for SegmentFields {
    const WHAT: &'static str = "vector segment";

    fn first(&self) -> Want {
        Want::Read(4)
    }

    fn take(&mut self, field: Field) -> Result<Want> {
        self.step += 1;
        Ok(match (self.step, field) {
            (1, Field::Read(b)) => {
                self.rows = word(b) as usize;
                Want::Read(4)
            }
            (2, Field::Read(b)) => Want::Read(word(b) as usize),
            (3, Field::Read(b)) => {
                self.ids = read_ids(b, self.rows).map_err(|e| self.corrupt(e.to_string()))?;
                Want::Read(4)
            }
            (4, Field::Read(b)) => Want::Read(word(b) as usize),
            (5, Field::Read(b)) => {
                let mut r = Reader::new(b, "vector segment seqs");
                self.seqs = RowSeqs::decode(&mut r, self.rows)
                    .and_then(|s| r.end().map(|()| s))
                    .map_err(|e| self.corrupt(e.to_string()))?;
                Want::Read(4)
            }
            (6, Field::Read(b)) => {
                self.graph_len = word(b) as usize;
                Want::Read(8)
            }
            (7, Field::Read(b)) => {
                let n = word(&b[..4]) as usize;
                if n != self.rows {
                    return Err(self.corrupt(format!("graph of {n} rows for {} rows", self.rows)));
                }
                self.entry = word(&b[4..]);
                Want::Read(self.rows)
            }
            (8, Field::Read(b)) => {
                self.levels = b.to_vec();
                Want::Read(self.rows)
            }
            (9, Field::Read(b)) => {
                self.counts = b.to_vec();
                Want::Keep(Zero::stored_len(&self.counts, self.rows))
            }
            (10, Field::Keep(links)) => {
                let before = 8 + 2 * self.rows + links.len();
                let upper = self.graph_len.checked_sub(before).ok_or_else(|| {
                    self.corrupt(format!(
                        "a graph of {} bytes for {} rows",
                        self.graph_len, self.rows
                    ))
                })?;
                let counts = std::mem::take(&mut self.counts);
                self.zero =
                    Zero::from_stored(&counts, links, self.rows).map_err(|e| self.corrupt(e))?;
                Want::Read(upper)
            }
            (11, Field::Read(b)) => {
                let mut r = Reader::new(b, "vector segment graph");
                let (levels, zero) =
                    (std::mem::take(&mut self.levels), std::mem::take(&mut self.zero));
                let graph = Graph::from_parts(self.entry, levels, zero, &mut r)
                    .and_then(|g| r.end().map(|()| g))
                    .map_err(|e| self.corrupt(e.to_string()))?;
                let ids = std::mem::take(&mut self.ids);
                let (mut scales, mut data) = (Vec::new(), Vec::new());
                let room = self.rows.checked_mul(self.dim).filter(|&n| {
                    scales.try_reserve_exact(self.rows).is_ok() && data.try_reserve_exact(n).is_ok()
                });
                let Some(n) = room else {
                    return Err(self.corrupt(format!("{} rows: not enough memory", self.rows)));
                };
                scales.resize(self.rows, 0.0);
                data.resize(n, 0);
                let flat = Flat { dim: self.dim, ids, scales, data };
                let seqs = std::mem::take(&mut self.seqs);
                self.segment = Some(Segment { serial: self.serial, flat, graph, seqs });
                Want::Done
            }
            (step, _) => return Err(self.corrupt(format!("field {step} of an unexpected kind"))),
        })
    }
}

impl VectorIndex {
    /// Adds the segment `fields` decoded after the segments added before (it is searched after
    /// them; a later location of an id wins).
    pub(crate) fn add_segment(&mut self, fields: SegmentFields) -> Result<()> {
        let seg = match fields.segment {
            Some(seg) if fields.step == 11 => seg,
            _ => return Err(fields.corrupt("its bytes end before its graph".into())),
        };
        match seg.seqs.bounds() {
            Some((first, _)) if first < self.next_seq => {
                return Err(Error::Corrupt {
                    what: SegmentFields::WHAT.into(),
                    detail: format!(
                        "segment {}: its rows from seq {first}, below an earlier segment's ({})",
                        seg.serial, self.next_seq
                    ),
                });
            }
            Some((_, past)) => self.next_seq = past,
            None => {}
        }
        let s = self.segments.len();
        // Reserved once: a table grown step by step leaves its smaller copies behind as
        // holes in a wasm heap, which never shrinks.
        self.loc.reserve_for(seg.flat.ids.iter().copied());
        for (row, id) in seg.flat.ids.iter().enumerate() {
            self.loc.insert(*id, Loc::Sealed(s, row as u32));
        }
        self.next_serial = self.next_serial.max(seg.serial + 1);
        self.segments.push(seg);
        Ok(())
    }
}
