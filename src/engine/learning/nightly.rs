//! The nightly job: the learning loop's steps in order (compaction before detection, so the
//! detector reads summarised timelines), resumable under a work
//! budget.
//!
//! Steps: compact raw episodes into weekly summaries → compact weekly summaries into monthly
//! overviews (`engine::compaction`) → consolidate observations (merge identical patterns and
//! near-duplicates) → cluster episodes into lesson observations (`engine::consolidation`) →
//! detect behaviours (pass 1 over the window's signals) → detect conditions (pass 2) → write
//! at most `Learning::max_new` new observations → promote → evict the episodes a new rule now
//! represents → act on outcome tracking → carry out queued erasure requests (`engine::erase`).
//!
//! Each finished run's report is kept (the last [`LOG_KEEP`]) under
//! `Table::Learning/log/<now:i64 BE>` as JSON, for the inspector: what each pass compacted,
//! merged, promoted and evicted.
//!
//! The budget counts **work units** — records read or written — not time: the core has no
//! clock, and a Worker's `Date.now()` does not advance during CPU work. When a call's budget
//! is spent, the job stops after the page or step in progress and persists its cursor (the
//! step, the last signal read, the detector's counters) under `Table::Learning`; the next call
//! continues from there, with the `now` of the run it resumes. Every step is idempotent, so a
//! run cut short anywhere and resumed gives the same store as an uninterrupted one.
//!
//! Cursor bytes: `Table::Learning/head` (kind 14: `chunks:u32 len:u64`) and
//! `Table::Learning/c/<i:u32 BE>` (kind 13: raw bytes), the postcard encoding of the run's
//! state, cut into chunks of at most `Config::snapshot_chunk` bytes. A cursor this build cannot
//! read (written by another version) is dropped and the run starts over: every step is
//! idempotent, so starting over loses nothing.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::embed::cosine;
use crate::engine::learning::observe::load_observations;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::learn::detect::Detector;
use crate::learn::pattern::Pattern;
use crate::record::episode::decode_vector;
use crate::record::ObservationStatus;
use crate::store::codec::{open, seal, Reader, Writer};
use crate::store::{Batch, KvStore, Namespace, Table};

const HEAD_KIND: u8 = 14;
const CHUNK_KIND: u8 = 13;

/// Where a nightly run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NightlyStep {
    /// Merge identical and near-duplicate observations.
    Consolidate,
    /// Pass 1 of the detector.
    Behaviours,
    /// Pass 2 of the detector.
    Conditions,
    /// Write new and updated observations.
    Write,
    /// Promote observations to rules.
    Promote,
    /// Act on outcome tracking.
    Outcomes,
    /// Carry out queued erasure requests (`engine::erase`).
    Erase,
    /// Finished.
    Done,
    /// Compact raw episodes into weekly summaries (the first step).
    CompactWeekly,
    /// Compact weekly summaries into monthly overviews.
    CompactMonthly,
    /// Cluster episodes into lesson observations.
    Cluster,
    /// Evict episodes a rule now represents.
    Evict,
}

/// The steps of a run in the order they run (`Done` last): a caller that runs the job in
/// budgeted slices can show how far it is by the position of [`Nightly::next`] here.
pub const STEP_ORDER: [NightlyStep; 12] = [
    NightlyStep::CompactWeekly,
    NightlyStep::CompactMonthly,
    NightlyStep::Consolidate,
    NightlyStep::Cluster,
    NightlyStep::Behaviours,
    NightlyStep::Conditions,
    NightlyStep::Write,
    NightlyStep::Promote,
    NightlyStep::Evict,
    NightlyStep::Outcomes,
    NightlyStep::Erase,
    NightlyStep::Done,
];

impl NightlyStep {
    /// The step's name, as in [`Nightly::next`] ("compact-weekly", "detect-behaviours", …).
    pub fn name(self) -> String {
        step_name(self)
    }
}

/// Nightly reports kept for the inspector.
pub const LOG_KEEP: usize = 20;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    now: i64,
    step: NightlyStep,
    cursor: Option<u64>,
    detector: Detector,
    reverse: BTreeSet<String>,
    report: Nightly,
}

/// What a call of [`Engine::nightly`] did (over the whole run when `done`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Nightly {
    /// The run finished (otherwise call again to continue).
    pub done: bool,
    /// The `now` of the run (a resumed run keeps its first call's).
    pub now: i64,
    /// The step the next call starts at.
    pub next: String,
    /// Work units this call spent.
    pub work: u64,
    /// Observations merged into another.
    pub merged: Vec<u64>,
    /// Signals read by the detector (both passes).
    pub signals_read: u64,
    /// New observations.
    pub inserted: Vec<u64>,
    /// Observations recounted.
    pub updated: Vec<u64>,
    /// Rules promoted.
    pub promoted: Vec<u64>,
    /// Episodes outcome tracking down-weighted.
    pub harmful_episodes: Vec<u64>,
    /// Rules outcome tracking demoted.
    pub demoted_rules: Vec<u64>,
    /// Rules superseded by a wider or equal rule (`engine::learning::rule_merge`): narrower active rules a
    /// promoted one absorbed, and promoted rules an active one already said.
    pub merged_rules: Vec<u64>,
    /// Receipts of the queued erasures carried out (JSON text of `engine::Receipt`).
    pub erasures: Vec<String>,
    /// Summaries written by compaction.
    pub compacted: Vec<crate::engine::Compacted>,
    /// Observations consolidation wrote or recounted from clusters of episodes.
    pub clustered: Vec<u64>,
    /// Episodes evicted from recall because a rule now represents them.
    pub evicted: Vec<u64>,
}

fn step_name(s: NightlyStep) -> String {
    match s {
        NightlyStep::Consolidate => "consolidate",
        NightlyStep::Behaviours => "detect-behaviours",
        NightlyStep::Conditions => "detect-conditions",
        NightlyStep::Write => "write-observations",
        NightlyStep::Promote => "promote",
        NightlyStep::Outcomes => "outcomes",
        NightlyStep::Erase => "erase",
        NightlyStep::Done => "done",
        NightlyStep::CompactWeekly => "compact-weekly",
        NightlyStep::CompactMonthly => "compact-monthly",
        NightlyStep::Cluster => "cluster",
        NightlyStep::Evict => "evict",
    }
    .into()
}

fn head_key(ns: &Namespace) -> Vec<u8> {
    ns.key(Table::Learning, b"head")
}

fn chunk_key(ns: &Namespace, i: u32) -> Vec<u8> {
    let mut k = ns.key(Table::Learning, b"c/");
    k.extend_from_slice(&i.to_be_bytes());
    k
}

fn read_state(store: &impl KvStore, ns: &Namespace) -> Result<Option<(State, u32)>> {
    let Some(head) = store.get(&head_key(ns))? else { return Ok(None) };
    let mut r = Reader::new(open(&head, HEAD_KIND, "nightly cursor")?, "nightly cursor");
    let (chunks, len) = (r.u32()?, r.u64()?);
    r.end()?;
    let mut bytes = Vec::with_capacity(len.min(1 << 30) as usize);
    for i in 0..chunks {
        let c = store.get(&chunk_key(ns, i))?.ok_or_else(|| Error::Corrupt {
            what: "nightly cursor".into(),
            detail: format!("chunk {i} of {chunks} is missing"),
        })?;
        bytes.extend_from_slice(open(&c, CHUNK_KIND, "nightly cursor chunk")?);
    }
    // A cursor of another build's layout: start over (every step is idempotent).
    Ok(postcard::from_bytes(&bytes).ok().map(|state| (state, chunks)))
}

impl<S: KvStore> Engine<S> {
    /// Runs (or continues) the nightly job for `ns` at `now`, spending about `budget` work
    /// units (`None`: run to the end). See the module docs.
    pub fn nightly(&mut self, ns: &str, now: i64, budget: Option<u64>) -> Result<Nightly> {
        let nsc = Namespace::new(ns)?;
        let stored = read_state(&self.store, &nsc)?;
        let resumed = stored.is_some();
        let (mut st, old_chunks) = match stored {
            Some((st, chunks)) => (st, chunks),
            None => (
                State {
                    now,
                    step: NightlyStep::CompactWeekly,
                    cursor: None,
                    detector: Detector::new(),
                    reverse: BTreeSet::new(),
                    report: Nightly { now, ..Nightly::default() },
                },
                0,
            ),
        };
        let budget = budget.unwrap_or(u64::MAX).max(1);
        let mut work = 0u64;
        let run_now = st.now;
        while st.step != NightlyStep::Done && work < budget {
            match st.step {
                NightlyStep::CompactWeekly | NightlyStep::CompactMonthly => {
                    let tier = if st.step == NightlyStep::CompactWeekly { 1 } else { 2 };
                    let (done, units, finished) =
                        self.compact_step(&nsc, run_now, tier, budget - work)?;
                    st.report.compacted.extend(done);
                    work += units;
                    if finished {
                        st.step = if tier == 1 {
                            NightlyStep::CompactMonthly
                        } else {
                            NightlyStep::Consolidate
                        };
                    }
                }
                NightlyStep::Consolidate => {
                    let (merged, units) = self.consolidate(&nsc, run_now)?;
                    st.report.merged.extend(merged);
                    work += units;
                    st.step = NightlyStep::Cluster;
                }
                NightlyStep::Cluster => {
                    let (ids, units) = self.cluster_lessons(&nsc, run_now)?;
                    st.report.clustered.extend(ids);
                    work += units;
                    st.step = NightlyStep::Behaviours;
                }
                NightlyStep::Evict => {
                    let (ids, units) = self.evict_represented(&nsc, run_now)?;
                    st.report.evicted.extend(ids);
                    work += units;
                    st.step = NightlyStep::Outcomes;
                }
                NightlyStep::Behaviours | NightlyStep::Conditions => {
                    let limit = (budget - work).clamp(1, 4096) as usize;
                    let (n, last) = self.feed(
                        &nsc,
                        run_now,
                        &mut st.detector,
                        &mut st.reverse,
                        st.cursor,
                        limit,
                    )?;
                    work += n as u64;
                    st.report.signals_read += n as u64;
                    if n < limit {
                        st.cursor = None;
                        if st.step == NightlyStep::Behaviours {
                            st.detector.start_pass2();
                            st.step = NightlyStep::Conditions;
                        } else {
                            st.step = NightlyStep::Write;
                        }
                    } else {
                        st.cursor = last;
                    }
                }
                NightlyStep::Write => {
                    let r = self.write_found(ns, &st.detector, &st.reverse, run_now)?;
                    work += r.found as u64 + 1;
                    st.report.inserted.extend(r.inserted);
                    st.report.updated.extend(r.updated);
                    st.detector = Detector::new();
                    st.step = NightlyStep::Promote;
                }
                NightlyStep::Promote => {
                    let p = self.promote(ns, run_now)?;
                    work += 1 + p.len() as u64;
                    for p in p {
                        if p.merged_into.is_some() {
                            st.report.merged_rules.push(p.rule);
                        } else {
                            st.report.promoted.push(p.rule);
                        }
                        st.report.merged_rules.extend(p.absorbed);
                    }
                    st.step = NightlyStep::Evict;
                }
                NightlyStep::Outcomes => {
                    let (episodes, rules) = self.apply_outcomes(ns, run_now)?;
                    work += 1 + (episodes.len() + rules.len()) as u64;
                    st.report.harmful_episodes = episodes;
                    st.report.demoted_rules.extend(rules);
                    st.step = NightlyStep::Erase;
                }
                NightlyStep::Erase => {
                    let receipts = self.run_erasure_requests(ns, run_now)?;
                    work += 1 + receipts.len() as u64;
                    st.report.erasures.extend(receipts);
                    st.step = NightlyStep::Done;
                }
                NightlyStep::Done => {}
            }
        }
        let mut report = st.report.clone();
        report.work = work;
        report.done = st.step == NightlyStep::Done;
        report.next = step_name(st.step);
        let mut batch = Batch::new();
        let mut chunks = 0u32;
        if !report.done {
            let bytes =
                postcard::to_allocvec(&st).map_err(|e| Error::InvalidInput(e.to_string()))?;
            for (i, c) in bytes.chunks(self.config.snapshot_chunk.max(1024)).enumerate() {
                batch.put(chunk_key(&nsc, i as u32), seal(CHUNK_KIND, c));
                chunks = i as u32 + 1;
            }
            let mut w = Writer::new();
            w.u32(chunks).u64(bytes.len() as u64);
            batch.put(head_key(&nsc), seal(HEAD_KIND, &w.finish()));
        } else {
            if resumed {
                batch.delete(head_key(&nsc));
            }
            self.log_report(&nsc, &report, &mut batch)?;
        }
        for i in chunks..old_chunks {
            batch.delete(chunk_key(&nsc, i));
        }
        if !batch.is_empty() {
            self.store.write(&batch)?;
        }
        Ok(report)
    }

    /// Adds a finished run's report to the log, dropping the oldest beyond [`LOG_KEEP`].
    fn log_report(&self, ns: &Namespace, report: &Nightly, batch: &mut Batch) -> Result<()> {
        let prefix = ns.key(Table::Learning, b"log/");
        let mut keys = Vec::new();
        crate::store::scan::scan_all(&self.store, &prefix, None, |k, _| {
            keys.push(k.to_vec());
            Ok(())
        })?;
        let mut key = prefix.clone();
        key.extend_from_slice(&report.now.to_be_bytes());
        if !keys.contains(&key) {
            keys.push(key.clone());
        }
        keys.sort();
        for old in keys.iter().take(keys.len().saturating_sub(LOG_KEEP)) {
            batch.delete(old.clone());
        }
        // Work units depend on how the run was cut into calls; the log keeps what the run did.
        let report = Nightly { work: 0, ..report.clone() };
        let json = serde_json::to_vec(&report).map_err(|e| Error::InvalidInput(e.to_string()))?;
        batch.put(key, json);
        Ok(())
    }

    /// The reports of the last finished nightly runs of `ns`, oldest first.
    pub fn nightly_log(&self, ns: &str) -> Result<Vec<Nightly>> {
        let ns = Namespace::new(ns)?;
        let mut out = Vec::new();
        crate::store::scan::scan_all(
            &self.store,
            &ns.key(Table::Learning, b"log/"),
            None,
            |_, v| {
                out.push(serde_json::from_slice(v).map_err(|e| Error::Corrupt {
                    what: "nightly log".into(),
                    detail: e.to_string(),
                })?);
                Ok(())
            },
        )?;
        Ok(out)
    }

    /// Merges open observations with the same pattern, or of the same agent and behaviour
    /// whose embeddings are near-duplicates, into the best-supported one; returns the merged
    /// ids and the work units spent.
    fn consolidate(&mut self, ns: &Namespace, now: i64) -> Result<(Vec<u64>, u64)> {
        let mut obs = load_observations(&self.store, ns)?;
        obs.retain(|o| o.status == ObservationStatus::Open);
        let mut units = obs.len() as u64;
        obs.sort_by(|a, b| {
            (b.confidence(), b.occurrences, b.rule.is_some())
                .cmp(&(a.confidence(), a.occurrences, a.rule.is_some()))
                .then(a.id.cmp(&b.id))
        });
        let mut vectors = Vec::with_capacity(obs.len());
        for o in &obs {
            let v = self.store.get(&ns.key(Table::ObservationVector, &o.id.to_be_bytes()))?;
            vectors.push(match v {
                Some(b) => Some(decode_vector(&b)?.1),
                None => None,
            });
        }
        let behaviour = |p: &str| Pattern::parse(p).map(|p| (p.agent, p.behaviour.key()));
        let mut merged = Vec::new();
        for i in 0..obs.len() {
            if merged.contains(&obs[i].id) {
                continue;
            }
            for j in i + 1..obs.len() {
                if merged.contains(&obs[j].id) || obs[j].rule.is_some() {
                    continue;
                }
                let same = obs[i].pattern == obs[j].pattern
                    || (behaviour(&obs[i].pattern) == behaviour(&obs[j].pattern)
                        && matches!((&vectors[i], &vectors[j]), (Some(a), Some(b))
                            if a.len() == b.len()
                                && cosine(a, b) >= self.config.learning.duplicate_cosine));
                if !same {
                    continue;
                }
                let mut m = obs[j].clone();
                m.status = ObservationStatus::Merged;
                m.merged_into = obs[i].id;
                m.updated_at = now;
                let mut batch = Batch::new();
                batch.put(ns.key(Table::Observation, &m.id.to_be_bytes()), m.encode());
                batch.delete(ns.key(Table::ObservationVector, &m.id.to_be_bytes()));
                self.store.write(&batch)?;
                units += 1;
                merged.push(m.id);
            }
        }
        Ok((merged, units))
    }
}
