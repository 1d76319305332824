//! One loaded namespace: its episodes and the indexes derived from them, opened from what
//! `engine::persist` keeps (snapshot, meta, access statistics) and the records.

use std::collections::BTreeSet;

use super::episodes::{Episodes, Hot};
pub(crate) use super::index_keys::{episode_of, passage_key, MAX_ID};
use super::index_keys::{ID_BITS, ID_MASK};
use super::persist::meta::decode_meta;
use super::persist::snapshot::{self, Opened, Reading, SnapState, Snapshot};
use super::persist::usage::{self, Usage};
use super::Config;
use crate::embed::passages::{TextVectors, MAX_PASSAGES};
use crate::error::{Error, Result};
use crate::index::bm25::Bm25;
use crate::index::vectors::VectorIndex;
use crate::record::episode::decode_vectors;
use crate::record::Episode;
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};

/// Words of a BM25 window: a text with more is indexed as windows of this many words.
pub(crate) const BM25_WINDOW: usize = 128;
/// Most windows one text is indexed as in BM25 (past them, its words are not searched).
const MAX_BM25_WINDOWS: usize = 4096;

/// The BM25 windows of a text: [`crate::embed::passages::windows`] of [`BM25_WINDOW`] words
/// overlapping by 16, at most [`MAX_BM25_WINDOWS`].
pub(crate) fn bm25_windows(text: &str) -> Vec<(usize, usize)> {
    let mut w = crate::embed::passages::windows(text, BM25_WINDOW, BM25_WINDOW / 8);
    w.truncate(MAX_BM25_WINDOWS);
    w
}

/// The BM25 documents of episode `e`, as (key, text): its [`Episode::search_text`] under its
/// id, or for a text of more than [`BM25_WINDOW`] words each window of the text under its
/// [`passage_key`], each with the episode's verdict, situation and entities after it (what
/// `search_text` appends belongs to every part of the text).
pub(crate) fn bm25_documents(e: &Episode) -> Vec<(u64, String)> {
    // The common case, a short text, without computing its word spans.
    if e.text.split_whitespace().nth(BM25_WINDOW).is_none() {
        return vec![(e.id, e.search_text())];
    }
    let windows = bm25_windows(&e.text);
    if windows.len() <= 1 {
        return vec![(e.id, e.search_text())];
    }
    let full = e.search_text();
    let meta = &full[e.text.len()..];
    windows
        .into_iter()
        .enumerate()
        .map(|(p, (a, b))| (passage_key(e.id, p), format!("{}{meta}", &e.text[a..b])))
        .collect()
}

/// A stored record that could not be read when its namespace was opened. It stays in the store,
/// untouched, for repair; the rest of the namespace opens without it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Quarantined {
    /// Its key in the store (`u/<namespace>/<table>/<id>`), lossily as text.
    pub key: String,
    /// The episode it belongs to (0 when unknown: a damaged record of the store's own files,
    /// whose key `store` names no namespace).
    pub episode: u64,
    /// What is wrong with it, and what it costs: an unreadable episode is missing from
    /// recall; an unreadable or foreign vector leaves its episode to BM25 until `reembed`.
    pub reason: String,
}

pub(crate) struct LoadedNamespace {
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
    /// Records that could not be read on open.
    pub quarantined: Vec<Quarantined>,
    /// Lessons stored per situation key since the last consolidation pass (in memory only;
    /// `engine::consolidation`).
    pub recurrence: std::collections::HashMap<String, u32>,
    /// Bumped whenever an episode enters or leaves the indexes.
    pub generation: u64,
    /// The rest of a compaction plan a budgeted nightly call left (`engine::compaction`).
    pub compaction_plan: Option<super::compaction::plan::PlanCache>,
    /// Access statistics not yet in the stored records (`engine::persist::usage`).
    pub usage: Usage,
}

impl LoadedNamespace {
    /// Loads namespace `ns` from `store`. `fed` is its snapshot when the host handed it over
    /// part by part (`engine::lazy`); otherwise the snapshot is read from the store.
    pub fn load(
        store: &impl KvStore,
        ns: &Namespace,
        config: &Config,
        fed: Option<snapshot::Feed>,
    ) -> Result<Self> {
        let mut space = LoadedNamespace {
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
            quarantined: Vec::new(),
            recurrence: Default::default(),
            generation: 0,
            compaction_plan: None,
            usage: Default::default(),
        };
        // No rows stored yet: merges keep every row until a snapshot stores it.
        space.vectors.rows_stored_below(0);
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
        let markers = snapshot::markers(store, ns)?;
        // A damaged marker sets aside a snapshot of episodes, not a head that lists a build's
        // progress alone (no marker can concern it; its first snapshot deletes them).
        let watermark = snapshot::watermark(store, ns)?.unwrap_or(0);
        let unusable = markers.unusable.filter(|_| watermark > 0);
        let (dirty, accessed, damaged) = (markers.dirty, markers.accessed, markers.damaged);
        let snap = match (unusable, fed) {
            (Some(reason), _) => Some(Err(reason)),
            (None, Some(feed)) => Some(feed.finish()),
            (None, None) => {
                let (next_id, model, dim) = (space.next_id, &space.model, config.dim);
                let reading = Reading { next_id, model, dim, config: config.vectors };
                snapshot::read(store, ns, &reading)?
            }
        };
        match snap {
            None => {}
            Some(Err(reason)) => space.opened = Opened::Rebuilt { reason: Some(reason) },
            Some(Ok(snap)) => {
                space.restore(snap);
                // The access entries first: a dirty episode is then read again whole.
                for &(id, at, count) in &accessed {
                    if id < space.snap.watermark {
                        space.episodes.set_access(id, at, count);
                    }
                }
                let refreshed = space.refresh(store, ns, &dirty)?;
                space.opened =
                    Opened::Snapshot { watermark: space.snap.watermark, replayed: 0, refreshed };
            }
        }
        // The markers stay until the next snapshot absorbs them (or are orphans to clean up).
        space.snap.dirty = dirty.into_iter().collect();
        space.snap.accessed = accessed.into_iter().map(|a| a.0).chain(damaged).collect();
        let replayed = space.replay(store, ns, space.snap.watermark)?;
        if let Opened::Snapshot { replayed: r, .. } = &mut space.opened {
            *r = replayed;
        }
        // A seal's stored progress takes its rows from the delta, whole only now.
        space.vectors.resume_seal();
        usage::replay(store, ns, &mut space.usage, &mut space.episodes)?;
        Ok(space)
    }

    fn restore(&mut self, snap: Snapshot) {
        self.snap.watermark = snap.watermark;
        self.snap.parts = snap.parts;
        self.snap.pending = snap.pending;
        self.snap.next_part = snap.next_part;
        self.snap.unsealed = snap.unsealed;
        self.bm25 = snap.bm25;
        self.vectors = snap.vectors;
        self.vectors.rows_stored_below(self.snap.rows_stored());
        self.episodes = snap.episodes;
        self.by_time = self.episodes.hots().iter().map(|h| (h.created_at, h.id)).collect();
        // Sealed rows removed after their segment was built come back as live rows: drop them.
        let dead: Vec<u64> = self
            .vectors
            .ids()
            .filter(|&key| !self.episodes.hot(episode_of(key)).is_some_and(Hot::is_live))
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
            let key = ns.key(Table::Episode, &id.to_be_bytes());
            let Some(bytes) = store.get(&key)? else {
                continue;
            };
            let e = match Episode::decode(&bytes) {
                Ok(e) => e,
                Err(err) => {
                    // The snapshot's copy is older than the record: drop it too.
                    self.unindex(id);
                    self.quarantine(&key, id, format!("episode unreadable: {err}"));
                    continue;
                }
            };
            count += 1;
            let same = self.episodes.get(id)?.is_some_and(|old| {
                old.is_live() == e.is_live() && old.search_text() == e.search_text()
            });
            if same {
                self.episodes.insert(e);
                continue;
            }
            self.unindex(id);
            match self.vectors_of(store, ns, id)? {
                Some(v) if e.is_live() => self.index_vectors(e, &v),
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
        scan_all(store, &eprefix, after(Table::Episode), |k, v| {
            let e = match Episode::decode(v) {
                Ok(e) if e.id >= MAX_ID => {
                    let why =
                        format!("episode id {} is past the {ID_BITS}-bit ids indexes key", e.id);
                    self.quarantine(k, e.id, why);
                    return Ok(());
                }
                Ok(e) => e,
                Err(err) => {
                    let id = id_of(k, eprefix.len()).unwrap_or(0);
                    self.quarantine(k, id, format!("episode unreadable: {err}"));
                    return Ok(());
                }
            };
            if e.is_live() {
                self.bm25_insert(&e);
            }
            self.by_time.insert((e.created_at, e.id));
            self.episodes.insert(e);
            count += 1;
            Ok(())
        })?;
        let vprefix = ns.table_prefix(Table::Vector);
        scan_all(store, &vprefix, after(Table::Vector), |k, v| {
            let id = id_of(k, vprefix.len())?;
            if let Some(vectors) = self.checked_vector(k, id, v) {
                if self.episodes.hot(id).is_some_and(Hot::is_live) {
                    self.insert_vectors(id, &vectors);
                }
            }
            Ok(())
        })?;
        Ok(count)
    }

    /// Sets `key` aside as unreadable (it stays in the store for repair).
    fn quarantine(&mut self, key: &[u8], episode: u64, reason: String) {
        let key = String::from_utf8_lossy(key).into_owned();
        self.quarantined.push(Quarantined { key, episode, reason });
    }

    /// The vector record `bytes` under `key`, when it is readable, of the namespace's model and
    /// of the index's dimension; otherwise it is quarantined and its episode left to BM25.
    fn checked_vector(&mut self, key: &[u8], id: u64, bytes: &[u8]) -> Option<TextVectors> {
        let reason = match decode_vectors(bytes) {
            Err(err) => format!("vector unreadable: {err}"),
            Ok((model, _)) if model != self.model => format!(
                "vector of model `{model}` in a namespace of model `{}`: run reembed",
                self.model
            ),
            Ok((_, v)) if v.whole.len() != self.vectors.dim() => format!(
                "vector of {} dimensions in an index of {}: run reembed",
                v.whole.len(),
                self.vectors.dim()
            ),
            Ok((_, v)) => return Some(v),
        };
        self.quarantine(key, id, reason);
        None
    }

    /// Episode `id`'s vector, checked as on open (`None` when absent or quarantined); for a
    /// long text, the normalised mean of its passages'.
    pub fn vector(
        &mut self,
        store: &impl KvStore,
        ns: &Namespace,
        id: u64,
    ) -> Result<Option<Vec<f32>>> {
        Ok(self.vectors_of(store, ns, id)?.map(|v| v.whole))
    }

    /// Episode `id`'s vector and passages, checked as on open.
    pub fn vectors_of(
        &mut self,
        store: &impl KvStore,
        ns: &Namespace,
        id: u64,
    ) -> Result<Option<TextVectors>> {
        let key = ns.key(Table::Vector, &id.to_be_bytes());
        Ok(match store.get(&key)? {
            Some(b) => self.checked_vector(&key, id, &b),
            None => None,
        })
    }

    /// Indexes episode `e` in BM25: whole when its text has at most [`BM25_WINDOW`] words,
    /// otherwise as its word windows ([`bm25_documents`]) under [`passage_key`]s, so that a
    /// sentence in a long text is scored among the 128 words around it, not diluted by the
    /// length of the whole (BM25 of the best window: LoCoMo-style turns are one window, a
    /// 2,000-word message is ~18).
    pub fn bm25_insert(&mut self, e: &Episode) {
        for (key, text) in bm25_documents(e) {
            self.bm25.insert(key, &text);
        }
    }

    /// Takes episode `id` out of BM25: by the terms of `text` when it is the indexed text (a few
    /// posting lists visited), by scanning every posting list otherwise.
    fn bm25_remove(&mut self, id: u64, indexed: Option<&Episode>) {
        let mut removed = 0;
        match indexed {
            Some(e) => {
                for (key, text) in bm25_documents(e) {
                    self.bm25.remove_text(key, &text);
                    removed += usize::from(key != id);
                }
            }
            None => self.bm25.remove(id),
        }
        // Windows past those of `indexed` (or all, without it): their keys run on from there.
        for p in removed..MAX_BM25_WINDOWS {
            let key = passage_key(id, p);
            if !self.bm25.has(key) {
                break;
            }
            self.bm25.remove(key);
        }
    }

    /// The BM25 key episode `id` scores best under for `qterms`: its own id, or its best
    /// window's (`None` when it is not in BM25), with that score.
    pub fn bm25_best(&self, qterms: &[String], id: u64) -> Option<(u64, f32)> {
        self.bm25_best_lists(&self.bm25.lists(qterms), id, &mut vec![false; qterms.len()])
    }

    /// [`LoadedNamespace::bm25_best`] over the query's posting lists ([`Bm25::lists`]); `held[i]` is set
    /// to whether the best key holds query term `i` (all false when `None`).
    pub fn bm25_best_lists<L: crate::index::bm25::TermDocs>(
        &self,
        lists: &[Option<&L>],
        id: u64,
        held: &mut [bool],
    ) -> Option<(u64, f32)> {
        if self.bm25.has(id) {
            return Some((id, self.bm25.score_lists(lists, id, held)));
        }
        held.fill(false);
        let mut window = vec![false; held.len()];
        let mut best: Option<(u64, f32)> = None;
        for p in 0..MAX_BM25_WINDOWS {
            let key = passage_key(id, p);
            if !self.bm25.has(key) {
                break;
            }
            let score = self.bm25.score_lists(lists, key, &mut window);
            if best.is_none_or(|b| score > b.1) {
                best = Some((key, score));
                held.copy_from_slice(&window);
            }
        }
        best
    }

    /// The best `n` episodes for `qterms` by BM25 among those `keep` accepts (each episode by
    /// its best window, once), best first: their episode ids.
    pub fn bm25_search(&self, qterms: &[String], n: usize, keep: impl Fn(u64) -> bool) -> Vec<u64> {
        // `search_ids` asks the filter in score order: an episode's first key is its best
        // window, and later ones are turned away so they take no place among the `n`.
        let seen = std::cell::RefCell::new(std::collections::HashSet::new());
        let keys = self.bm25.search_ids(qterms, n, |key| {
            let id = episode_of(key);
            !seen.borrow().contains(&id) && keep(id) && seen.borrow_mut().insert(id)
        });
        keys.into_iter().map(episode_of).collect()
    }

    /// The `n` nearest episodes to `query` through the vector index among those `keep`
    /// accepts, each by its best key (whole vector or passage), as (episode id, cosine).
    pub fn vector_search(
        &self,
        query: &[f32],
        n: usize,
        keep: impl Fn(u64) -> bool,
    ) -> Vec<(u64, f32)> {
        // Every key the graph search reaches (its `ef_search` per segment and the exact
        // delta), so the passages of a few long texts cannot crowd others out of the `n`.
        let hits = self.vectors.search(query, usize::MAX, |key| keep(episode_of(key)));
        let mut seen = std::collections::HashSet::new();
        hits.into_iter()
            .map(|(key, c)| (episode_of(key), c))
            .filter(|(id, _)| seen.insert(*id))
            .take(n)
            .collect()
    }

    /// Puts episode `id`'s vector, and its passages' under [`passage_key`]s, in the index.
    fn insert_vectors(&mut self, id: u64, v: &TextVectors) {
        self.vectors.insert(id, &v.whole);
        for (p, passage) in v.passages.iter().enumerate().take(MAX_PASSAGES) {
            self.vectors.insert(passage_key(id, p), &passage.vector);
        }
    }

    /// Takes episode `id`'s vector and its passages' out of the index.
    fn remove_vectors(&mut self, id: u64) {
        self.vectors.remove(id);
        for p in 0..MAX_PASSAGES {
            let key = passage_key(id, p);
            if !self.vectors.contains(key) {
                break;
            }
            self.vectors.remove(key);
        }
    }

    /// The cosine of `query` with episode `id`: the best of its whole vector and its passages',
    /// with the passage (from 0) when one of them was best. `None` when it has no live vector.
    pub fn cosine(&self, id: u64, query: &[f32]) -> Option<(f32, Option<usize>)> {
        let mut best = (self.vectors.score(id, query)?, None);
        for p in 0..MAX_PASSAGES {
            match self.vectors.score(passage_key(id, p), query) {
                Some(c) if c > best.0 => best = (c, Some(p)),
                Some(_) => {}
                None => break,
            }
        }
        Some(best)
    }

    /// Changes made since the stored snapshot (new episodes and dirty ones).
    pub fn pending(&self) -> u64 {
        self.snap.pending(self.next_id)
    }

    /// Records that episode `id` changed: true when a dirty marker must go with the write.
    pub fn marks_dirty(&self, id: u64) -> bool {
        self.snap.marks_dirty(id)
    }

    /// After the write that carried its marker: episode `id` differs from the snapshot.
    pub fn mark_dirty(&mut self, id: u64) {
        self.snap.mark_dirty(id);
    }

    /// What a snapshot of this namespace holds.
    pub fn snapshot_parts(&self) -> snapshot::Parts<'_> {
        snapshot::Parts {
            bm25: &self.bm25,
            vectors: &self.vectors,
            episodes: &self.episodes,
            next_id: self.next_id,
            id_mask: ID_MASK,
        }
    }

    /// Adds to `batch` the access statistics not yet in the stored records
    /// (`persist::usage::fold`); call [`LoadedNamespace::folded`] once it is stored.
    pub fn fold_usage(&self, ns: &Namespace, batch: &mut Batch, markers: bool) {
        usage::fold(&self.usage, &self.episodes, &self.snap, ns, batch, markers);
    }

    /// After the batch [`LoadedNamespace::fold_usage`] filled was stored.
    pub fn folded(&mut self) {
        usage::folded(&mut self.usage, &mut self.snap);
    }

    /// Adds to `batch` (which logs retrieval `id` at `at`) what a recall that returned `used`
    /// stores for their access statistics (`persist::usage::stage`).
    pub fn stage_use(
        &self,
        ns: &Namespace,
        (id, at): (u64, i64),
        used: &[u64],
        batch: &mut Batch,
    ) -> Result<usage::Staged> {
        usage::stage((&self.usage, &self.episodes, &self.snap), ns, (id, at), used, batch)
    }

    /// After the batch [`LoadedNamespace::stage_use`] filled was stored.
    pub fn commit_use(&mut self, staged: usage::Staged) {
        usage::commit((&mut self.usage, &mut self.episodes, &mut self.snap), staged);
    }

    /// Fails when vectors of `model` would join vectors of another model. A namespace that
    /// never held an episode takes any model; one whose vectors carry no model name (host
    /// vectors stored without one) is a model of its own, so naming a model later needs
    /// `reembed` rather than silently mixing the two.
    pub fn check_model(&self, model: &str) -> Result<()> {
        if self.next_id > 1 && self.model != model {
            return Err(Error::ModelMismatch { expected: model.into(), found: self.model.clone() });
        }
        Ok(())
    }

    pub fn index(&mut self, e: Episode, v: &[f32]) {
        self.index_vectors(e, &TextVectors::single(v.to_vec()));
    }

    /// [`LoadedNamespace::index`] with the passages of a long text.
    pub fn index_vectors(&mut self, e: Episode, v: &TextVectors) {
        self.generation += 1;
        if e.is_live() {
            self.bm25_insert(&e);
            self.insert_vectors(e.id, v);
        }
        self.by_time.insert((e.created_at, e.id));
        self.episodes.insert(e);
    }

    /// Holds `e` (not live: superseded, rejected) in the namespace, out of the indexes.
    pub fn keep_unindexed(&mut self, e: Episode) {
        self.unindex(e.id);
        self.by_time.insert((e.created_at, e.id));
        self.episodes.insert(e);
    }

    pub fn unindex(&mut self, id: u64) {
        self.generation += 1;
        // Its own terms, when its record reads: removing by them visits a few posting lists
        // instead of all of them.
        match self.episodes.get(id) {
            Ok(Some(e)) if e.is_live() => {
                let e = e.into_owned();
                self.bm25_remove(id, Some(&e));
            }
            // Not live: not indexed (then this returns at once), or indexed by another path.
            _ => self.bm25_remove(id, None),
        }
        if let Some(h) = self.episodes.remove(id) {
            self.by_time.remove(&(h.created_at, id));
        }
        self.remove_vectors(id);
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
