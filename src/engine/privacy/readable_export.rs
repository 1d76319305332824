//! The right of access: everything the engine holds about one user (a namespace), readable.
//!
//! [`Engine::export_json`] decodes every record of the namespace into one JSON document:
//!
//! ```text
//! {format: "mnemo-access/1", namespace, exportedAt,
//!  episodes, facts, factHistory, triples, tripleHistory, rules, signals, observations,
//!  retrievals: [{id, at, episodes, rules, outcome?}], erasureRequests,
//!  derived: {episodeVectors, observationVectors, snapshotChunks},   (counts: derived data)
//!  unreadable: [{key, reason}]}                                        (records that fail to decode)
//! ```
//!
//! Vectors and snapshots are derived from the records listed and are counted, not dumped.
//! Nothing is left out silently: a record that does not decode is listed under `unreadable`.

use serde_json::{json, Value};

use crate::engine::Engine;
use crate::error::Result;
use crate::record::outcome::{decode_outcome, Retrieval};
use crate::record::{Episode, Fact, Observation, Rule, Signal, Triple};
use crate::store::scan::scan_all;
use crate::store::{KvStore, Namespace, Table};

fn to_json<T: serde::Serialize>(r: Result<T>) -> std::result::Result<Value, String> {
    r.map_err(|e| e.to_string()).and_then(|v| serde_json::to_value(v).map_err(|e| e.to_string()))
}

impl<S: KvStore> Engine<S> {
    /// Every record of namespace `ns`, decoded, as one JSON document (module docs).
    pub fn export_json(&self, ns: &str, now: i64) -> Result<String> {
        let nsc = Namespace::new(ns)?;
        let mut sections: Vec<(&str, Vec<Value>)> = [
            "episodes",
            "facts",
            "factHistory",
            "triples",
            "tripleHistory",
            "rules",
            "signals",
            "observations",
            "retrievals",
            "erasureRequests",
        ]
        .into_iter()
        .map(|s| (s, Vec::new()))
        .collect();
        let mut push = |name: &str, v: Value| {
            if let Some(s) = sections.iter_mut().find(|s| s.0 == name) {
                s.1.push(v);
            }
        };
        let (mut episode_vectors, mut observation_vectors, mut snapshot) = (0, 0, 0);
        let mut outcomes = std::collections::HashMap::new();
        let mut unreadable = Vec::new();
        scan_all(&self.store, &nsc.prefix(), None, |k, v| {
            let Some((table, id)) = Table::of_key(&nsc, k) else { return Ok(()) };
            let decoded = match table {
                Table::Episode => to_json(Episode::decode(v)).map(|j| ("episodes", j)),
                Table::Fact => to_json(Fact::decode(v)).map(|j| ("facts", j)),
                Table::FactHistory => to_json(Fact::decode(v)).map(|j| ("factHistory", j)),
                Table::Triple => to_json(Triple::decode(v)).map(|j| ("triples", j)),
                Table::TripleHistory => to_json(Triple::decode(v)).map(|j| ("tripleHistory", j)),
                Table::Rule => to_json(Rule::decode(v)).map(|j| ("rules", j)),
                Table::Signal => to_json(Signal::decode(v)).map(|j| ("signals", j)),
                Table::Observation => to_json(Observation::decode(v)).map(|j| ("observations", j)),
                Table::Retrieval => to_json(Retrieval::decode(v)).map(|mut j| {
                    j["id"] = json!(u64::from_be_bytes(id.try_into().unwrap_or([0; 8])));
                    ("retrievals", j)
                }),
                Table::Outcome => {
                    match decode_outcome(v) {
                        Ok((o, at, reporter)) => {
                            outcomes.insert(
                                id.to_vec(),
                                json!({"outcome": o, "at": at, "reporter": reporter}),
                            );
                        }
                        Err(e) => unreadable.push(json!({"table": table.name(),
                                "key": String::from_utf8_lossy(k), "reason": e.to_string()})),
                    }
                    return Ok(());
                }
                Table::ErasureQueue => serde_json::from_slice(v)
                    .map_err(|e| e.to_string())
                    .map(|j| ("erasureRequests", j)),
                Table::Vector => {
                    episode_vectors += 1;
                    return Ok(());
                }
                Table::ObservationVector => {
                    observation_vectors += 1;
                    return Ok(());
                }
                Table::Snapshot => {
                    snapshot += 1;
                    return Ok(());
                }
                Table::Meta | Table::Learning | Table::Imported => return Ok(()),
            };
            match decoded {
                Ok((name, j)) => push(name, j),
                Err(reason) => unreadable.push(
                    json!({"table": table.name(), "key": String::from_utf8_lossy(k), "reason": reason}),
                ),
            }
            Ok(())
        })?;
        // What the backend could not read of its own files belongs to no known record: it is
        // listed too, so the export says what it could not include.
        for reason in self.store.damage() {
            unreadable.push(json!({"table": "store", "key": null, "reason": reason}));
        }
        let mut doc = json!({
            "format": "mnemo-access/1",
            "namespace": ns,
            "exportedAt": now,
            "derived": {"episodeVectors": episode_vectors,
                "observationVectors": observation_vectors, "snapshotChunks": snapshot},
            "unreadable": unreadable,
        });
        for (name, mut list) in sections {
            if name == "retrievals" {
                for r in &mut list {
                    let id = r["id"].as_u64().unwrap_or(0).to_be_bytes();
                    if let Some(o) = outcomes.get(id.as_slice()) {
                        r["outcome"] = o.clone();
                    }
                }
            }
            doc[name] = Value::Array(list);
        }
        Ok(doc.to_string())
    }
}
