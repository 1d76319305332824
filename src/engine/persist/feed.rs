//! Reading a snapshot (`persist::snapshot` has its byte forms): from a store, or handed over
//! chunk by chunk by a host that keeps the chunks in its own storage (`engine::lazy`). Each
//! part's bytes are hashed and decoded as they arrive (`persist::assemble`), checked against
//! the head (chunk count, length, hash) once the part ends; a part that fails makes the whole
//! snapshot unusable, and the namespace is then rebuilt from its records.

use super::assemble::EpisodesFields;
use super::assemble::{Assembler, PartFields};
#[cfg(test)]
use super::snapshot::hash;
use super::snapshot::{
    part_prefix, read_order, read_pending, read_runs, Hasher, Part, Pending, Snapshot,
    CHUNKS_PER_PAGE, EPISODES, HEAD_KIND, LAYOUT, PROGRESS, ROWS, SEGMENT,
};
use crate::embed::passages::TextVectors;
#[cfg(test)]
use crate::engine::episodes::Episodes;
use crate::engine::index_keys::{episode_of, passage_of};
use crate::error::Result;
#[cfg(test)]
use crate::index::bm25::Bm25;
use crate::index::progress::ProgressFields;
use crate::index::rows_fields::RowsFields;
use crate::index::segment_fields::SegmentFields;
#[cfg(test)]
use crate::index::vectors::VectorIndex;
use crate::index::vectors::{QVec, VectorConfig};
use crate::record::episode::decode_vectors;
use crate::store::codec::{open, Reader};
use crate::store::fields::Cutter;
use crate::store::scan::scan_pages;
use crate::store::{KvStore, Namespace, Table};

/// A stored snapshot's head and the bytes of its parts, checked against the head (for the
/// fuzzer, which mutates them).
#[cfg(test)]
pub(crate) struct Stored {
    pub watermark: u64,
    pub parts: Vec<Part>,
    /// `blobs[i]` holds `parts[i]`.
    pub blobs: Vec<Vec<u8>>,
}

/// A head: watermark, next part id, parts, parts written ahead, unsealed vector keys.
type Head = (u64, u64, Vec<Part>, Vec<Pending>, Vec<u64>);

/// What a snapshot is read for: the namespace's next id, model and vector settings.
pub(crate) struct Reading<'a> {
    pub next_id: u64,
    pub model: &'a str,
    pub dim: usize,
    pub config: VectorConfig,
}

/// Reads `ns`'s snapshot: `None` when there is none, `Some(Err(reason))` when it is unusable.
/// Storage failures are errors. Each part is decoded as its chunks are read, a page of them at
/// a time, so no part is held whole.
pub(crate) fn read(
    store: &impl KvStore,
    ns: &Namespace,
    reading: &Reading,
) -> Result<Option<std::result::Result<Snapshot, String>>> {
    let Some(mut feed) = Feed::start(store, ns, reading)? else { return Ok(None) };
    probe(store, ns, feed.pending())?;
    loop {
        let Some(p) = feed.pending().next().cloned() else { break };
        // A few chunks a page: the store's copies stay small next to what is decoded.
        scan_pages(store, &part_prefix(ns, p.id), None, CHUNKS_PER_PAGE, &mut |_, chunk| {
            feed.push(chunk);
            Ok(())
        })?;
        feed.received();
    }
    Ok(Some(feed.finish()))
}

/// Asks the store for the first chunk of every part before any is read, so that a store
/// which keeps them elsewhere (`store::journal`'s lazy prefixes) names them all in one
/// `NeedRecords` error instead of one per round.
fn probe<'a>(
    store: &impl KvStore,
    ns: &Namespace,
    parts: impl Iterator<Item = &'a Part>,
) -> Result<()> {
    let mut first = None;
    for p in parts {
        if let Err(e) = store.scan(&part_prefix(ns, p.id), None, 1) {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

/// A snapshot read part by part: from a store ([`read`]), or handed over by a host that keeps
/// the parts in its own storage (`engine::lazy`). A part is decoded as its chunks arrive, into
/// the buffers the decoded state keeps (a segment's rows and links, the episodes' records);
/// beside them only the field being read is held (at most a part's BM25 documents).
///
/// The vector segments come first, then the rows parts, then the episodes parts
/// ([`read_order`]; each kind in the head's order).
pub(crate) struct Feed {
    watermark: u64,
    next_part: u64,
    parts: Vec<Part>,
    /// Segment parts the head lists as written ahead (`snapshot::ahead`).
    ahead: Vec<Pending>,
    /// Indexes into `parts` in the order they are added.
    order: Vec<usize>,
    assembler: Assembler,
    /// Parts added so far.
    added: usize,
    /// Why the snapshot is unusable, once that is known.
    failed: Option<String>,
    /// The vector keys the head lists as unsealed, and their rows read from the records.
    unsealed: Vec<u64>,
    rows: Vec<(u64, QVec)>,
    /// The part being received.
    receiving: Option<Receiving>,
    /// The room [`Feed::receive`] gives; it holds a chunk to take in at the next call while
    /// `staged` is true.
    room: Vec<u8>,
    staged: bool,
}

impl Feed {
    /// Reads `ns`'s snapshot head, then the vector records of the keys it lists as unsealed:
    /// `None` when there is no snapshot. A head that is unreadable, of another layout or past
    /// the next id, or an unusable vector record, gives a feed that has already failed.
    pub fn start(store: &impl KvStore, ns: &Namespace, reading: &Reading) -> Result<Option<Feed>> {
        let next_id = reading.next_id;
        let (watermark, next_part, parts, ahead, unsealed, mut failed) =
            match head(store, ns, next_id)? {
                None => return Ok(None),
                Some(Err(reason)) => (0, 0, Vec::new(), Vec::new(), Vec::new(), Some(reason)),
                Some(Ok((watermark, next_part, parts, ahead, unsealed))) => {
                    (watermark, next_part, parts, ahead, unsealed, None)
                }
            };
        let mut rows = Vec::new();
        if failed.is_none() {
            match unsealed_rows(store, ns, &unsealed, reading)? {
                Ok(r) => rows = r,
                Err(reason) => failed = Some(reason),
            }
        }
        let assembler = Assembler::new(watermark, reading.dim, reading.config);
        let mut order: Vec<usize> = (0..parts.len()).collect();
        order.sort_by_key(|&i| read_order(parts[i].kind));
        Ok(Some(Feed {
            watermark,
            next_part,
            parts,
            ahead,
            order,
            assembler,
            added: 0,
            failed,
            unsealed,
            rows,
            receiving: None,
            room: Vec::new(),
            staged: false,
        }))
    }

    /// A feed that failed for `reason` (kept while a load that used it runs again).
    pub fn failed(reason: String) -> Feed {
        let assembler = Assembler::new(0, 0, VectorConfig::default());
        Feed {
            watermark: 0,
            next_part: 0,
            parts: Vec::new(),
            ahead: Vec::new(),
            order: Vec::new(),
            assembler,
            added: 0,
            failed: Some(reason),
            unsealed: Vec::new(),
            rows: Vec::new(),
            receiving: None,
            room: Vec::new(),
            staged: false,
        }
    }

    /// Why the snapshot is unusable, when that is known already.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The parts still to add, in order (none once the snapshot is known to be unusable).
    pub fn pending(&self) -> impl Iterator<Item = &Part> {
        let from = if self.failed.is_some() { self.order.len() } else { self.added };
        self.order[from..].iter().map(|&i| &self.parts[i])
    }

    /// The key prefix of part `p`'s chunks (`p/<id>`): a scan of it yields them in order.
    pub fn prefix(ns: &Namespace, p: &Part) -> Vec<u8> {
        part_prefix(ns, p.id)
    }

    /// Takes the next chunk of the next pending part (chunks come in key order).
    pub fn push(&mut self, chunk: &[u8]) {
        let Some(rx) = self.receiving() else { return };
        if let Err(reason) = rx.push(chunk) {
            self.fail(reason);
        }
    }

    /// Room for the next chunk, `len` bytes, of the next pending part, for the caller to copy
    /// the chunk into; it is taken in ([`Feed::push`]) at the next call. A host that reads a
    /// part's chunks a page at a time never holds the whole part, and neither does the feed.
    /// `None` when nothing is pending, when the chunks run past the part's length, or when
    /// that much memory cannot be had: the snapshot is then unusable, and the chunk is to be
    /// skipped.
    pub fn receive(&mut self, len: usize) -> Option<&mut [u8]> {
        self.take_staged();
        if let Err(reason) = self.receiving()?.fits(len) {
            self.fail(reason);
            return None;
        }
        self.room.clear();
        if self.room.try_reserve_exact(len).is_err() {
            self.fail(format!("a chunk of {len} bytes: not enough memory to read it"));
            return None;
        }
        self.room.resize(len, 0);
        self.staged = true;
        Some(self.room.as_mut_slice())
    }

    /// Ends the part whose chunks were pushed or received: checks it against the head (chunk
    /// count, length, hash) and adds what was decoded.
    pub fn received(&mut self) {
        self.take_staged();
        // Started here when no chunk came, so that a part missing its chunks fails the check.
        if self.receiving().is_none() {
            return;
        }
        let Some(rx) = self.receiving.take() else { return };
        match rx.end().and_then(|part| self.assembler.add(part).map_err(|e| e.to_string())) {
            Ok(()) => self.added += 1,
            Err(reason) => self.fail(reason),
        }
    }

    /// The part being received, started when its first chunk comes (`None` when no part is
    /// pending).
    fn receiving(&mut self) -> Option<&mut Receiving> {
        if self.receiving.is_none() {
            let p = self.pending().next()?.clone();
            match Receiving::new(p, &mut self.assembler) {
                Ok(rx) => self.receiving = Some(rx),
                Err(reason) => {
                    self.fail(reason);
                    return None;
                }
            }
        }
        self.receiving.as_mut()
    }

    /// Pushes the chunk [`Feed::receive`] gave room for, if any.
    fn take_staged(&mut self) {
        if std::mem::take(&mut self.staged) {
            let room = std::mem::take(&mut self.room);
            self.push(&room);
            self.room = room;
        }
    }

    fn fail(&mut self, reason: String) {
        self.failed.get_or_insert(reason);
        self.receiving = None;
        self.staged = false;
        self.room = Vec::new();
    }

    /// The decoded snapshot, or why it is unusable (a part missing counts).
    pub fn finish(self) -> std::result::Result<Snapshot, String> {
        if let Some(reason) = self.failed {
            return Err(reason);
        }
        if self.added < self.parts.len() {
            return Err(format!("{} of its {} parts were read", self.added, self.parts.len()));
        }
        let (episodes, bm25, vectors) =
            self.assembler.finish(self.rows).map_err(|e| e.to_string())?;
        let Feed { watermark, next_part, parts, ahead: pending, unsealed, .. } = self;
        Ok(Snapshot { watermark, parts, pending, next_part, episodes, bm25, vectors, unsealed })
    }
}

/// The head and part bytes of `ns`'s snapshot, checked by length and hash (not decoded).
#[cfg(test)]
pub(crate) fn stored(
    store: &impl KvStore,
    ns: &Namespace,
) -> Result<Option<std::result::Result<Stored, String>>> {
    let (watermark, _, parts, ..) = match head(store, ns, u64::MAX)? {
        None => return Ok(None),
        Some(Err(reason)) => return Ok(Some(Err(reason))),
        Some(Ok(h)) => h,
    };
    let mut blobs = Vec::with_capacity(parts.len());
    for p in &parts {
        let (blob, count) = chunks(store, ns, p)?;
        if let Err(reason) = check(p, &blob, count) {
            return Ok(Some(Err(reason)));
        }
        blobs.push(blob);
    }
    Ok(Some(Ok(Stored { watermark, parts, blobs })))
}

/// The head of `ns`'s snapshot, whose watermark may not pass `next_id`, the namespace's next
/// episode id (checked before the unsealed keys are read: their count is bounded by it).
fn head(
    store: &impl KvStore,
    ns: &Namespace,
    next_id: u64,
) -> Result<Option<std::result::Result<Head, String>>> {
    let Some(head) = store.get(&ns.key(Table::Snapshot, b"head"))? else { return Ok(None) };
    let parsed = (|| {
        let mut r = Reader::new(open(&head, HEAD_KIND, "snapshot head")?, "snapshot head");
        let layout = r.str()?.to_string();
        if layout != LAYOUT {
            return Ok(Err(format!("layout {layout:?}, this build reads {LAYOUT:?}")));
        }
        let (watermark, next_part, n) = (r.u64()?, r.u64()?, r.u32()? as usize);
        if watermark > next_id {
            return Ok(Err(format!("watermark {watermark} is past the next id {next_id}")));
        }
        let mut parts = Vec::with_capacity(n.min(r.remaining() / 41));
        for _ in 0..n {
            let (id, kind, lo, hi) = (r.u64()?, r.u8()?, r.u64()?, r.u64()?);
            let (chunks, len, hash) = (r.u32()?, r.u64()?, r.u64()?);
            parts.push(Part { id, kind, lo, hi, chunks, len, hash });
        }
        let pending = read_pending(&mut r)?;
        let unsealed = read_runs(&mut r, watermark)?;
        r.end()?;
        Ok::<_, crate::error::Error>(Ok((watermark, next_part, parts, pending, unsealed)))
    })();
    Ok(Some(match parsed {
        Ok(h) => h,
        Err(e) => Err(format!("unreadable head: {e}")),
    }))
}

/// The int8 rows of the vector `keys` a snapshot lists as unsealed, quantised again from their
/// vector records (`persist::snapshot` module docs). A key whose record or passage is gone is
/// skipped (its episode was erased or corrected since, or never had a vector: as a rebuild
/// would); a record unreadable, or of another model or dimension, makes the snapshot unusable
/// (`Ok(Err(reason))`), so that the rebuild sets it aside. Every record is asked for
/// before a storage error is returned, so a store that keeps them elsewhere
/// (`store::journal`'s lazy prefixes) names them all in one `NeedRecords` error.
fn unsealed_rows(
    store: &impl KvStore,
    ns: &Namespace,
    keys: &[u64],
    reading: &Reading,
) -> Result<std::result::Result<Vec<(u64, QVec)>, String>> {
    let mut first_error = None;
    let mut rows = Vec::new();
    // The record last read: a long text's passages are consecutive keys of one record.
    let mut last: Option<(u64, Option<TextVectors>)> = None;
    for &key in keys {
        let id = episode_of(key);
        if last.as_ref().map(|l| l.0) != Some(id) {
            let vectors = match store.get(&ns.key(Table::Vector, &id.to_be_bytes())) {
                Ok(None) => None,
                Ok(Some(bytes)) => match decode_vectors(&bytes) {
                    Ok((model, v)) if model == reading.model => Some(v),
                    Ok((model, _)) => {
                        return Ok(Err(format!("the vector of episode {id} is of model {model}")))
                    }
                    Err(e) => return Ok(Err(format!("the vector of episode {id}: {e}"))),
                },
                Err(e) => {
                    first_error.get_or_insert(e);
                    None
                }
            };
            last = Some((id, vectors));
        }
        if first_error.is_some() {
            continue;
        }
        let Some((_, Some(vectors))) = &last else { continue };
        let v = match passage_of(key) {
            None => Some(&vectors.whole),
            Some(p) => vectors.passages.get(p).map(|p| &p.vector),
        };
        // A passage the record no longer has: the text was corrected since (its dirty marker
        // has the episode indexed again from its records), so the key is skipped.
        match v {
            Some(v) if v.len() == reading.dim => rows.push((key, QVec::new(v))),
            Some(v) => {
                let (n, dim) = (v.len(), reading.dim);
                return Ok(Err(format!("episode {id}'s vector has {n} dimensions, not {dim}")));
            }
            None => {}
        }
    }
    first_error.map_or(Ok(Ok(rows)), Err)
}

/// The part being received: its bytes hashed and cut into fields as they arrive.
struct Receiving {
    part: Part,
    /// Hashes the bytes so far, and counts them.
    hasher: Hasher,
    chunks: u32,
    decoder: Decoder,
}

enum Decoder {
    // Boxed: a cutter and its decoder are a few hundred bytes.
    Episodes(Box<Cutter<EpisodesFields>>),
    Segment(Box<Cutter<SegmentFields>>),
    Rows(Box<Cutter<RowsFields>>),
    Progress(Box<Cutter<ProgressFields>>),
}

impl Receiving {
    fn new(part: Part, assembler: &mut Assembler) -> std::result::Result<Self, String> {
        let fail = |e: crate::error::Error| format!("part {}: {e}", part.id);
        let len = usize::try_from(part.len)
            .map_err(|_| format!("part {} of {} bytes", part.id, part.len))?;
        let decoder = match part.kind {
            EPISODES => {
                let fields = assembler.episodes(part.lo, part.hi, len).map_err(fail)?;
                Decoder::Episodes(Box::new(Cutter::new(fields, len).map_err(fail)?))
            }
            SEGMENT => Decoder::Segment(Box::new(
                Cutter::new(assembler.segment(part.lo), len).map_err(fail)?,
            )),
            ROWS => Decoder::Rows(Box::new(
                Cutter::new(assembler.rows(part.lo, part.hi), len).map_err(fail)?,
            )),
            PROGRESS => Decoder::Progress(Box::new(
                Cutter::new(ProgressFields::default(), len).map_err(fail)?,
            )),
            kind => return Err(format!("part {} of unknown kind {kind}", part.id)),
        };
        Ok(Receiving { part, hasher: Hasher::new(), chunks: 0, decoder })
    }

    /// Whether a next chunk of `len` bytes stays within the part's length.
    fn fits(&self, len: usize) -> std::result::Result<(), String> {
        if self.hasher.len().saturating_add(len as u64) > self.part.len {
            let p = &self.part;
            return Err(format!("part {}: its chunks hold more than its {} bytes", p.id, p.len));
        }
        Ok(())
    }

    /// Takes the part's next chunk.
    fn push(&mut self, chunk: &[u8]) -> std::result::Result<(), String> {
        self.fits(chunk.len())?;
        self.chunks = self.chunks.saturating_add(1);
        self.hasher.update(chunk);
        let pushed = match &mut self.decoder {
            Decoder::Episodes(c) => c.push(chunk),
            Decoder::Segment(c) => c.push(chunk),
            Decoder::Rows(c) => c.push(chunk),
            Decoder::Progress(c) => c.push(chunk),
        };
        pushed.map_err(|e| format!("part {}: {e}", self.part.id))
    }

    /// The part's decoder, once its bytes check out against the head.
    fn end(self) -> std::result::Result<PartFields, String> {
        let p = &self.part;
        let got = self.hasher.len();
        if self.chunks != p.chunks || got != p.len || self.hasher.finish() != p.hash {
            return Err(format!(
                "part {}: {} chunks of {got} bytes where the head says {} of {}, or the hash \
                 differs",
                p.id, self.chunks, p.chunks, p.len
            ));
        }
        let fail = |e: crate::error::Error| format!("part {}: {e}", p.id);
        match self.decoder {
            Decoder::Episodes(c) => {
                c.finish().map(|f| PartFields::Episodes(Box::new(f))).map_err(fail)
            }
            Decoder::Segment(c) => {
                c.finish().map(|f| PartFields::Segment(Box::new(f))).map_err(fail)
            }
            Decoder::Rows(c) => c.finish().map(|f| PartFields::Rows(Box::new(f))).map_err(fail),
            Decoder::Progress(c) => {
                c.finish().map(|f| PartFields::Progress(p.lo, p.hi, Box::new(f))).map_err(fail)
            }
        }
    }
}

/// The bytes of part `p`'s chunks, concatenated, and how many chunks there were.
#[cfg(test)]
fn chunks(store: &impl KvStore, ns: &Namespace, p: &Part) -> Result<(Vec<u8>, u32)> {
    let mut blob = Vec::new();
    let mut count = 0u32;
    scan_pages(store, &part_prefix(ns, p.id), None, CHUNKS_PER_PAGE, &mut |_, v| {
        blob.extend_from_slice(v);
        count = count.saturating_add(1);
        Ok(())
    })?;
    Ok((blob, count))
}

/// Checks part `p`'s bytes (from `count` chunks) against its head entry: count, length, hash.
#[cfg(test)]
fn check(p: &Part, blob: &[u8], count: u32) -> std::result::Result<(), String> {
    if count != p.chunks || blob.len() as u64 != p.len || hash(blob) != p.hash {
        return Err(format!("part {}: chunks, length or hash differ from the head", p.id));
    }
    Ok(())
}

/// Decodes the parts of a snapshot (`blobs[i]` holds `parts[i]`, taken as one chunk; the
/// head's chunk counts are not checked).
#[cfg(test)]
pub(crate) fn decode(
    parts: &[Part],
    blobs: &[Vec<u8>],
    watermark: u64,
    dim: usize,
    config: VectorConfig,
) -> std::result::Result<(Episodes, Bm25, VectorIndex), String> {
    let mut assembler = Assembler::new(watermark, dim, config);
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| read_order(parts[i].kind));
    for (p, blob) in order.into_iter().map(|i| (&parts[i], &blobs[i])) {
        let mut rx = Receiving::new(Part { chunks: 1, ..p.clone() }, &mut assembler)?;
        rx.push(blob)?;
        assembler.add(rx.end()?).map_err(|e| e.to_string())?;
    }
    assembler.finish(Vec::new()).map_err(|e| e.to_string())
}
