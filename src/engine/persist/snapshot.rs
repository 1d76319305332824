//! Snapshots: a namespace's episodes and derived indexes in one blob, so a cold open copies
//! bytes instead of tokenising text, quantising vectors and building HNSW graphs.
//!
//! Keys under [`Table::Snapshot`]:
//!
//! ```text
//! head          kind 7: layout:str watermark:u64 chunks:u32 len:u64 hash:u64
//! c/<i:u32 BE>  chunk i of the blob, raw bytes (at most Config::snapshot_chunk each)
//! d/<id:u64 BE> empty: episode `id` (below the watermark) changed after the snapshot
//!
//! blob     := bm25 vectors episodes
//! episodes := n:u32 hot×n records:bytes
//! hot      := id:u64 created_at:i64 last_accessed_at:i64 access_count:u32 importance:f32
//!             tier:u8 status:u8 expires_at:i64 cold:u8 record_len:u32
//! ```
//!
//! `records` holds each episode's own sealed record (checksummed as in the store), in the
//! order of the `hot` entries: a cold open keeps them as one arena and decodes an episode only
//! when it is needed whole (`engine::episodes`). `bm25` and `vectors` are the byte forms of
//! [`crate::index::persist`]. `hash` is [`hash`] over the
//! whole blob. `layout` names this format and the graph encoding it relies on.
//!
//! A snapshot covers the episodes with ids below `watermark` (the namespace's next id when it
//! was written). Opening reads it, then re-reads from their records the episodes marked dirty
//! (status changes, access updates) and every episode at or above the watermark. A snapshot is
//! a cache, never the source of truth: one whose layout, hash or contents do not check out is
//! ignored, the namespace is rebuilt from its records, and [`Opened::Rebuilt`] says why.
//! Writing one is one atomic batch: head, chunks, removal of surplus old chunks and of the
//! dirty markers it absorbs.

use crate::engine::episodes::{Episodes, Hot};
use crate::error::Result;
use crate::index::bm25::Bm25;
use crate::index::vectors::{VectorConfig, VectorIndex};
use crate::index::FastSet;
use crate::record::episode::{status_code, status_from};
use crate::store::codec::{open, seal, Reader, Writer};
use crate::store::scan::{scan_all, scan_pages};
use crate::store::{Batch, KvStore, Namespace, Table};

const HEAD_KIND: u8 = 7;
const CHUNKS_PER_PAGE: usize = 16;
/// This format, the lexical analysis its BM25 postings were made with (`terms/2`: words,
/// whole tokens and Snowball stems, `index::terms::index_terms`; `windows/1`: a text of more
/// than 128 words indexed as its windows, `engine::space::Space::bm25_insert`), and the graph
/// encoding it embeds (see `index::persist`). A snapshot of another layout is ignored and
/// rebuilt.
pub(crate) const LAYOUT: &str =
    "mnemo-snapshot/2 terms/2 windows/1 instant-distance/0.6 postcard/1";

/// Where the namespace's snapshot stands.
#[derive(Default)]
pub(crate) struct SnapState {
    /// First id the stored snapshot does not cover (0: no snapshot).
    pub watermark: u64,
    /// Chunks the stored snapshot has.
    pub chunks: u32,
    /// Episodes below the watermark changed since (each has a marker in the store).
    pub dirty: FastSet,
}

impl SnapState {
    /// Whether a change to episode `id` needs a dirty marker in its batch.
    pub fn marks_dirty(&self, id: u64) -> bool {
        id < self.watermark && !self.dirty.contains(&id)
    }

    /// After the write that carried its marker: episode `id` differs from the snapshot.
    pub fn mark_dirty(&mut self, id: u64) {
        if id < self.watermark {
            self.dirty.insert(id);
        }
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
    pub chunks: u32,
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

fn chunk_key(ns: &Namespace, i: u32) -> Vec<u8> {
    let mut k = ns.key(Table::Snapshot, b"c/");
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
}

/// The batch that replaces `ns`'s snapshot (described by `snap`) with one of `parts`; returns
/// it with the new chunk count and blob size.
pub(crate) fn batch(
    parts: Parts,
    snap: &SnapState,
    ns: &Namespace,
    chunk_size: usize,
) -> Result<(Batch, u32, usize)> {
    let mut w = Writer::new();
    parts.bm25.encode(&mut w);
    parts.vectors.encode(&mut w)?;
    let mut hots: Vec<Hot> = parts.episodes.hots().to_vec();
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
    let blob = w.finish();
    let mut batch = Batch::new();
    let chunk_size = chunk_size.max(1);
    let mut chunks = 0u32;
    for part in blob.chunks(chunk_size) {
        batch.put(chunk_key(ns, chunks), part.to_vec());
        chunks += 1;
    }
    for i in chunks..snap.chunks {
        batch.delete(chunk_key(ns, i));
    }
    for &id in &snap.dirty {
        batch.delete(dirty_key(ns, id));
    }
    let mut head = Writer::new();
    head.str(LAYOUT).u64(parts.next_id).u32(chunks).u64(blob.len() as u64).u64(hash(&blob));
    batch.put(ns.key(Table::Snapshot, b"head"), seal(HEAD_KIND, &head.finish()));
    Ok((batch, chunks, blob.len()))
}

/// Reads `ns`'s snapshot: `None` when there is none, `Some(Err(reason))` when it is unusable.
/// Storage failures are errors.
pub(crate) fn read(
    store: &impl KvStore,
    ns: &Namespace,
    next_id: u64,
    dim: usize,
    config: VectorConfig,
) -> Result<Option<std::result::Result<Snapshot, String>>> {
    let Some(head) = store.get(&ns.key(Table::Snapshot, b"head"))? else { return Ok(None) };
    let parsed = (|| {
        let mut r = Reader::new(open(&head, HEAD_KIND, "snapshot head")?, "snapshot head");
        let out = (r.str()?.to_string(), r.u64()?, r.u32()?, r.u64()?, r.u64()?);
        r.end()?;
        Ok::<_, crate::error::Error>(out)
    })();
    let (layout, watermark, chunks, len, sum) = match parsed {
        Ok(h) => h,
        Err(e) => return Ok(Some(Err(format!("unreadable head: {e}")))),
    };
    if layout != LAYOUT {
        return Ok(Some(Err(format!("layout {layout:?}, this build reads {LAYOUT:?}"))));
    }
    if watermark > next_id {
        return Ok(Some(Err(format!("watermark {watermark} is past the next id {next_id}"))));
    }
    let mut blob = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(1 << 30));
    let mut count = 0u32;
    // A few chunks a page: the store's copies stay small next to the blob.
    let prefix = ns.key(Table::Snapshot, b"c/");
    scan_pages(store, &prefix, None, CHUNKS_PER_PAGE, |_, v| {
        blob.extend_from_slice(v);
        count += 1;
        Ok(())
    })?;
    if count != chunks || blob.len() as u64 != len || hash(&blob) != sum {
        return Ok(Some(Err(format!(
            "{count} chunks of {} bytes where the head says {chunks} of {len}, or the hash differs",
            blob.len()
        ))));
    }
    Ok(Some(decode(&blob, watermark, chunks, dim, config).map_err(|e| e.to_string())))
}

pub(crate) fn decode(
    blob: &[u8],
    watermark: u64,
    chunks: u32,
    dim: usize,
    config: VectorConfig,
) -> Result<Snapshot> {
    let mut r = Reader::new(blob, "snapshot");
    let bm25 = Bm25::decode(&mut r)?;
    let vectors = VectorIndex::decode(&mut r, dim, config)?;
    let n = r.u32()? as usize;
    let mut hots = Vec::with_capacity(n.min(r.remaining() / 47));
    let mut spans = Vec::with_capacity(n.min(r.remaining() / 47));
    let mut end = 0u32;
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
        if hot.id >= watermark {
            return Err(
                r.corrupt(format!("episode {} at or past the watermark {watermark}", hot.id))
            );
        }
        let start = end;
        end = end.checked_add(r.u32()?).ok_or_else(|| r.corrupt("records overflow".into()))?;
        hots.push(hot);
        spans.push((start, end));
    }
    let records = r.bytes()?;
    if records.len() != end as usize {
        return Err(r.corrupt(format!("{} bytes of records, {end} listed", records.len())));
    }
    r.end()?;
    let episodes = Episodes::from_arena(hots, spans, records.to_vec());
    Ok(Snapshot { watermark, chunks, episodes, bm25, vectors })
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
