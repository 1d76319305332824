//! Snapshots: a namespace's episodes and derived indexes stored as immutable parts, so a cold
//! open copies bytes instead of tokenising text, quantising vectors and building HNSW graphs,
//! and so a snapshot taken after a few changes writes about what changed, not the namespace.
//!
//! Keys under [`Table::Snapshot`]:
//!
//! ```text
//! head                      kind 7: layout:str watermark:u64 next_part:u64 parts:u32 part×parts
//! part                      := id:u64 kind:u8 lo:u64 hi:u64 chunks:u32 len:u64 hash:u64
//! p/<id:u64 BE><i:u32 BE>   chunk i of part `id`, raw bytes (at most Config::snapshot_chunk)
//! d/<id:u64 BE>             empty: episode `id` (below the watermark) changed after its part
//!                           was written
//!
//! kind 1, episodes [lo, hi): bm25:bytes rows:bytes n:u32 hot×n records:bytes
//! kind 2, vector segment:   the sealed HNSW segment whose serial is `lo`
//! hot := id:u64 created_at:i64 last_accessed_at:i64 access_count:u32 importance:f32
//!        tier:u8 status:u8 expires_at:i64 cold:u8 record_len:u32
//! ```
//!
//! An episodes part holds the episodes with ids in `[lo, hi)` as they were when it was written:
//! their BM25 documents (`index::persist`, the documents of those episodes alone), the rows of
//! their vectors that were still in the exact delta, and each episode's own sealed record
//! (checksummed as in the store), in the order of the `hot` entries; a cold open keeps the
//! records as one arena and decodes an episode only when it is needed whole
//! (`engine::episodes`). A segment part is written once, when the segment is new, and deleted
//! when a merge replaces it. `hash` is [`hash`] over the part's bytes; `layout` names this
//! format and the encodings it relies on.
//!
//! The parts cover the ids below `watermark`. Opening reads them all (BM25 documents are
//! merged, delta rows kept for the ids no segment holds), then re-reads from their records the
//! episodes marked dirty (status changes, folded access statistics) and every episode at or
//! above the watermark. A snapshot is a cache, never the source of truth: one whose layout,
//! hashes or contents do not check out is ignored, the namespace is rebuilt from its records,
//! and [`Opened::Rebuilt`] says why.
//!
//! Writing one is one atomic batch. Usually it is **incremental**: one new episodes part for
//! the ids since the last watermark, the segments not stored yet, the deletion of segments
//! merged away, and the head. Dirty markers stay until a **full** rewrite, which replaces every
//! episodes part by one and absorbs the markers; it is chosen when there is no snapshot yet,
//! when the markers outnumber an eighth of the watermark (and 256), or when there are more than
//! [`MAX_EPISODE_PARTS`] episodes parts.

use crate::engine::episodes::{Episodes, Hot};
use crate::error::Result;
use crate::index::bm25::Bm25;
use crate::index::vectors::{VectorConfig, VectorIndex};
use crate::index::FastSet;
use crate::record::episode::{status_code, status_from};
use crate::store::codec::{keep_range, open, seal, Reader, Writer};
use crate::store::scan::{scan_all, scan_pages};
use crate::store::{Batch, KvStore, Namespace, Table};

const HEAD_KIND: u8 = 7;
const CHUNKS_PER_PAGE: usize = 16;
const EPISODES: u8 = 1;
const SEGMENT: u8 = 2;
/// Episodes parts a snapshot may have before the next one is a full rewrite.
pub(crate) const MAX_EPISODE_PARTS: usize = 256;
/// This format, the lexical analysis its BM25 postings were made with (`terms/2`: words,
/// whole tokens and Snowball stems, `index::terms::index_terms`; `windows/1`: a text of more
/// than 128 words indexed as its windows, `engine::space::Space::bm25_insert`), and the graph
/// encoding it embeds (see `index::persist`). A snapshot of another layout is ignored and
/// rebuilt.
pub(crate) const LAYOUT: &str = "mnemo-snapshot/4 parts/1 terms/2 windows/1 hnsw/1";

/// One stored part, as the head lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    pub id: u64,
    pub kind: u8,
    /// Episodes: the first id; segment: its serial.
    pub lo: u64,
    /// Episodes: the first id past the part; segment: 0.
    pub hi: u64,
    pub chunks: u32,
    pub len: u64,
    pub hash: u64,
}

/// Where the namespace's snapshot stands.
#[derive(Default)]
pub(crate) struct SnapState {
    /// First id the stored snapshot does not cover (0: no snapshot).
    pub watermark: u64,
    /// The stored parts, as the head lists them.
    pub parts: Vec<Part>,
    /// The id the next part gets.
    pub next_part: u64,
    /// Episodes below the watermark changed since their part was written (each has a marker
    /// in the store).
    pub dirty: FastSet,
}

impl SnapState {
    /// Whether a change to episode `id` needs a dirty marker in its batch.
    pub fn marks_dirty(&self, id: u64) -> bool {
        id < self.watermark && !self.dirty.contains(&id)
    }

    /// After the write that carried its marker: episode `id` differs from its part.
    pub fn mark_dirty(&mut self, id: u64) {
        if id < self.watermark {
            self.dirty.insert(id);
        }
    }

    /// Dirty markers past which the next snapshot is a full rewrite.
    fn dirty_limit(&self) -> usize {
        (self.watermark / 8).max(256) as usize
    }

    /// True when a sealed segment of `serials` is not stored yet: a graph built since the
    /// last snapshot, which a restart would have to build again.
    pub fn lacks_segment(&self, serials: &[u64]) -> bool {
        serials.iter().any(|s| !self.parts.iter().any(|p| p.kind == SEGMENT && p.lo == *s))
    }

    /// Changes the next snapshot would store: episodes past the watermark, and the dirty
    /// markers once a full rewrite is due to absorb them.
    pub fn pending(&self, next_id: u64) -> u64 {
        let markers = if self.dirty.len() > self.dirty_limit() { self.dirty.len() } else { 0 };
        next_id.saturating_sub(self.watermark.max(1)) + markers as u64
    }
}

/// How a namespace's indexes were obtained when it was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// Rebuilt from the records: there was no snapshot, or `reason` says why it was not used.
    Rebuilt {
        /// Why an existing snapshot was ignored (`None`: there was none).
        reason: Option<String>,
    },
    /// Read from a snapshot of the ids below `watermark`, then `replayed` newer episodes and
    /// `refreshed` changed ones were read from their records.
    Snapshot {
        /// First id the snapshot does not cover.
        watermark: u64,
        /// Episodes at or above the watermark, indexed from their records.
        replayed: usize,
        /// Episodes changed after the snapshot, re-read from their records.
        refreshed: usize,
    },
}

/// A decoded snapshot.
pub(crate) struct Snapshot {
    pub watermark: u64,
    pub parts: Vec<Part>,
    pub next_part: u64,
    pub episodes: Episodes,
    pub bm25: Bm25,
    pub vectors: VectorIndex,
}

/// The key of the dirty marker of episode `id`.
pub(crate) fn dirty_key(ns: &Namespace, id: u64) -> Vec<u8> {
    let mut k = ns.key(Table::Snapshot, b"d/");
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn part_prefix(ns: &Namespace, part: u64) -> Vec<u8> {
    let mut k = ns.key(Table::Snapshot, b"p/");
    k.extend_from_slice(&part.to_be_bytes());
    k
}

fn chunk_key(ns: &Namespace, part: u64, i: u32) -> Vec<u8> {
    let mut k = part_prefix(ns, part);
    k.extend_from_slice(&i.to_be_bytes());
    k
}

/// A 64-bit checksum, four lanes of multiply-rotate over 8-byte words: any change of one word
/// changes the result, and it runs at memory speed in wasm too (CRC32 does not, without
/// carry-less multiply).
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut lanes = [1u64, 2, 3, 4];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            *lane = (*lane ^ w).wrapping_mul(K).rotate_left(29);
        }
    }
    let mut h = bytes.len() as u64;
    for lane in lanes {
        h = (h ^ lane).wrapping_mul(K).rotate_left(29);
    }
    for &b in blocks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K).rotate_left(29);
    }
    h ^ (h >> 32)
}

/// The ids of every dirty marker of `ns`.
pub(crate) fn dirty_ids(store: &impl KvStore, ns: &Namespace) -> Result<Vec<u64>> {
    let prefix = ns.key(Table::Snapshot, b"d/");
    let mut ids = Vec::new();
    scan_all(store, &prefix, None, |k, _| {
        let b: [u8; 8] =
            k[prefix.len()..].try_into().map_err(|_| crate::error::Error::Corrupt {
                what: "snapshot dirty marker".into(),
                detail: format!("key of {} bytes", k.len()),
            })?;
        ids.push(u64::from_be_bytes(b));
        Ok(())
    })?;
    Ok(ids)
}

/// What a snapshot holds, borrowed from a loaded namespace.
pub(crate) struct Parts<'a> {
    pub bm25: &'a Bm25,
    pub vectors: &'a VectorIndex,
    pub episodes: &'a Episodes,
    /// The namespace's next episode id: the new snapshot's watermark.
    pub next_id: u64,
    /// The bits of a BM25 document or vector key that hold its episode's id (the bits above
    /// name a window of a long text: `engine::space::passage_key`).
    pub id_mask: u64,
}

/// A snapshot write: the batch, and the state once it is stored.
pub(crate) struct Written {
    pub batch: Batch,
    pub watermark: u64,
    pub parts: Vec<Part>,
    pub next_part: u64,
    /// A full rewrite: every dirty marker was deleted.
    pub full: bool,
    /// Bytes of the parts written.
    pub bytes: usize,
}

/// Keys of snapshot chunks no head lists: when a namespace has no usable snapshot (none, a
/// damaged one, or one of an older layout, whose chunks were under `c/`), its first snapshot
/// deletes whatever chunks are left, so no part id is reused over old chunks.
pub(crate) fn stale_keys(store: &impl KvStore, ns: &Namespace) -> Result<Vec<Vec<u8>>> {
    let mut keys = Vec::new();
    for prefix in [&b"c/"[..], b"p/"] {
        scan_pages(store, &ns.key(Table::Snapshot, prefix), None, CHUNKS_PER_PAGE, |k, _| {
            keys.push(k.to_vec());
            Ok(())
        })?;
    }
    Ok(keys)
}

/// The batch that brings `ns`'s snapshot (described by `snap`) up to `parts` (module docs:
/// incremental, or full when due), first deleting the `stale` keys ([`stale_keys`]).
pub(crate) fn batch(
    parts: Parts,
    snap: &SnapState,
    ns: &Namespace,
    chunk_size: usize,
    stale: Vec<Vec<u8>>,
) -> Result<Written> {
    let episode_parts = snap.parts.iter().filter(|p| p.kind == EPISODES).count();
    let full = snap.parts.is_empty()
        || snap.dirty.len() > snap.dirty_limit()
        || episode_parts >= MAX_EPISODE_PARTS;
    let mut batch = Batch::new();
    for k in stale {
        batch.delete(k);
    }
    let mut next_part = snap.next_part.max(1);
    let mut bytes = 0;
    let mut put_part = |batch: &mut Batch, kind: u8, lo: u64, hi: u64, blob: Vec<u8>| {
        let id = next_part;
        next_part += 1;
        let mut chunks = 0u32;
        for piece in blob.chunks(chunk_size.max(1)) {
            batch.put(chunk_key(ns, id, chunks), piece.to_vec());
            chunks += 1;
        }
        bytes += blob.len();
        Part { id, kind, lo, hi, chunks, len: blob.len() as u64, hash: hash(&blob) }
    };
    let delete_part = |batch: &mut Batch, p: &Part| {
        for i in 0..p.chunks {
            batch.delete(chunk_key(ns, p.id, i));
        }
    };
    let mut kept = Vec::new();
    let lo = if full { 0 } else { snap.watermark };
    for p in snap.parts.iter().filter(|p| p.kind == EPISODES) {
        if full {
            delete_part(&mut batch, p);
        } else {
            kept.push(p.clone());
        }
    }
    if full {
        for &id in &snap.dirty {
            batch.delete(dirty_key(ns, id));
        }
    }
    if parts.next_id > lo || full {
        let blob = episodes_part(&parts, lo, parts.next_id)?;
        kept.push(put_part(&mut batch, EPISODES, lo, parts.next_id, blob));
    }
    let serials = parts.vectors.segment_serials();
    for p in snap.parts.iter().filter(|p| p.kind == SEGMENT) {
        if !serials.contains(&p.lo) {
            delete_part(&mut batch, p);
        }
    }
    for serial in serials {
        match snap.parts.iter().find(|p| p.kind == SEGMENT && p.lo == serial) {
            Some(p) => kept.push(p.clone()),
            None => {
                let mut w = Writer::new();
                parts.vectors.encode_segment(serial, &mut w)?;
                kept.push(put_part(&mut batch, SEGMENT, serial, 0, w.finish()));
            }
        }
    }
    let mut head = Writer::new();
    head.str(LAYOUT).u64(parts.next_id).u64(next_part).u32(kept.len() as u32);
    for p in &kept {
        head.u64(p.id).u8(p.kind).u64(p.lo).u64(p.hi).u32(p.chunks).u64(p.len).u64(p.hash);
    }
    batch.put(ns.key(Table::Snapshot, b"head"), seal(HEAD_KIND, &head.finish()));
    Ok(Written { batch, watermark: parts.next_id, parts: kept, next_part, full, bytes })
}

/// The bytes of an episodes part for ids in `[lo, hi)`.
fn episodes_part(parts: &Parts, lo: u64, hi: u64) -> Result<Vec<u8>> {
    let within = |key: u64| (lo..hi).contains(&(key & parts.id_mask));
    let mut w = Writer::new();
    let mut section = Writer::new();
    parts.bm25.encode_range(&mut section, (lo, hi), parts.id_mask);
    w.bytes(&section.finish());
    let mut section = Writer::new();
    parts.vectors.encode_rows(&mut section, within);
    w.bytes(&section.finish());
    let mut hots: Vec<Hot> =
        parts.episodes.hots().iter().filter(|h| (lo..hi).contains(&h.id)).cloned().collect();
    hots.sort_unstable_by_key(|h| h.id);
    let mut records = Vec::new();
    w.u32(hots.len() as u32);
    for h in &hots {
        let record = parts.episodes.record(h.id).expect("listed above");
        w.u64(h.id).i64(h.created_at).i64(h.last_accessed_at).u32(h.access_count);
        w.f32(h.importance).u8(h.tier).u8(status_code(h.status));
        w.i64(h.expires_at).u8(u8::from(h.cold)).u32(record.len() as u32);
        records.extend_from_slice(&record);
    }
    w.bytes(&records);
    Ok(w.finish())
}

/// The watermark of `ns`'s snapshot as its head states it (`None`: no head, or one of another
/// layout or unreadable; the parts are not checked here).
pub(crate) fn watermark(store: &impl KvStore, ns: &Namespace) -> Result<Option<u64>> {
    let Some(head) = store.get(&ns.key(Table::Snapshot, b"head"))? else { return Ok(None) };
    let Ok(payload) = open(&head, HEAD_KIND, "snapshot head") else { return Ok(None) };
    let mut r = Reader::new(payload, "snapshot head");
    Ok(match r.str() {
        Ok(layout) if layout == LAYOUT => r.u64().ok(),
        _ => None,
    })
}

/// A stored snapshot's head and the bytes of its parts, checked against the head (for the
/// fuzzer, which mutates them).
#[cfg(test)]
pub(crate) struct Stored {
    pub watermark: u64,
    pub parts: Vec<Part>,
    /// `blobs[i]` holds `parts[i]`.
    pub blobs: Vec<Vec<u8>>,
}

type Head = (u64, u64, Vec<Part>);

/// Reads `ns`'s snapshot: `None` when there is none, `Some(Err(reason))` when it is unusable.
/// Storage failures are errors. Each part is decoded as soon as it is read, so only one
/// part's bytes are held beside what is decoded.
pub(crate) fn read(
    store: &impl KvStore,
    ns: &Namespace,
    next_id: u64,
    dim: usize,
    config: VectorConfig,
) -> Result<Option<std::result::Result<Snapshot, String>>> {
    let Some(mut feed) = Feed::start(store, ns, next_id, dim, config)? else { return Ok(None) };
    probe(store, ns, feed.pending())?;
    loop {
        let Some(p) = feed.pending().next().cloned() else { break };
        let (blob, count) = chunks(store, ns, &p)?;
        feed.add(blob, count);
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
/// the parts in its own storage (`engine::lazy`). Only the part being added is held beside
/// what is decoded.
///
/// The vector segments come first, then the episodes parts (each kind in the head's order).
/// A segment's bytes are kept as its rows, while an episodes part's bytes are mostly let go
/// once decoded (only its records stay, as the arena): in this order the allocator can reuse
/// what a segment let go (its ids, scales and graph bytes) for the episodes' structures and
/// never has a segment's bytes to place above a decoded episodes part. At 100k episodes this
/// took about 10 MB off a JS host's peak wasm memory (`tools/bench/memory.mjs`).
pub(crate) struct Feed {
    watermark: u64,
    next_part: u64,
    parts: Vec<Part>,
    /// Indexes into `parts` in the order they are added.
    order: Vec<usize>,
    assembler: Assembler,
    /// Parts added so far.
    added: usize,
    /// Why the snapshot is unusable, once that is known.
    failed: Option<String>,
    /// The part being received chunk by chunk ([`Feed::receive`]): its bytes so far and
    /// chunks.
    receiving: Option<(Vec<u8>, u32)>,
}

impl Feed {
    /// Reads `ns`'s snapshot head: `None` when there is none. A head that is unreadable, of
    /// another layout or past `next_id` gives a feed that has already failed.
    pub fn start(
        store: &impl KvStore,
        ns: &Namespace,
        next_id: u64,
        dim: usize,
        config: VectorConfig,
    ) -> Result<Option<Feed>> {
        let (watermark, next_part, parts, failed) = match head(store, ns)? {
            None => return Ok(None),
            Some(Err(reason)) => (0, 0, Vec::new(), Some(reason)),
            Some(Ok((watermark, next_part, parts))) => {
                let past = watermark > next_id;
                let failed =
                    past.then(|| format!("watermark {watermark} is past the next id {next_id}"));
                (watermark, next_part, parts, failed)
            }
        };
        let assembler = Assembler::new(watermark, dim, config);
        let mut order: Vec<usize> = (0..parts.len()).collect();
        order.sort_by_key(|&i| parts[i].kind != SEGMENT);
        let receiving = None;
        Ok(Some(Feed {
            watermark,
            next_part,
            parts,
            order,
            assembler,
            added: 0,
            failed,
            receiving,
        }))
    }

    /// A feed that failed for `reason` (kept while a load that used it runs again).
    pub fn failed(reason: String) -> Feed {
        let assembler = Assembler::new(0, 0, VectorConfig::default());
        Feed {
            watermark: 0,
            next_part: 0,
            parts: Vec::new(),
            order: Vec::new(),
            assembler,
            added: 0,
            failed: Some(reason),
            receiving: None,
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

    /// Adds the next pending part from its `chunks` chunks' bytes, concatenated in key order;
    /// checks them against the head (count, length, hash) and decodes them.
    pub fn add(&mut self, blob: Vec<u8>, chunks: u32) {
        let Some(p) = self.pending().next().cloned() else {
            if self.failed.is_none() {
                self.failed =
                    Some(format!("more than the {} parts its head lists", self.parts.len()));
            }
            return;
        };
        if let Err(reason) = check(&p, &blob, chunks) {
            self.failed = Some(reason);
            return;
        }
        if let Err(e) = self.assembler.add(&p, blob) {
            self.failed = Some(e.to_string());
            return;
        }
        self.added += 1;
    }

    /// Room for the next chunk, `len` bytes, of the next pending part, for the caller to copy
    /// the chunk into: a host that reads a part's chunks a page at a time never holds the
    /// whole part. The first chunk reserves the length the head gives the part, so the part is
    /// one allocation (the one [`Feed::add`] decodes in place). `None` when nothing is pending,
    /// when the chunks run past that length, or when that much memory cannot be had: the
    /// snapshot is then unusable, and the chunk is to be skipped.
    pub fn receive(&mut self, len: usize) -> Option<&mut [u8]> {
        let p = self.pending().next()?;
        let (id, want) = (p.id, usize::try_from(p.len).unwrap_or(usize::MAX));
        let (buf, _) = self.receiving.get_or_insert_with(|| (Vec::new(), 0));
        let problem = if buf.capacity() == 0 && buf.try_reserve_exact(want).is_err() {
            Some(format!("part {id} of {want} bytes: not enough memory to read it"))
        } else if buf.len().saturating_add(len) > want {
            Some(format!("part {id}: its chunks hold more than its {want} bytes"))
        } else {
            None
        };
        if let Some(reason) = problem {
            self.failed = Some(reason);
            self.receiving = None;
            return None;
        }
        let (buf, count) = self.receiving.as_mut()?;
        let at = buf.len();
        buf.resize(at + len, 0);
        *count += 1;
        Some(&mut buf[at..])
    }

    /// Ends the part [`Feed::receive`] was given the chunks of: checks and decodes it as
    /// [`Feed::add`] does.
    pub fn received(&mut self) {
        let (blob, count) = self.receiving.take().unwrap_or_default();
        self.add(blob, count);
    }

    /// The decoded snapshot, or why it is unusable (a part missing counts).
    pub fn finish(self) -> std::result::Result<Snapshot, String> {
        if let Some(reason) = self.failed {
            return Err(reason);
        }
        if self.added < self.parts.len() {
            return Err(format!("{} of its {} parts were read", self.added, self.parts.len()));
        }
        let (episodes, bm25, vectors) = self.assembler.finish().map_err(|e| e.to_string())?;
        let Feed { watermark, next_part, parts, .. } = self;
        Ok(Snapshot { watermark, parts, next_part, episodes, bm25, vectors })
    }
}

/// The head and part bytes of `ns`'s snapshot, checked by length and hash (not decoded).
#[cfg(test)]
pub(crate) fn stored(
    store: &impl KvStore,
    ns: &Namespace,
) -> Result<Option<std::result::Result<Stored, String>>> {
    let (watermark, _, parts) = match head(store, ns)? {
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

/// The head of `ns`'s snapshot: (watermark, next part id, parts).
fn head(store: &impl KvStore, ns: &Namespace) -> Result<Option<std::result::Result<Head, String>>> {
    let Some(head) = store.get(&ns.key(Table::Snapshot, b"head"))? else { return Ok(None) };
    let parsed = (|| {
        let mut r = Reader::new(open(&head, HEAD_KIND, "snapshot head")?, "snapshot head");
        let layout = r.str()?.to_string();
        if layout != LAYOUT {
            return Ok(Err(format!("layout {layout:?}, this build reads {LAYOUT:?}")));
        }
        let (watermark, next_part, n) = (r.u64()?, r.u64()?, r.u32()? as usize);
        let mut parts = Vec::with_capacity(n.min(r.remaining() / 41));
        for _ in 0..n {
            let (id, kind, lo, hi) = (r.u64()?, r.u8()?, r.u64()?, r.u64()?);
            let (chunks, len, hash) = (r.u32()?, r.u64()?, r.u64()?);
            parts.push(Part { id, kind, lo, hi, chunks, len, hash });
        }
        r.end()?;
        Ok::<_, crate::error::Error>(Ok((watermark, next_part, parts)))
    })();
    Ok(Some(match parsed {
        Ok(h) => h,
        Err(e) => Err(format!("unreadable head: {e}")),
    }))
}

/// The bytes of part `p`'s chunks, concatenated, and how many chunks there were.
fn chunks(store: &impl KvStore, ns: &Namespace, p: &Part) -> Result<(Vec<u8>, u32)> {
    let mut blob = Vec::with_capacity(usize::try_from(p.len).unwrap_or(0).min(1 << 30));
    let mut count = 0u32;
    // A few chunks a page: the store's copies stay small next to the blob.
    scan_pages(store, &part_prefix(ns, p.id), None, CHUNKS_PER_PAGE, |_, v| {
        blob.extend_from_slice(v);
        count = count.saturating_add(1);
        Ok(())
    })?;
    Ok((blob, count))
}

/// Checks part `p`'s bytes (from `count` chunks) against its head entry: count, length, hash.
fn check(p: &Part, blob: &[u8], count: u32) -> std::result::Result<(), String> {
    if count != p.chunks || blob.len() as u64 != p.len || hash(blob) != p.hash {
        return Err(format!(
            "part {}: {count} chunks of {} bytes where the head says {} of {}, or the hash \
             differs",
            p.id,
            blob.len(),
            p.chunks,
            p.len
        ));
    }
    Ok(())
}

/// Decodes the parts of a snapshot (`blobs[i]` holds `parts[i]`).
#[cfg(test)]
pub(crate) fn decode(
    parts: &[Part],
    blobs: &[Vec<u8>],
    watermark: u64,
    dim: usize,
    config: VectorConfig,
) -> Result<(Episodes, Bm25, VectorIndex)> {
    let mut assembler = Assembler::new(watermark, dim, config);
    for (p, blob) in parts.iter().zip(blobs) {
        assembler.add(p, blob.clone())?;
    }
    assembler.finish()
}

/// A namespace's snapshot decoded part by part, in the head's order.
struct Assembler {
    watermark: u64,
    bm25: Option<Bm25>,
    /// Delta rows of the episodes parts, added once every segment is.
    rows: Vec<Vec<u8>>,
    vectors: VectorIndex,
    hots: Vec<Hot>,
    spans: Vec<(u32, u32)>,
    arena: Vec<u8>,
    /// Episodes parts cover the ids below this.
    covered: u64,
}

impl Assembler {
    fn new(watermark: u64, dim: usize, config: VectorConfig) -> Self {
        Self {
            watermark,
            bm25: None,
            rows: Vec::new(),
            vectors: VectorIndex::new(dim, config),
            hots: Vec::new(),
            spans: Vec::new(),
            arena: Vec::new(),
            covered: 0,
        }
    }

    /// Decodes part `p` from its bytes, whose allocation becomes the episodes' arena (the
    /// first episodes part) or the segment's rows, so little is held beside what is decoded.
    fn add(&mut self, p: &Part, blob: Vec<u8>) -> Result<()> {
        let mut r = Reader::new(&blob, "snapshot part");
        match p.kind {
            EPISODES => {
                if p.lo != self.covered || p.hi < p.lo || p.hi > self.watermark {
                    return Err(r.corrupt(format!(
                        "episodes part [{}, {}) after ids below {}, watermark {}",
                        p.lo, p.hi, self.covered, self.watermark
                    )));
                }
                self.covered = p.hi;
                let part_bm25 = Bm25::decode(&mut Reader::new(r.bytes()?, "snapshot BM25"))?;
                match self.bm25.as_mut() {
                    None => self.bm25 = Some(part_bm25),
                    Some(b) => b.absorb(part_bm25)?,
                }
                self.rows.push(r.bytes()?.to_vec());
                let (hots, spans) = (&mut self.hots, &mut self.spans);
                let at = read_episodes(&mut r, blob.len(), (p.lo, p.hi), hots, spans, &self.arena)?;
                r.end()?;
                if self.arena.is_empty() {
                    self.arena = keep_range(blob, at);
                } else {
                    self.arena.extend_from_slice(&blob[at]);
                }
                Ok(())
            }
            SEGMENT => self.vectors.add_segment(p.lo, blob),
            kind => Err(r.corrupt(format!("part {} of unknown kind {kind}", p.id))),
        }
    }

    fn finish(mut self) -> Result<(Episodes, Bm25, VectorIndex)> {
        if self.covered != self.watermark {
            return Err(crate::error::Error::Corrupt {
                what: "snapshot".into(),
                detail: format!(
                    "its parts cover ids below {}, its watermark is {}",
                    self.covered, self.watermark
                ),
            });
        }
        for rows in &self.rows {
            self.vectors.add_rows(Reader::new(rows, "snapshot vector rows"))?;
        }
        let episodes = Episodes::from_arena(self.hots, self.spans, self.arena);
        Ok((episodes, self.bm25.unwrap_or_default(), self.vectors))
    }
}

/// Reads the episodes of one part (ids in `range`) from `r`, over a part of `len` bytes; their
/// spans are where their records will sit once appended to `arena`, and the records' place
/// in the part is returned.
fn read_episodes(
    r: &mut Reader,
    len: usize,
    range: (u64, u64),
    hots: &mut Vec<Hot>,
    spans: &mut Vec<(u32, u32)>,
    arena: &[u8],
) -> Result<std::ops::Range<usize>> {
    let n = r.u32()? as usize;
    let base = u32::try_from(arena.len()).map_err(|_| r.corrupt("records past 4 GiB".into()))?;
    let mut end = base;
    let first = hots.len();
    hots.reserve(n.min(r.remaining() / 47));
    for _ in 0..n {
        let hot = Hot {
            id: r.u64()?,
            created_at: r.i64()?,
            last_accessed_at: r.i64()?,
            access_count: r.u32()?,
            importance: r.f32()?,
            tier: r.u8()?,
            status: status_from(r.u8()?)?,
            expires_at: r.i64()?,
            cold: r.u8()? != 0,
        };
        if !(range.0..range.1).contains(&hot.id) {
            return Err(r.corrupt(format!(
                "episode {} outside its part's ids [{}, {})",
                hot.id, range.0, range.1
            )));
        }
        let start = end;
        end = end.checked_add(r.u32()?).ok_or_else(|| r.corrupt("records overflow".into()))?;
        hots.push(hot);
        spans.push((start, end));
    }
    let at = r.offset_in(len) + 4;
    let records = r.bytes()?;
    if records.len() as u64 != u64::from(end - base) {
        hots.truncate(first);
        spans.truncate(first);
        return Err(r.corrupt(format!(
            "{} bytes of records, {} listed",
            records.len(),
            end - base
        )));
    }
    Ok(at..at + records.len())
}

#[cfg(test)]
mod tests {
    use super::hash;

    #[test]
    fn every_flipped_bit_changes_the_hash() {
        let data: Vec<u8> = (0..203u32).map(|i| (i * 31 % 251) as u8).collect();
        let h = hash(&data);
        for byte in 0..data.len() {
            for bit in 0..8 {
                let mut d = data.clone();
                d[byte] ^= 1 << bit;
                assert_ne!(hash(&d), h, "byte {byte} bit {bit}");
            }
        }
        assert_ne!(hash(&data[..202]), h, "length counts");
    }
}
