//! One loaded namespace: its episodes and the indexes derived from them.
//!
//! Meta record (`Table::Meta`, id `space`, kind 6): `next_id:u64 model_id:str`.

use std::collections::BTreeSet;

use super::episodes::{Episodes, Hot};
use super::snapshot::{self, Opened, Snapshot};
use super::Config;
use crate::error::{Error, Result};
use crate::index::bm25::Bm25;
use crate::index::vectors::VectorIndex;
use crate::record::episode::decode_vector;
use crate::record::Episode;
use crate::store::codec::{open, seal, Reader, Writer};
use crate::store::{KvStore, Namespace, Table};

const META_KIND: u8 = 6;
const PAGE: usize = 1024;

pub(crate) fn encode_meta(next_id: u64, model: &str) -> Vec<u8> {
    let mut w = Writer::new();
    w.u64(next_id).str(model);
    seal(META_KIND, &w.finish())
}

fn decode_meta(bytes: &[u8]) -> Result<(u64, String)> {
    let mut r = Reader::new(open(bytes, META_KIND, "namespace meta")?, "namespace meta");
    let out = (r.u64()?, r.str()?.to_string());
    r.end()?;
    Ok(out)
}

pub(crate) fn read_vector(
    store: &impl KvStore,
    ns: &Namespace,
    id: u64,
) -> Result<Option<Vec<f32>>> {
    match store.get(&ns.key(Table::Vector, &id.to_be_bytes()))? {
        Some(b) => Ok(Some(decode_vector(&b)?.1)),
        None => Ok(None),
    }
}

/// Calls `f` on every (key, value) under `prefix` (after key `after`, when given), page by page.
pub(crate) fn scan_all(
    store: &impl KvStore,
    prefix: &[u8],
    after: Option<Vec<u8>>,
    f: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    scan_pages(store, prefix, after, PAGE, f)
}

/// [`scan_all`] with pages of `page` entries (small pages for large values).
pub(crate) fn scan_pages(
    store: &impl KvStore,
    prefix: &[u8],
    mut after: Option<Vec<u8>>,
    page: usize,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    loop {
        let entries = store.scan(prefix, after.as_deref(), page)?;
        for (k, v) in &entries {
            f(k, v)?;
        }
        match entries.last() {
            Some((k, _)) if entries.len() == page => after = Some(k.clone()),
            _ => return Ok(()),
        }
    }
}

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

pub(crate) type FastSet = std::collections::HashSet<u64, foldhash::fast::FixedState>;

pub(crate) struct Space {
    pub exists: bool,
    pub next_id: u64,
    pub model: String,
    pub episodes: Episodes,
    pub by_time: BTreeSet<(i64, u64)>,
    pub bm25: Bm25,
    pub vectors: VectorIndex,
    pub snap: SnapState,
    pub opened: Opened,
    /// Score factors outcome tracking set for harmful episodes (`engine::outcomes`).
    pub outcome_weights: crate::index::FastMap<u64, f32>,
    /// Ids of the active rules, once read (`None` after a rule was written).
    pub active_rules: Option<Vec<u64>>,
}

impl Space {
    pub fn load(store: &impl KvStore, ns: &Namespace, config: &Config) -> Result<Self> {
        let mut space = Space {
            exists: false,
            next_id: 1,
            model: String::new(),
            episodes: Episodes::default(),
            by_time: BTreeSet::new(),
            bm25: Bm25::default(),
            vectors: VectorIndex::new(config.dim, config.vectors),
            snap: SnapState::default(),
            opened: Opened::Rebuilt { reason: None },
            outcome_weights: Default::default(),
            active_rules: None,
        };
        if let Some(w) = store.get(&ns.key(Table::Meta, b"outcome-weights"))? {
            space.outcome_weights =
                crate::record::outcome::decode_weights(&w)?.into_iter().collect();
        }
        if let Some(meta) = store.get(&ns.key(Table::Meta, b"space"))? {
            let (next_id, model) = decode_meta(&meta)?;
            space.exists = true;
            space.next_id = next_id;
            space.model = model;
        }
        let dirty = snapshot::dirty_ids(store, ns)?;
        match snapshot::read(store, ns, space.next_id, config.dim, config.vectors)? {
            None => {}
            Some(Err(reason)) => space.opened = Opened::Rebuilt { reason: Some(reason) },
            Some(Ok(snap)) => {
                space.restore(snap);
                let refreshed = space.refresh(store, ns, &dirty)?;
                space.opened =
                    Opened::Snapshot { watermark: space.snap.watermark, replayed: 0, refreshed };
            }
        }
        // The markers stay until the next snapshot absorbs them (or are orphans to clean up).
        space.snap.dirty = dirty.into_iter().collect();
        let replayed = space.replay(store, ns, space.snap.watermark)?;
        if let Opened::Snapshot { replayed: r, .. } = &mut space.opened {
            *r = replayed;
        }
        Ok(space)
    }

    fn restore(&mut self, snap: Snapshot) {
        self.snap.watermark = snap.watermark;
        self.snap.chunks = snap.chunks;
        self.bm25 = snap.bm25;
        self.vectors = snap.vectors;
        self.episodes = snap.episodes;
        self.by_time = self.episodes.hots().iter().map(|h| (h.created_at, h.id)).collect();
        // Sealed rows removed after their segment was built come back as live rows: drop them.
        let dead: Vec<u64> = self
            .vectors
            .ids()
            .filter(|&id| !self.episodes.hot(id).is_some_and(Hot::is_live))
            .collect();
        for id in dead {
            self.vectors.remove(id);
        }
    }

    /// Re-reads episodes changed after the snapshot; returns how many.
    fn refresh(&mut self, store: &impl KvStore, ns: &Namespace, dirty: &[u64]) -> Result<usize> {
        let mut count = 0;
        let watermark = self.snap.watermark;
        for &id in dirty.iter().filter(|&&id| id < watermark) {
            let Some(bytes) = store.get(&ns.key(Table::Episode, &id.to_be_bytes()))? else {
                continue;
            };
            let e = Episode::decode(&bytes)?;
            count += 1;
            let same = self.episodes.get(id)?.is_some_and(|old| {
                old.is_live() == e.is_live() && old.search_text() == e.search_text()
            });
            if same {
                self.episodes.insert(e);
                continue;
            }
            self.unindex(id);
            match read_vector(store, ns, id)? {
                Some(v) if e.is_live() => self.index(e, &v),
                _ => {
                    self.by_time.insert((e.created_at, id));
                    self.episodes.insert(e);
                }
            }
        }
        Ok(count)
    }

    /// Indexes the episodes with ids at or above `from` from their records (all of them when
    /// `from` is 0); returns how many.
    fn replay(&mut self, store: &impl KvStore, ns: &Namespace, from: u64) -> Result<usize> {
        let after = |table| (from > 0).then(|| ns.key(table, &(from - 1).to_be_bytes()));
        // Episodes first (text into BM25), then each live one's vector straight into the
        // index: no intermediate copy of the f32 vectors.
        let mut count = 0;
        let eprefix = ns.table_prefix(Table::Episode);
        scan_all(store, &eprefix, after(Table::Episode), |_, v| {
            let e = Episode::decode(v)?;
            if e.is_live() {
                self.bm25.insert(e.id, &e.search_text());
            }
            self.by_time.insert((e.created_at, e.id));
            self.episodes.insert(e);
            count += 1;
            Ok(())
        })?;
        let vprefix = ns.table_prefix(Table::Vector);
        scan_all(store, &vprefix, after(Table::Vector), |k, v| {
            let (model, vector) = decode_vector(v)?;
            if model != self.model {
                return Err(Error::ModelMismatch { expected: self.model.clone(), found: model });
            }
            let id = id_of(k, vprefix.len())?;
            if self.episodes.hot(id).is_some_and(Hot::is_live) {
                self.vectors.insert(id, &vector);
            }
            Ok(())
        })?;
        Ok(count)
    }

    /// Changes made since the stored snapshot (new episodes and dirty ones).
    pub fn pending(&self) -> u64 {
        self.next_id.saturating_sub(self.snap.watermark.max(1)) + self.snap.dirty.len() as u64
    }

    /// Records that episode `id` changed: true when a dirty marker must go with the write.
    pub fn marks_dirty(&self, id: u64) -> bool {
        id < self.snap.watermark && !self.snap.dirty.contains(&id)
    }

    /// After the write that carried its marker: episode `id` differs from the snapshot.
    pub fn mark_dirty(&mut self, id: u64) {
        if id < self.snap.watermark {
            self.snap.dirty.insert(id);
        }
    }

    /// Fails when vectors of `model` would join vectors of another model.
    pub fn check_model(&self, model: &str) -> Result<()> {
        if !self.model.is_empty() && self.model != model {
            return Err(Error::ModelMismatch { expected: model.into(), found: self.model.clone() });
        }
        Ok(())
    }

    pub fn index(&mut self, e: Episode, v: &[f32]) {
        if e.is_live() {
            self.bm25.insert(e.id, &e.search_text());
            self.vectors.insert(e.id, v);
        }
        self.by_time.insert((e.created_at, e.id));
        self.episodes.insert(e);
    }

    pub fn unindex(&mut self, id: u64) {
        if let Some(h) = self.episodes.remove(id) {
            self.by_time.remove(&(h.created_at, id));
        }
        self.bm25.remove(id);
        self.vectors.remove(id);
    }

    pub fn memory(&self) -> usize {
        self.episodes.memory()
            + self.bm25.memory()
            + self.by_time.len() * 24
            + self.vectors.memory()
    }
}

fn id_of(key: &[u8], prefix: usize) -> Result<u64> {
    let b: [u8; 8] = key.get(prefix..).and_then(|s| s.try_into().ok()).ok_or_else(|| {
        Error::Corrupt { what: "vector key".into(), detail: format!("{} bytes", key.len()) }
    })?;
    Ok(u64::from_be_bytes(b))
}
