//! Behaviour signals in the store: one atomic batch each, keyed by time
//! (`record::signal`).

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::learn::input::signal_from_json;
use crate::record::outcome::Reporter;
use crate::record::Signal;
use crate::store::{Batch, KvStore, Namespace, Table};

/// The first free id at time `ts` in `table` (`ts << 10 | seq`, seq < 1024).
pub(crate) fn free_id(store: &impl KvStore, ns: &Namespace, table: Table, ts: i64) -> Result<u64> {
    free_id_in(store, ns, table, ts, &Default::default())
}

/// The first free signal id at time `ts` that is not `taken` (ids of one batch being built).
pub(crate) fn free_id_besides(
    store: &impl KvStore,
    ns: &Namespace,
    ts: i64,
    taken: &std::collections::HashSet<u64>,
) -> Result<u64> {
    free_id_in(store, ns, Table::Signal, ts, taken)
}

fn free_id_in(
    store: &impl KvStore,
    ns: &Namespace,
    table: Table,
    ts: i64,
    taken: &std::collections::HashSet<u64>,
) -> Result<u64> {
    if !(0..(1i64 << 43)).contains(&ts) {
        return Err(Error::InvalidInput(format!("time {ts} ms is outside 1970–2248")));
    }
    let base = (ts as u64) << 10;
    for seq in 0..1024 {
        let id = base | seq;
        if !taken.contains(&id) && store.get(&ns.key(table, &id.to_be_bytes()))?.is_none() {
            return Ok(id);
        }
    }
    Err(Error::InvalidInput(format!(
        "more than 1024 records at {ts} ms: space them out (nothing was stored)"
    )))
}

impl<S: KvStore> Engine<S> {
    /// Stores a behaviour signal (its id is assigned here); one atomic batch.
    pub fn signal(&mut self, ns: &str, mut signal: Signal) -> Result<u64> {
        let nsc = Namespace::new(ns)?;
        signal.id = free_id(&self.store, &nsc, Table::Signal, signal.ts)?;
        let mut batch = Batch::new();
        batch.put(nsc.key(Table::Signal, &signal.id.to_be_bytes()), signal.encode());
        self.ensure_namespace(&nsc, &mut batch)?;
        self.store.write(&batch)?;
        Ok(signal.id)
    }

    /// [`Engine::signal`] from its JSON object (`learn::input`); returns `{id}`.
    pub fn signal_json(&mut self, ns: &str, json: &str) -> Result<String> {
        self.signal_json_from(ns, json, Reporter::Host)
    }

    /// [`Engine::signal_json`] through a channel: the host's, or an agent's (MCP), whose
    /// signal is stored with source `agent` whatever it claims and may make an observation but
    /// no rule without the user's confirmation (`learning::promotion`).
    pub fn signal_json_from(&mut self, ns: &str, json: &str, reporter: Reporter) -> Result<String> {
        let v: serde_json::Value =
            json.parse().map_err(|e| Error::InvalidInput(format!("signal is not JSON: {e}")))?;
        let mut s = signal_from_json(&v, self.config.learning.keep_signal_texts)?;
        if reporter == Reporter::Agent {
            s.source = "agent".into();
            s.reporter = Reporter::Agent;
        }
        let id = self.signal(ns, s)?;
        Ok(serde_json::json!({ "id": id }).to_string())
    }

    /// Signals of `ns` with `from <= ts < to`, oldest first.
    pub fn signals(&self, ns: &str, from: i64, to: i64) -> Result<Vec<Signal>> {
        let nsc = Namespace::new(ns)?;
        let mut out = Vec::new();
        scan_signals(&self.store, &nsc, from, to, None, usize::MAX, |s| {
            out.push(s);
            Ok(())
        })?;
        Ok(out)
    }

    /// One signal by id.
    pub fn signal_by_id(&self, ns: &str, id: u64) -> Result<Option<Signal>> {
        let nsc = Namespace::new(ns)?;
        match self.store.get(&nsc.key(Table::Signal, &id.to_be_bytes()))? {
            Some(b) => Ok(Some(Signal::decode(&b)?)),
            None => Ok(None),
        }
    }
}

/// Reads signals with `from <= ts < to`, starting after id `after` when given, at most
/// `limit`; returns how many were read and the last id read.
pub(crate) fn scan_signals(
    store: &impl KvStore,
    ns: &Namespace,
    from: i64,
    to: i64,
    after: Option<u64>,
    limit: usize,
    mut each: impl FnMut(Signal) -> Result<()>,
) -> Result<(usize, Option<u64>)> {
    let prefix = ns.table_prefix(Table::Signal);
    let key = |id: u64| {
        let mut k = prefix.clone();
        k.extend_from_slice(&id.to_be_bytes());
        k
    };
    let mut cursor = match after {
        Some(a) => Some(key(a)),
        None if from > 0 => Some(key(((from as u64) << 10) - 1)),
        None => None,
    };
    let end = if to >= (1i64 << 43) { u64::MAX } else { (to.max(0) as u64) << 10 };
    let (mut n, mut last) = (0usize, None);
    while n < limit {
        let page = (limit - n).min(256);
        let entries = store.scan(&prefix, cursor.as_deref(), page)?;
        for (k, v) in &entries {
            crate::store::scan::check_scanned(k, &prefix)?;
            let id = k[prefix.len()..].try_into().map(u64::from_be_bytes).map_err(|_| {
                Error::Corrupt {
                    what: "signal key".into(),
                    detail: format!("{} id bytes", k.len() - prefix.len()),
                }
            })?;
            if id >= end {
                return Ok((n, last));
            }
            // An unreadable record is left out (and listed by `quarantined`).
            if let Ok(s) = Signal::decode(v) {
                each(s)?;
            }
            n += 1;
            last = Some(id);
        }
        match entries.last() {
            Some((k, _)) if entries.len() == page => cursor = Some(k.clone()),
            _ => break,
        }
    }
    Ok((n, last))
}
