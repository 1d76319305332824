//! The engine facade: episodes, facts and rules over one [`KvStore`], per user namespace.
//!
//! Every mutation is one atomic batch, written before any in-memory index changes, so a failed
//! write leaves both the store and the indexes as they were. Time (`now`, ms) is always a
//! parameter; the engine reads no clock and does no I/O of its own.
//!
//! A namespace is loaded on first use: its episodes and vectors are read with paged scans and
//! the BM25 and vector indexes rebuilt from them (they are derived state).

mod compaction;
mod config;
mod context;
mod episodes;
mod facts;
pub(crate) mod import;
mod index_keys;
mod lazy;
pub(crate) mod learning;
mod namespace;
#[cfg(test)]
mod namespace_tests;
pub(crate) mod persist;
pub mod policy;
pub(crate) mod privacy;
mod repair;
pub(crate) mod retrieve;
mod rules;
mod stats;
mod working;

pub use compaction::Compacted;
pub use config::Config;
pub use context::{Context, ContextRequest, Disclosure, Tokens, ToolCall, MAX_SYSTEM_BYTES};
pub use facts::{FactInput, FactWrite};
pub use import::{ImportedSignals, IngestOptions, Ingested, MAX_FUTURE_MS};
pub use learning::feedback::Feedback;
pub use learning::nightly::{Nightly, NightlyStep, STEP_ORDER as NIGHTLY_STEPS};
pub use learning::observe::{ObservationHit, Observed};
pub use learning::outcomes::{EntryReport, OutcomeReport, Verdict};
pub use learning::promotion::Promoted;
pub use learning::settings::{Consolidation, Learning};
pub use namespace::Quarantined;
pub use persist::snapshot::Opened;
pub use policy::{Decision, SecretAction, WritePolicy};
pub use privacy::correct::Correction;
pub use privacy::erase::{Erasure, Layer, Receipt, Verification};
pub use privacy::erase_options::EraseOptions;
pub use privacy::export::{ExportOptions, Moved};
pub use retrieve::filter::Filter;
pub use retrieve::recall::{Hit, Query, Recall};
pub use retrieve::score;
pub use retrieve::score::{Decay, Explanation, Formula, MatchedPassage, Scoring};
pub use stats::{Stats, Statuses, Tiers};

use std::collections::HashMap;

use crate::embed::passages::{self, TextVectors};
use crate::embed::{checked_unit_vector, Embedder, Role};
use crate::error::{Error, Result};
use crate::index::vectors::VectorConfig;
use crate::record::episode::encode_vectors;
use crate::record::{Episode, Status};
use crate::store::{Batch, KvStore, Namespace, Table};
use namespace::LoadedNamespace;
use persist::snapshot::{self, Feed};

fn write_snapshot(
    store: &mut impl KvStore,
    space: &mut LoadedNamespace,
    ns: &Namespace,
    config: &Config,
    stale: Vec<Vec<u8>>,
) -> Result<usize> {
    let written =
        snapshot::batch(space.snapshot_parts(), &space.snap, ns, config.snapshot_chunk, stale)?;
    let mut batch = written.batch;
    // The new part holds the statistics in memory: the records must agree with it. Episodes
    // of older parts that the fold rewrites get dirty markers, unless this is a full rewrite.
    space.fold_usage(ns, &mut batch, !written.full);
    store.write(&batch)?;
    space.folded();
    space.snap.watermark = written.watermark;
    space.snap.parts = written.parts;
    space.snap.pending.clear();
    space.snap.next_part = written.next_part;
    space.snap.unsealed = written.unsealed;
    space.vectors.rows_stored_below(space.snap.rows_stored());
    if written.progress_stored {
        space.snap.store_progress = None;
        space.vectors.progress_stored();
    }
    if written.full {
        space.snap.dirty.clear();
        space.snap.accessed.clear();
    }
    Ok(written.bytes)
}

/// The keys of an unusable or older snapshot a first snapshot of `space` must delete (read
/// before anything changes: `engine::lazy`).
fn stale_keys(
    store: &impl KvStore,
    space: &LoadedNamespace,
    ns: &Namespace,
) -> Result<Vec<Vec<u8>>> {
    if space.snap.is_first() {
        let snap = &space.snap;
        let keep = snap.pending.iter().map(|p| p.id).chain(snap.parts.iter().map(|p| p.id));
        snapshot::stale_keys(store, ns, keep)
    } else {
        Ok(Vec::new())
    }
}

/// What [`Engine::maintain`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Maintenance {
    /// Vectors sealed from exact deltas into HNSW segments.
    pub sealed: usize,
    /// Segment merges.
    pub merges: usize,
    /// Segments after the step, over all loaded namespaces.
    pub segments: usize,
    /// Snapshots written (heads that list new parts).
    pub snapshots: usize,
    /// Bytes of snapshot parts written, segment parts written ahead of a head included.
    pub snapshot_bytes: usize,
    /// Work units spent (see [`Engine::maintain`]).
    pub work: u64,
    /// Nothing is left to do: no graph build in progress and no snapshot due. Otherwise call
    /// again (a Durable Object re-arms its alarm).
    pub done: bool,
}

/// Work units a maintenance call spends unless told otherwise (`maintain` in JS and WIT):
/// 0.2–0.3 s of graph building in wasm at 100k episodes, which leaves room in a 0.5 s slice for
/// a snapshot (BENCHMARKS.md, "Maintenance under a budget").
pub const MAINTAIN_BUDGET: u64 = 2_000_000;

/// Snapshot bytes that count as one work unit of [`Engine::maintain`]: writing this many
/// costs about as much as one distance computation of a graph build (in wasm at 100k, 83.6 MB
/// of snapshot took 0.46 s and 2,000,000 distances 0.2–0.3 s).
pub const SNAPSHOT_BYTES_PER_UNIT: usize = 24;

/// Bytes of segment parts one budgeted [`Engine::maintain`] call writes at most
/// (`persist::snapshot::ahead`): the batch a call builds stays small beside the namespace,
/// whatever the budget (a Worker isolate's 128 MB hold both).
pub const SNAPSHOT_SLICE_BYTES: usize = 8 << 20;

/// Whether `maintain` writes a snapshot of `space` now: enough changes since the last one, or
/// a graph built since then that a restart would have to build again.
/// True when the graph build in progress should wait for its progress to be stored
/// (`persist::snapshot` module docs): it has spent `PROGRESS_EVERY` budgets since its progress
/// was last stored, and as many times the work its progress's bytes count for, and its
/// progress could be taken up after a restart.
fn progress_due(vectors: &crate::index::vectors::VectorIndex, budget: u64) -> bool {
    let unsaved = vectors.unsaved_work();
    let every = snapshot::PROGRESS_EVERY;
    if unsaved < budget.max(1).saturating_mul(every) {
        return false;
    }
    let Some(len) = vectors.progress_len() else { return false };
    unsaved >= every.saturating_mul((len / SNAPSHOT_BYTES_PER_UNIT) as u64)
        && vectors.progress_resumable()
}

fn snapshot_due(space: &LoadedNamespace, config: &Config) -> bool {
    let pending = space.pending();
    (pending > 0 && pending >= config.snapshot_after as u64)
        || space.snap.lacks_segment(&space.vectors.segment_serials())
}

impl Default for Config {
    fn default() -> Self {
        Self {
            vector_model: String::new(),
            dim: 384,
            policy: WritePolicy::default(),
            scoring: Scoring::default(),
            vectors: VectorConfig::default(),
            min_fact_confidence: 0.5,
            snapshot_after: 1024,
            snapshot_chunk: 120 * 1024,
            learning: Learning::default(),
            compaction: crate::compact::Compaction::default(),
            consolidation: Consolidation::default(),
        }
    }
}

/// What [`Engine::remember`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Remembered {
    /// Stored under this id, with the policy's importance and reason.
    Stored {
        /// The new episode id.
        id: u64,
        /// Importance assigned.
        importance: f32,
        /// Why.
        reason: &'static str,
    },
    /// The write policy discarded it; nothing was stored.
    Discarded {
        /// Why.
        reason: String,
    },
}

/// An episode checked and passed by the write policy ([`Engine::stage`]), or why not.
pub(crate) enum Staged {
    Discarded(String),
    Kept {
        episode: Box<Episode>,
        given: Option<TextVectors>,
        importance: f32,
        reason: &'static str,
    },
}

/// A loaded namespace with the engine's store and settings borrowed beside it
/// ([`Engine::loaded`]).
pub(crate) struct Loaded<'e, S> {
    pub(crate) space: &'e mut LoadedNamespace,
    pub(crate) store: &'e mut S,
    pub(crate) config: &'e Config,
}

/// The longest episode text `remember` takes (1 MiB): a longer one is refused with a typed
/// error, never cut.
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// The memory engine.
pub struct Engine<S: KvStore> {
    store: S,
    config: Config,
    embedder: Option<Box<dyn Embedder>>,
    llm: Option<Box<dyn crate::learn::phrasing::Llm>>,
    namespaces: HashMap<String, LoadedNamespace>,
    /// The host's tokenizer (the estimate when `None`).
    tokens: Option<Box<dyn crate::context::TokenCounter>>,
    /// Running tasks' working memories, by namespace and task id (in process only).
    tasks: HashMap<String, crate::context::WorkingMemory>,
    /// Transcripts contexts point at, by number (`engine::working`).
    references: std::collections::BTreeMap<u64, (String, String)>,
    next_reference: u64,
    /// Snapshots a host is handing over part by part before it loads their namespace
    /// (`engine::lazy`).
    feeds: HashMap<String, Feed>,
    /// Why the last attempt to finish an erasure's vacuum failed (retried at each load).
    vacuum_failed: Option<String>,
}

impl<S: KvStore> Engine<S> {
    /// An engine over `store`. Attach an embedder with [`Engine::with_embedder`], or pass
    /// vectors yourself (model id and dimension from `config`).
    pub fn new(store: S, config: Config) -> Self {
        Self {
            store,
            config,
            embedder: None,
            llm: None,
            namespaces: HashMap::new(),
            tokens: None,
            tasks: HashMap::new(),
            references: Default::default(),
            next_reference: 0,
            feeds: HashMap::new(),
            vacuum_failed: None,
        }
    }

    /// Counts context tokens with the host's tokenizer instead of the estimate
    /// (`context::tokens`).
    pub fn with_token_counter(mut self, counter: Box<dyn crate::context::TokenCounter>) -> Self {
        self.tokens = Some(counter);
        self
    }

    /// Lets the host's language model phrase observations (checked before anything is
    /// written; see `learn::phrasing`).
    pub fn with_llm(mut self, llm: Box<dyn crate::learn::phrasing::Llm>) -> Self {
        self.llm = Some(llm);
        self
    }

    /// True when an embedder is attached.
    pub fn has_embedder(&self) -> bool {
        self.embedder.is_some()
    }

    /// Uses `embedder` for texts stored and searched without a vector.
    pub fn with_embedder(mut self, embedder: Box<dyn Embedder>) -> Self {
        self.config.vector_model = embedder.model_id().to_string();
        self.config.dim = embedder.dim();
        self.embedder = Some(embedder);
        self
    }

    /// Embeds `texts` with the attached embedder (an error when there is none).
    pub fn embed(&mut self, texts: &[&str], role: Role) -> Result<Vec<crate::embed::Embedding>> {
        match self.embedder.as_mut() {
            Some(e) => e.embed(texts, role),
            None => Err(Error::InvalidInput("no embedder attached: load a model first".into())),
        }
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The store (for hosts that flush or inspect it).
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The store, for hosts that manage it (journals, preloads). Writing to it behind the
    /// engine's back leaves loaded namespaces stale: [`Engine::unload`] them.
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Drops namespace `ns`'s loaded state; the next use reloads it from the store.
    pub fn unload(&mut self, ns: &str) {
        self.namespaces.remove(ns);
        self.feeds.remove(ns);
    }

    /// Gives the store back.
    pub fn into_store(self) -> S {
        self.store
    }

    /// The loaded namespace `ns`, loaded now if it is not yet.
    fn space(&mut self, ns: &Namespace) -> Result<&mut LoadedNamespace> {
        Ok(self.loaded(ns)?.space)
    }

    /// The loaded namespace `ns` (loaded now if it is not yet) with the store and the settings
    /// borrowed beside it: what a capability that writes a batch and then updates the
    /// namespace's indexes works on.
    pub(crate) fn loaded(&mut self, ns: &Namespace) -> Result<Loaded<'_, S>> {
        let Engine { namespaces, feeds, store, config, vacuum_failed, .. } = self;
        let space = match namespaces.entry(ns.as_str().to_string()) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                // A vacuum that cannot run now (a read-only directory, a full disk) leaves the
                // store usable: the erased records are gone from every answer, and the vacuum
                // is tried again at the next load (`quarantined` says so meanwhile).
                *vacuum_failed = privacy::erase::finish_vacuum(store).err().map(|e| e.to_string());
                let fed = feeds.remove(ns.as_str());
                let failed = fed.as_ref().and_then(|f| f.failure().map(str::to_string));
                match LoadedNamespace::load(store, ns, config, fed) {
                    Ok(space) => v.insert(space),
                    Err(e) => {
                        // The load runs again once the host has what it needed: a snapshot
                        // known to be unusable need not be handed over again.
                        if let Some(reason) = failed {
                            feeds.insert(ns.as_str().to_string(), Feed::failed(reason));
                        }
                        return Err(e);
                    }
                }
            }
        };
        Ok(Loaded { space, store, config })
    }

    /// Loads a namespace's indexes now (otherwise done on first use); returns its episode count.
    pub fn load(&mut self, ns: &str) -> Result<usize> {
        let ns = Namespace::new(ns)?;
        Ok(self.space(&ns)?.episodes.len())
    }

    fn vector_for(&mut self, text: &str, given: Option<&[f32]>, role: Role) -> Result<Vec<f32>> {
        match (given, self.embedder.as_mut()) {
            (Some(v), _) => checked_unit_vector(v, self.config.dim),
            (None, Some(e)) => Ok(e.embed(&[text], role)?.remove(0).vector),
            (None, None) => Err(Error::InvalidInput(
                "no vector given and no embedder attached: pass the text's vector or load a model"
                    .into(),
            )),
        }
    }

    /// The vectors of a text to store: the host's `given` vector, or the attached embedder's,
    /// as passages when the text is longer than the model reads (`embed::passages`).
    fn vectors_for(&mut self, text: &str, given: Option<&[f32]>) -> Result<TextVectors> {
        match (given, self.embedder.as_mut()) {
            (None, Some(e)) => Ok(passages::embed_texts(e.as_mut(), &[text])?.remove(0)),
            _ => Ok(TextVectors::single(self.vector_for(text, given, Role::Passage)?)),
        }
    }

    /// Embeds texts to store with the attached embedder, each long one as passages
    /// (`embed::passages`).
    pub fn embed_passages(&mut self, texts: &[&str]) -> Result<Vec<TextVectors>> {
        match self.embedder.as_mut() {
            Some(e) => passages::embed_texts(e.as_mut(), texts),
            None => Err(Error::InvalidInput("no embedder attached: load a model first".into())),
        }
    }

    /// Stores `episode` in namespace `ns` (its `id` is assigned here). `vector` is the text's
    /// embedding when the host supplies it; otherwise the attached embedder makes it (a text
    /// longer than the model reads as overlapping passages, each searched: `embed::passages`).
    /// One atomic batch holds the episode, its vectors and the namespace counter.
    pub fn remember(
        &mut self,
        ns: &str,
        episode: Episode,
        vector: Option<&[f32]>,
    ) -> Result<Remembered> {
        self.remember_with(ns, episode, vector.map(|v| TextVectors::single(v.to_vec())))
    }

    /// [`Engine::remember`] with vectors the host made itself, passages included
    /// ([`passages::embed_texts`] makes them with any [`crate::Embedder`]): each must be a
    /// vector of the namespace's dimension, at most [`passages::MAX_PASSAGES`] passages, each
    /// window within the text (byte offsets on character boundaries).
    pub fn remember_passages(
        &mut self,
        ns: &str,
        episode: Episode,
        vectors: TextVectors,
    ) -> Result<Remembered> {
        self.remember_with(ns, episode, Some(vectors))
    }

    fn remember_with(
        &mut self,
        ns: &str,
        episode: Episode,
        given: Option<TextVectors>,
    ) -> Result<Remembered> {
        let ns = Namespace::new(ns)?;
        let (episode, given, importance, reason) = match self.stage(episode, given)? {
            Staged::Discarded(reason) => return Ok(Remembered::Discarded { reason }),
            Staged::Kept { episode, given, importance, reason } => {
                (*episode, given, importance, reason)
            }
        };
        let v = match given {
            Some(v) => v,
            None => self.vectors_for(&episode.text, None)?,
        };
        let id = self.store_episodes(&ns, vec![(episode, v)], Batch::new())?[0];
        Ok(Remembered::Stored { id, importance, reason })
    }

    /// Checks an episode to store and applies the write policy (masking, then keep or
    /// discard); embeds nothing.
    pub(crate) fn stage(&self, mut episode: Episode, given: Option<TextVectors>) -> Result<Staged> {
        if episode.text.trim().is_empty() {
            return Err(Error::InvalidInput("episode text is empty: nothing to remember".into()));
        }
        if episode.text.len() > MAX_TEXT_BYTES {
            return Err(Error::InvalidInput(format!(
                "episode text is {} bytes, over the {MAX_TEXT_BYTES}-byte (1 MiB) limit: split \
                 it into several episodes (a document into its sections)",
                episode.text.len()
            )));
        }
        // Host passages are windows of the text as the host had it: checked against it, and
        // dropped (the whole vector kept) when masking secrets rewrites the text under them.
        let given = match given {
            Some(v) => Some(checked_text_vectors(v, &episode.text, self.config.dim)?),
            None => None,
        };
        let written =
            given.as_ref().filter(|v| !v.passages.is_empty()).map(|_| episode.text.clone());
        if let Some(reason) = self.config.policy.sanitise(&mut episode) {
            return Ok(Staged::Discarded(reason));
        }
        let given = given.map(|mut v| {
            if written.as_ref().is_some_and(|w| *w != episode.text) {
                v.passages.clear();
            }
            v
        });
        match self.config.policy.decide(&episode) {
            Decision::Discard { reason } => Ok(Staged::Discarded(reason)),
            Decision::Keep { importance, reason } => {
                episode.importance = importance;
                Ok(Staged::Kept { episode: Box::new(episode), given, importance, reason })
            }
        }
    }

    /// Stores staged episodes with their vectors in one atomic batch (with whatever `batch`
    /// already holds), then indexes them; returns their new ids in order.
    pub(crate) fn store_episodes(
        &mut self,
        ns: &Namespace,
        episodes: Vec<(Episode, TextVectors)>,
        mut batch: Batch,
    ) -> Result<Vec<u64>> {
        let model = self.config.vector_model.clone();
        let space = self.space(ns)?;
        space.check_model(&model)?;
        if space.next_id + episodes.len() as u64 > namespace::MAX_ID {
            return Err(Error::InvalidInput(format!(
                "namespace {} has no room for {} more episodes (ids end at {}): export it and \
                 import it into a new namespace",
                ns.as_str(),
                episodes.len(),
                namespace::MAX_ID - 1
            )));
        }
        let first = space.next_id;
        let mut episodes = episodes;
        for (i, (episode, v)) in episodes.iter_mut().enumerate() {
            episode.id = first + i as u64;
            episode.last_accessed_at = episode.last_accessed_at.max(episode.created_at);
            let id_key = episode.id.to_be_bytes();
            batch.put(ns.key(Table::Episode, &id_key), episode.encode());
            batch.put(ns.key(Table::Vector, &id_key), encode_vectors(&model, v));
        }
        let next = first + episodes.len() as u64;
        batch.put(ns.key(Table::Meta, b"space"), persist::meta::encode_meta(next, &model));
        let Loaded { space, store, config } = self.loaded(ns)?;
        store.write(&batch)?;
        space.model = model;
        space.exists = true;
        space.next_id = next;
        let mut ids = Vec::with_capacity(episodes.len());
        let mut topics: Vec<(String, i64)> = Vec::new();
        for (episode, v) in episodes {
            ids.push(episode.id);
            let topic = episode.situation_key().filter(|_| episode.holds_lesson()).filter(|k| {
                let n = space.recurrence.entry(k.clone()).or_insert(0);
                *n += 1;
                *n >= config.consolidation.recurrence
            });
            if let Some(key) = topic {
                // Once per situation, at its latest lesson's time (one `remember` at a time
                // would have run it at each).
                match topics.iter_mut().find(|t| t.0 == key) {
                    Some(t) => t.1 = t.1.max(episode.created_at),
                    None => topics.push((key, episode.created_at)),
                }
            }
            space.index_vectors(episode, &v);
        }
        for (key, at) in topics {
            // Recurrence trigger: this situation keeps producing lessons; consolidate it now.
            self.cluster_key(ns, at, Some(&key))?;
        }
        Ok(ids)
    }

    /// Changes an episode's status (rejected and superseded episodes leave the indexes; they
    /// are kept in the log).
    pub fn set_status(&mut self, ns: &str, id: u64, status: Status) -> Result<()> {
        let nsc = Namespace::new(ns)?;
        let mut batch = Batch::new();
        // First, so that the change below wins (last write wins in a batch).
        self.space(&nsc)?.fold_usage(&nsc, &mut batch, true);
        let e = self.stage_status(&nsc, id, status, &mut batch)?;
        self.store.write(&batch)?;
        self.space(&nsc)?.folded();
        self.apply_status(&nsc, e)?;
        Ok(())
    }

    /// Adds episode `id`'s status change to `batch`; returns the changed episode, with the
    /// vectors it is indexed by again when it is live (read now, before anything is written),
    /// for [`Engine::apply_status`] once the batch is stored. The record written carries the
    /// access statistics in memory: `batch` must fold them first (`engine::persist::usage`).
    fn stage_status(
        &mut self,
        ns: &Namespace,
        id: u64,
        status: Status,
        batch: &mut Batch,
    ) -> Result<(Episode, Option<TextVectors>)> {
        let Loaded { space, store, .. } = self.loaded(ns)?;
        let mut e =
            space.episodes.get(id)?.map(|e| e.into_owned()).ok_or_else(|| {
                Error::NotFound(format!("episode {id} in namespace {}", ns.as_str()))
            })?;
        e.status = status;
        let vectors = if e.is_live() { space.vectors_of(store, ns, id)? } else { None };
        batch.put(ns.key(Table::Episode, &id.to_be_bytes()), e.encode());
        if space.marks_dirty(id) {
            batch.put(snapshot::dirty_key(ns, id), Vec::new());
        }
        Ok((e, vectors))
    }

    /// Updates the indexes after a stored [`Engine::stage_status`].
    fn apply_status(
        &mut self,
        ns: &Namespace,
        (e, vector): (Episode, Option<TextVectors>),
    ) -> Result<()> {
        let id = e.id;
        let space = self.space(ns)?;
        space.mark_dirty(id);
        match vector {
            Some(v) => {
                space.unindex(id);
                space.index_vectors(e, &v);
            }
            None => space.keep_unindexed(e),
        }
        Ok(())
    }

    /// One episode by id.
    pub fn episode(&mut self, ns: &str, id: u64) -> Result<Episode> {
        let ns = Namespace::new(ns)?;
        let space = self.space(&ns)?;
        space
            .episodes
            .get(id)?
            .map(|e| e.into_owned())
            .ok_or_else(|| Error::NotFound(format!("episode {id} in namespace {}", ns.as_str())))
    }

    /// Episodes of `ns` in time order (oldest first), `limit` at most, created before `before`.
    pub fn timeline(&mut self, ns: &str, before: i64, limit: usize) -> Result<Vec<Episode>> {
        let ns = Namespace::new(ns)?;
        let space = self.space(&ns)?;
        let mut out = Vec::new();
        for (_, id) in space.by_time.range(..(before, 0)).rev().take(limit) {
            out.extend(space.episodes.get(*id)?.map(|e| e.into_owned()));
        }
        out.reverse();
        Ok(out)
    }

    /// Runs the index's background step for every loaded namespace, spending about `budget`
    /// work units (`None`: until nothing is due). Hosts call it when idle (a timer,
    /// `requestIdleCallback`, a Durable Object alarm) until [`Maintenance::done`]; until then
    /// recent writes and a freshly opened namespace are scanned exactly, which stays correct
    /// but grows linearly. `needs_maintenance` says when a call is due.
    ///
    /// First it continues or starts graph builds
    /// ([`VectorIndex::maintain`](crate::index::vectors::VectorIndex::maintain): sealing recent
    /// vectors, merging segments; one unit per distance computed; `force` seals any non-empty
    /// delta). Then, unless the builds took more than half the budget, it writes a snapshot of
    /// each namespace with at least `Config::snapshot_after` changes since its last one, or
    /// with a graph built since, so the next cold open reads the indexes instead of rebuilding
    /// them (`engine::persist::snapshot`). Under a budget, the new segments' parts are written
    /// first, a slice of at most the budget's worth and [`SNAPSHOT_SLICE_BYTES`] a call, ahead
    /// of the head, which lists their progress (a restart does not go on from it: their
    /// segments were in memory only, so the next write deletes those chunks); once they are all
    /// written, a call whose builds left half its budget writes the episodes part and the head
    /// (that part is written whole: a full rewrite's is the size of the episodes' records and
    /// BM25 documents). Snapshot bytes count one unit per [`SNAPSHOT_BYTES_PER_UNIT`]; without a
    /// budget a snapshot is written whole in one call. Until it is written, the records hold
    /// every change. Under a budget, a long graph build also waits now and then (calls that
    /// report `done: false` and build nothing) while its progress is stored, so that a restart
    /// takes it up where it stopped (`index::progress`).
    pub fn maintain(&mut self, force: bool, budget: Option<u64>) -> Result<Maintenance> {
        let budget = budget.unwrap_or(u64::MAX);
        // Every read first: a host that keeps snapshots in its own storage may have to hand
        // them over and run this call again, which is only safe while nothing is written.
        let mut stale = Vec::with_capacity(self.namespaces.len());
        for (name, space) in &self.namespaces {
            let may_snapshot = snapshot_due(space, &self.config) || space.vectors.has_work(force);
            stale.push(if may_snapshot {
                stale_keys(&self.store, space, &Namespace::new(name)?)?
            } else {
                Vec::new()
            });
        }
        // New parts are numbered past the stale chunks the first snapshot deletes.
        for ((name, space), stale) in self.namespaces.iter_mut().zip(&stale) {
            let past = snapshot::past_part_ids(&Namespace::new(name)?, stale);
            space.snap.next_part = space.snap.next_part.max(past);
        }
        let mut total = Maintenance { done: true, ..Maintenance::default() };
        for space in self.namespaces.values_mut() {
            let building = space.vectors.building();
            if space.snap.store_progress != building {
                space.snap.store_progress = None; // the build it was asked for is over
            }
            let storing = space.snap.storing_progress(building);
            if budget != u64::MAX && (storing || progress_due(&space.vectors, budget)) {
                // The build waits: for a snapshot that lists every segment, then while its
                // progress is written ahead (below).
                let serials = space.vectors.segment_serials();
                if !storing && !space.snap.lacks_segment(&serials) {
                    space.snap.store_progress = building;
                }
                total.segments += serials.len();
                total.done = false;
                continue;
            }
            // A build foreseen to take more than `PROGRESS_EVERY` budgets starts only once a
            // snapshot lists every segment, so that its progress can be stored as it goes.
            let long = budget.saturating_mul(snapshot::PROGRESS_EVERY);
            let snap = &space.snap;
            let may_start = |rows: usize, serials: &[u64]| {
                budget == u64::MAX
                    || (rows as u64).saturating_mul(snapshot::WORK_PER_ROW) <= long
                    || !snap.lacks_segment(serials)
            };
            let left = budget.saturating_sub(total.work);
            let r = space.vectors.maintain_with(force, left, may_start);
            total.sealed += r.sealed;
            total.merges += r.merges;
            total.segments += r.segments;
            total.work += r.work;
            total.done &= r.done;
        }
        for ((name, space), stale) in self.namespaces.iter_mut().zip(stale) {
            let building = space.vectors.building();
            let progress = budget != u64::MAX && space.snap.storing_progress(building);
            if !snapshot_due(space, &self.config) && !progress {
                continue;
            }
            let ns = Namespace::new(name)?;
            if budget != u64::MAX {
                // New segments first, a slice a call, ahead of the head that will list them.
                let left = usize::try_from(budget.saturating_sub(total.work)).unwrap_or(usize::MAX);
                // At least a chunk while a build waits for its progress to be written.
                let allowance = left
                    .saturating_mul(SNAPSHOT_BYTES_PER_UNIT)
                    .min(SNAPSHOT_SLICE_BYTES)
                    .max(usize::from(progress));
                let chunk = self.config.snapshot_chunk;
                if let Some(a) =
                    snapshot::ahead(&space.vectors, &space.snap, &ns, chunk, allowance)?
                {
                    self.store.write(&a.batch)?;
                    space.snap.pending = a.pending;
                    space.snap.parts = a.parts;
                    space.snap.next_part = a.next_part;
                    if a.progress_stored {
                        space.snap.store_progress = None;
                        space.vectors.progress_stored();
                    }
                    total.snapshot_bytes += a.bytes;
                    total.work += (a.bytes / SNAPSHOT_BYTES_PER_UNIT) as u64;
                }
                let building = space.vectors.building();
                if !space.snap.segments_ready(&space.vectors)
                    || space.snap.storing_progress(building)
                {
                    total.done = false;
                    continue;
                }
                if !snapshot_due(space, &self.config) {
                    continue;
                }
            }
            // Not when the builds took more than half the budget: the rest is written whole.
            if total.work > budget / 2 {
                total.done = false;
                continue;
            }
            let bytes = write_snapshot(&mut self.store, space, &ns, &self.config, stale)?;
            total.snapshot_bytes += bytes;
            total.snapshots += 1;
            total.work += (bytes / SNAPSHOT_BYTES_PER_UNIT) as u64;
        }
        Ok(total)
    }

    /// Writes a snapshot of namespace `ns` now (whatever changed since the last one); returns
    /// its size in bytes.
    pub fn snapshot(&mut self, ns: &str) -> Result<usize> {
        let ns = Namespace::new(ns)?;
        let Loaded { space, store, config } = self.loaded(&ns)?;
        let stale = stale_keys(store, space, &ns)?;
        write_snapshot(store, space, &ns, config, stale)
    }

    /// How namespace `ns` was opened (`None` while it is not loaded).
    pub fn opened(&self, ns: &str) -> Option<&Opened> {
        self.namespaces.get(ns).map(|s| &s.opened)
    }

    /// True when some loaded namespace's exact delta has outgrown twice its sealing size.
    pub fn needs_maintenance(&self) -> bool {
        self.namespaces.values().any(|s| s.vectors.needs_maintenance())
    }

    /// Deletes everything of namespace `ns` in one atomic batch and vacuums the store;
    /// returns how many records went. [`Engine::erase`] does the same with a receipt.
    pub fn forget_namespace(&mut self, ns: &str) -> Result<usize> {
        let r = self.erase(ns, &Erasure::Namespace, 0)?;
        Ok(r.layers.iter().map(|l| l.deleted).sum())
    }

    /// Adds the namespace's meta record to `batch` when the namespace has none yet.
    fn ensure_namespace(&mut self, ns: &Namespace, batch: &mut Batch) -> Result<()> {
        if self.store.get(&ns.key(Table::Meta, b"space"))?.is_none() {
            batch.put(ns.key(Table::Meta, b"space"), persist::meta::encode_meta(1, ""));
            // Reloaded on next use, after the batch is stored.
            self.namespaces.remove(ns.as_str());
        }
        Ok(())
    }

    /// Approximate bytes held by the loaded namespaces' indexes and episode metadata.
    pub fn memory(&self) -> usize {
        self.namespaces.values().map(LoadedNamespace::memory).sum()
    }
}

/// Host-made vectors checked as [`checked_unit_vector`] checks one: every vector of `dim`
/// dimensions (returned normalised), at most [`passages::MAX_PASSAGES`] passages, each window a
/// non-empty range of `text` (as the host wrote it, before secrets are masked) on character
/// boundaries.
fn checked_text_vectors(v: TextVectors, text: &str, dim: usize) -> Result<TextVectors> {
    if v.passages.len() > passages::MAX_PASSAGES {
        return Err(Error::InvalidInput(format!(
            "{} passages given; at most {} are kept: embed longer texts in wider windows",
            v.passages.len(),
            passages::MAX_PASSAGES
        )));
    }
    let whole = checked_unit_vector(&v.whole, dim)?;
    let mut out = Vec::with_capacity(v.passages.len());
    for (i, p) in v.passages.into_iter().enumerate() {
        let (a, b) = (p.start as usize, p.end as usize);
        if a >= b || text.get(a..b).is_none() {
            return Err(Error::InvalidInput(format!(
                "passage {i} spans bytes {a}..{b}, which is not a range of the {}-byte text on \
                 character boundaries",
                text.len()
            )));
        }
        let vector = checked_unit_vector(&p.vector, dim)
            .map_err(|e| Error::InvalidInput(format!("passage {i}: {e}")))?;
        out.push(passages::Passage { vector, ..p });
    }
    Ok(TextVectors { whole, passages: out })
}
