//! A sealed vector segment decoded as its bytes arrive (`store::fields`), for a snapshot handed
//! over a few chunks at a time. The byte form is `segment` of `index::persist`:
//!
//! ```text
//! segment := rows:u32 ids:bytes(id_step:var×rows) scales:bytes(f32×rows)
//!            data:bytes(i8×rows·dim)
//!            graph:bytes(rows:u32 entry:u32 levels:u8×rows counts:u8×rows
//!                        level-0 links row by row, upper links)
//! ```
//!
//! The int8 rows (`data`, most of the bytes) are collected into the buffer the segment keeps
//! and each row's level-0 links unpacked straight into the graph's `u32` slots (`index::hnsw`
//! has their byte form); the ids, scales, levels, link counts and upper links are read from a
//! scratch buffer. So decoding holds little beside the decoded
//! segment: no buffer of the whole part, and no hole in the heap where one was.

use super::hnsw::Graph;
use super::links::Zero;
use super::persist::{le_chunks, read_ids};
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
    scales: Vec<f32>,
    data: Vec<i8>,
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
            scales: Vec::new(),
            data: Vec::new(),
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

    /// `rows · per` bytes, which a length prefix `len` must equal.
    fn sized(&self, len: u32, per: usize, what: &str) -> Result<usize> {
        match self.rows.checked_mul(per) {
            Some(n) if n == len as usize => Ok(n),
            _ => Err(self.corrupt(format!("{len} bytes of {what} for {} rows", self.rows))),
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
            (4, Field::Read(b)) => Want::Read(self.sized(word(b), 4, "scales")?),
            (5, Field::Read(b)) => {
                self.scales = le_chunks::<4>(b).map(f32::from_le_bytes).collect();
                Want::Read(4)
            }
            (6, Field::Read(b)) => Want::Keep(self.sized(word(b), self.dim, "rows")?),
            (7, Field::Keep(data)) => {
                // Collected in place: the same allocation, each byte read as the i8 it was
                // written from.
                self.data = data.into_iter().map(|x| x as i8).collect();
                Want::Read(4)
            }
            (8, Field::Read(b)) => {
                self.graph_len = word(b) as usize;
                Want::Read(8)
            }
            (9, Field::Read(b)) => {
                let n = word(&b[..4]) as usize;
                if n != self.rows {
                    return Err(self.corrupt(format!("graph of {n} rows for {} rows", self.rows)));
                }
                self.entry = word(&b[4..]);
                Want::Read(self.rows)
            }
            (10, Field::Read(b)) => {
                self.levels = b.to_vec();
                Want::Read(self.rows)
            }
            (11, Field::Read(b)) => {
                self.counts = b.to_vec();
                Want::Keep(Zero::stored_len(&self.counts, self.rows))
            }
            (12, Field::Keep(links)) => {
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
            (13, Field::Read(b)) => {
                let mut r = Reader::new(b, "vector segment graph");
                let (levels, zero) =
                    (std::mem::take(&mut self.levels), std::mem::take(&mut self.zero));
                let graph = Graph::from_parts(self.entry, levels, zero, &mut r)
                    .and_then(|g| r.end().map(|()| g))
                    .map_err(|e| self.corrupt(e.to_string()))?;
                let flat = Flat {
                    dim: self.dim,
                    ids: std::mem::take(&mut self.ids),
                    scales: std::mem::take(&mut self.scales),
                    data: std::mem::take(&mut self.data),
                };
                self.segment = Some(Segment { serial: self.serial, flat, graph });
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
            Some(seg) if fields.step == 13 => seg,
            _ => return Err(fields.corrupt("its bytes end before its graph".into())),
        };
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
