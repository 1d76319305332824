//! Bulk imports of JSON Lines, all or nothing: `ingest` (episodes) and `signals`.
//!
//! Every line is parsed and checked, every episode embedded, before anything is written; then
//! the whole import is one atomic batch. An error names its line, and nothing is stored.
//!
//! A line's identity is its `id` field when given (a string or a number), else the line's
//! own text (trimmed). The batch records each identity with the record it became, so running
//! the same import again, or one that overlaps it, stores no duplicates: a line already
//! imported (or repeated within the file) is reported as a duplicate with its record's id.
//!
//! Byte form of an identity record: key `u/<ns>/i/<kind><hash>`, where `kind` is `e`
//! (episode) or `g` (signal) and `hash` the first 16 bytes of
//! SHA-256(`kind` `"id\0"` id | `kind` `"line\0"` line); value: the record id, u64
//! big-endian. Erasing the record erases its identity (`engine::privacy::erase`).

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Engine, Staged};
use crate::embed::passages::TextVectors;
use crate::error::{Error, Result};
use crate::record::json::episode_from_json;
use crate::record::Origin;
use crate::store::{Batch, KvStore, Namespace, Table};

/// The kind byte of an episode line's identity.
pub(crate) const EPISODE_LINE: u8 = b'e';
/// The kind byte of a signal line's identity.
pub(crate) const SIGNAL_LINE: u8 = b'g';

/// How far in the future an episode may be dated (1 day): clocks disagree, calendars do not.
pub const MAX_FUTURE_MS: i64 = 24 * 3600 * 1000;

/// How an [`Engine::ingest_jsonl`] is run.
#[derive(Debug, Clone, Copy)]
pub struct IngestOptions {
    /// The most trusted origin a line may claim (its `origin`, or what its `source` names).
    /// A file is untrusted unless its caller vouches for it: the default is `unknown`, and a
    /// line claiming `user` or `admin` beyond this is refused.
    pub origin: Origin,
    /// Now (ms): an episode dated more than [`MAX_FUTURE_MS`] after it is refused.
    pub now: i64,
}

/// What an import stored (its JSON shape, with line numbers as objects, is `Json::ingest`'s).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ingested {
    /// The new episodes' ids, in line order.
    pub stored: Vec<u64>,
    /// Lines the write policy discarded: (line number, why).
    pub discarded: Vec<(usize, String)>,
    /// Lines imported before (or earlier in the file): (line number, their episode's id).
    pub duplicates: Vec<(usize, u64)>,
}

/// What a signal import stored.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ImportedSignals {
    /// Each line's signal id, in line order (a duplicate's is the signal stored before).
    pub ids: Vec<u64>,
    /// How many lines were duplicates.
    pub duplicates: usize,
}

/// The non-blank lines of `jsonl` with their 1-based numbers; a UTF-8 byte order mark before
/// the first is skipped.
fn lines(jsonl: &str) -> impl Iterator<Item = (usize, &str)> {
    jsonl
        .trim_start_matches('\u{feff}')
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
}

/// Prefixes an input error with its line.
fn at_line(n: usize, e: Error) -> Error {
    match e {
        Error::InvalidInput(m) => Error::InvalidInput(format!("line {n}: {m}")),
        other => other,
    }
}

/// The identity key of a line (module docs).
pub(crate) fn identity_key(ns: &Namespace, kind: u8, v: &Value, line: &str) -> Result<Vec<u8>> {
    let mut h = Sha256::new();
    h.update([kind]);
    match v.get("id") {
        None | Some(Value::Null) => {
            h.update(b"line\0");
            h.update(line.trim().as_bytes());
        }
        Some(Value::String(s)) if !s.is_empty() => {
            h.update(b"id\0");
            h.update(s.as_bytes());
        }
        Some(Value::Number(n)) => {
            h.update(b"id\0");
            h.update(n.to_string().as_bytes());
        }
        Some(other) => {
            return Err(Error::InvalidInput(format!(
                "\"id\" must be a non-empty string or a number (the line's identity), not {other}"
            )))
        }
    }
    let mut id = vec![kind];
    id.extend_from_slice(&h.finalize()[..16]);
    Ok(ns.key(Table::Imported, &id))
}

/// The record an identity key points at.
pub(crate) fn decode_identity(value: &[u8]) -> Result<u64> {
    value.try_into().map(u64::from_be_bytes).map_err(|_| Error::Corrupt {
        what: "imported-line record".into(),
        detail: format!("{} bytes, not 8", value.len()),
    })
}

/// The identities an import is adding, by key (ordered, so the batch is the same every run).
type Identities = std::collections::BTreeMap<Vec<u8>, u64>;

/// The record stored before under `key`: in the store, or earlier in this import.
fn seen(store: &impl KvStore, batch: &Identities, key: &[u8]) -> Result<Option<u64>> {
    if let Some(id) = batch.get(key) {
        return Ok(Some(*id));
    }
    store.get(key)?.map(|v| decode_identity(&v)).transpose()
}

/// Checks a line's claimed origin against what the import allows.
fn check_origin(e: &crate::record::Episode, allowed: Origin) -> Result<()> {
    let claimed = Origin::of_episode_source(&e.source);
    if claimed.trusted() && claimed != allowed && allowed != Origin::Admin {
        return Err(Error::InvalidInput(format!(
            "it claims origin {claimed} (source {:?}), which this import was not given: a \
             file's lines are untrusted unless the import vouches for them (origin {claimed})",
            e.source
        )));
    }
    Ok(())
}

impl<S: KvStore> Engine<S> {
    /// Stores each line of `jsonl` as an episode (`record::json` has the fields), all or
    /// nothing (module docs); returns what was stored, discarded and already there.
    pub fn ingest_jsonl(
        &mut self,
        ns: &str,
        jsonl: &str,
        options: &IngestOptions,
    ) -> Result<Ingested> {
        self.ingest_jsonl_with(ns, jsonl, options, None, &mut |_, _| {})
    }

    /// [`Engine::ingest_jsonl`] with the host's vectors, one per non-blank line in order (the
    /// attached embedder makes them otherwise), calling `progress(done, total)` as episodes are
    /// embedded.
    pub fn ingest_jsonl_with(
        &mut self,
        ns: &str,
        jsonl: &str,
        options: &IngestOptions,
        vectors: Option<&[Vec<f32>]>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Ingested> {
        let nsc = Namespace::new(ns)?;
        if let Some(v) = vectors {
            let n = lines(jsonl).count();
            if v.len() != n {
                return Err(Error::InvalidInput(format!(
                    "{} vectors for {n} lines: give one per non-blank line, in order",
                    v.len()
                )));
            }
        }
        // Loading first finishes a pending erasure's vacuum and gives the next episode id.
        let first = self.space(&nsc)?.next_id;
        let mut report = Ingested::default();
        let mut identities = Identities::new();
        let mut kept: Vec<(crate::record::Episode, Option<TextVectors>)> = Vec::new();
        for (i, (n, line)) in lines(jsonl).enumerate() {
            let v: Value = line
                .parse()
                .map_err(|e| Error::InvalidInput(format!("line {n}: not JSON: {e}")))?;
            let key = identity_key(&nsc, EPISODE_LINE, &v, line).map_err(|e| at_line(n, e))?;
            let e = episode_from_json(&v).map_err(|e| at_line(n, e))?;
            check_origin(&e, options.origin).map_err(|e| at_line(n, e))?;
            if e.created_at > options.now.saturating_add(MAX_FUTURE_MS) {
                return Err(at_line(n, future(e.created_at, options.now)));
            }
            if let Some(id) = seen(&self.store, &identities, &key)? {
                report.duplicates.push((n, id));
                continue;
            }
            let given = vectors.map(|v| TextVectors::single(v[i].clone()));
            match self.stage(e, given).map_err(|e| at_line(n, e))? {
                Staged::Discarded(reason) => report.discarded.push((n, reason)),
                Staged::Kept { episode, given, .. } => {
                    identities.insert(key, first + kept.len() as u64);
                    kept.push((*episode, given));
                }
            }
        }
        let missing: Vec<usize> = (0..kept.len()).filter(|&i| kept[i].1.is_none()).collect();
        if !missing.is_empty() && self.embedder.is_none() {
            return Err(Error::InvalidInput(
                "ingest needs an embedder (load a model) or the host's vectors".into(),
            ));
        }
        for (done, chunk) in missing.chunks(32).enumerate() {
            let texts: Vec<&str> = chunk.iter().map(|&i| kept[i].0.text.as_str()).collect();
            let made = self.embed_passages(&texts)?;
            for (&i, v) in chunk.iter().zip(made) {
                kept[i].1 = Some(v);
            }
            progress((done * 32 + chunk.len()).min(missing.len()), missing.len());
        }
        let episodes = kept.into_iter().filter_map(|(e, v)| v.map(|v| (e, v))).collect::<Vec<_>>();
        let mut batch = Batch::new();
        for (key, id) in identities {
            batch.put(key, id.to_be_bytes().to_vec());
        }
        report.stored = self.store_episodes(&nsc, episodes, batch)?;
        Ok(report)
    }

    /// Checks every signal line of `jsonl` first, then stores them all in one atomic batch
    /// (module docs); a bad one is an error naming its line, and then nothing is stored.
    pub fn signals_jsonl(&mut self, ns: &str, jsonl: &str) -> Result<ImportedSignals> {
        let nsc = Namespace::new(ns)?;
        let keep = self.config.learning.keep_signal_texts;
        let mut identities = Identities::new();
        let mut out = ImportedSignals::default();
        let mut batch = Batch::new();
        let mut taken = std::collections::HashSet::new();
        for (n, line) in lines(jsonl) {
            let v: Value = line
                .parse()
                .map_err(|e| Error::InvalidInput(format!("line {n}: not JSON: {e}")))?;
            let key = identity_key(&nsc, SIGNAL_LINE, &v, line).map_err(|e| at_line(n, e))?;
            let mut s = signal_from_json(&v, keep).map_err(|e| at_line(n, e))?;
            if let Some(id) = seen(&self.store, &identities, &key)? {
                out.ids.push(id);
                out.duplicates += 1;
                continue;
            }
            s.id = super::learning::signals::free_id_besides(&self.store, &nsc, s.ts, &taken)
                .map_err(|e| at_line(n, e))?;
            taken.insert(s.id);
            batch.put(nsc.key(Table::Signal, &s.id.to_be_bytes()), s.encode());
            identities.insert(key, s.id);
            out.ids.push(s.id);
        }
        if taken.is_empty() {
            return Ok(out);
        }
        for (key, id) in identities {
            batch.put(key, id.to_be_bytes().to_vec());
        }
        self.ensure_namespace(&nsc, &mut batch)?;
        self.store.write(&batch)?;
        Ok(out)
    }
}

use crate::learn::input::signal_from_json;

/// The error for an episode dated too far ahead.
pub(crate) fn future(at: i64, now: i64) -> Error {
    Error::InvalidInput(format!(
        "the episode is dated {} ms after now ({now} ms), more than a day ahead: check its \
         time (and its zone), or pass the time it happened as now",
        at - now
    ))
}
