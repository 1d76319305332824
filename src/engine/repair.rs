//! Repair: what a namespace could not read on open, and re-embedding it under a new model.

use super::namespace::Quarantined;
use super::Engine;
use crate::error::{Error, Result};
use crate::record::episode::encode_vectors;
use crate::record::{Episode, Fact, Observation, Rule, Signal, Triple};
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};

/// The tables read as lists (facts, rules, signals…), where an unreadable record is left out
/// rather than failing the list: `quarantined` names each.
const LISTED: [Table; 7] = [
    Table::Fact,
    Table::FactHistory,
    Table::Triple,
    Table::TripleHistory,
    Table::Rule,
    Table::Signal,
    Table::Observation,
];

/// Whether a record of `table` decodes.
fn readable(table: Table, v: &[u8]) -> Result<()> {
    match table {
        Table::Fact | Table::FactHistory => Fact::decode(v).map(drop),
        Table::Triple | Table::TripleHistory => Triple::decode(v).map(drop),
        Table::Rule => Rule::decode(v).map(drop),
        Table::Signal => Signal::decode(v).map(drop),
        Table::Observation => Observation::decode(v).map(drop),
        _ => Ok(()),
    }
}

/// Episodes embedded per call to the embedder while re-embedding.
const EMBED_BATCH: usize = 32;

impl<S: KvStore> Engine<S> {
    /// The records of namespace `ns` that could not be read when it was opened (loading it
    /// first). They stay in the store, untouched; the rest of the namespace works without them.
    pub fn quarantined(&mut self, ns: &str) -> Result<Vec<Quarantined>> {
        let ns = Namespace::new(ns)?;
        let mut list = self.space(&ns)?.quarantined.clone();
        for table in LISTED {
            scan_all(&self.store, &ns.table_prefix(table), None, |k, v| {
                if let Err(e) = readable(table, v) {
                    list.push(Quarantined {
                        key: String::from_utf8_lossy(k).into_owned(),
                        episode: 0,
                        reason: format!(
                            "{} record unreadable: {e}; left out of every answer and list, \
                             kept as it is",
                            table.name()
                        ),
                    });
                }
                Ok(())
            })?;
        }
        // The backend's own damage belongs to no namespace and no known episode: every
        // namespace reports it (episode 0: unknown).
        if let Some(why) = &self.vacuum_failed {
            list.push(Quarantined {
                key: "store".into(),
                episode: 0,
                reason: format!(
                    "an erasure's vacuum is pending (erased bytes may remain in the backend's \
                     files until it runs; it is retried at every open): {why}"
                ),
            });
        }
        list.extend(self.store.damage().into_iter().map(|reason| Quarantined {
            key: "store".into(),
            episode: 0,
            reason,
        }));
        Ok(list)
    }

    /// Re-embeds every readable episode of `ns` with the attached embedder and makes its model
    /// the namespace's: the way forward after a model change (or from host vectors stored
    /// without a model name), which recall and remember otherwise refuse with MODEL_MISMATCH.
    /// One atomic batch: the new vectors, the namespace record, and the removal of the
    /// snapshot (its vectors are the old model's; the next open rebuilds). Returns how many
    /// episodes were embedded.
    pub fn reembed(&mut self, ns: &str) -> Result<usize> {
        let nsc = Namespace::new(ns)?;
        if self.embedder.is_none() {
            return Err(Error::InvalidInput(
                "reembed needs an embedder: load the model the namespace should use".into(),
            ));
        }
        let next_id = self.space(&nsc)?.next_id;
        let mut episodes: Vec<Episode> = Vec::new();
        scan_all(&self.store, &nsc.table_prefix(Table::Episode), None, |_, v| {
            episodes.extend(Episode::decode(v).ok()); // quarantined ones stay as they are
            Ok(())
        })?;
        let model = self.config.vector_model.clone();
        let mut batch = Batch::new();
        for chunk in episodes.chunks(EMBED_BATCH) {
            let texts: Vec<&str> = chunk.iter().map(|e| e.text.as_str()).collect();
            let vectors = self.embed_passages(&texts)?;
            for (e, v) in chunk.iter().zip(vectors) {
                batch.put(nsc.key(Table::Vector, &e.id.to_be_bytes()), encode_vectors(&model, &v));
            }
        }
        batch.put(
            nsc.key(Table::Meta, b"space"),
            super::persist::meta::encode_meta(next_id, &model),
        );
        scan_all(&self.store, &nsc.table_prefix(Table::Snapshot), None, |k, _| {
            batch.delete(k.to_vec());
            Ok(())
        })?;
        self.store.write(&batch)?;
        self.namespaces.remove(nsc.as_str());
        Ok(episodes.len())
    }
}
