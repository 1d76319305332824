//! `mnemo bench`: ingest JSONL items as episodes, answer JSONL queries, write ranked ids.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use mnemo::embed::passages::TextVectors;
use mnemo::engine::WritePolicy;
use mnemo::engine::{Formula, Scoring};
use mnemo::record::Episode;
use mnemo::store::MemoryStore;
use mnemo::{Config, Embedder, Engine, Query, Remembered, Role};

use crate::args::{self, Globals};
use crate::bench_vectors::Embedders;
use crate::jsonl::read_jsonl;

pub fn run(g: &Globals, a: &args::Bench) -> Result<(), String> {
    let items = read_jsonl(&a.items, "id")?;
    let queries = read_jsonl(&a.queries, "qid")?;
    let k = a.k as usize;
    eprintln!("mnemo bench: {} items, {} queries, k={k}", items.len(), queries.len());
    let mut embedders = Embedders::new(
        &g.model_dir(),
        a.plain_model,
        a.threads as usize,
        a.vector_cache.as_deref(),
    )?;
    let item_vecs = if a.truncate {
        embedders
            .whole(&items, Role::Passage, "items")?
            .into_iter()
            .map(TextVectors::single)
            .collect()
    } else {
        embedders.passages(&items)?
    };
    let query_vecs = embedders.whole(&queries, Role::Query, "queries")?;
    let embedder = embedders.first();
    let config = Config {
        vector_model: embedder.model_id().to_string(),
        dim: embedder.dim(),
        // Every item is ingested: the benchmark scores retrieval, not the write policy.
        // Texts are kept as written (no secret masking), so passages made from them fit.
        policy: WritePolicy {
            min_chars: 1,
            discard_kinds: Vec::new(),
            secrets: mnemo::engine::policy::SecretAction::Keep,
            ..WritePolicy::default()
        },
        // The store is in memory and thrown away: no snapshots.
        snapshot_after: usize::MAX,
        ..Config::default()
    };
    let mut engine = Engine::new(MemoryStore::new(), config);
    let mut ids: HashMap<(String, u64), String> = HashMap::new();
    let t = Instant::now();
    for (item, v) in items.iter().zip(&item_vecs) {
        let mut e = Episode::new(item.text.clone(), item.ts);
        e.ref_id = item.id.clone();
        let stored = engine.remember_passages(&item.ns, e, v.clone());
        match stored.map_err(|e| format!("item {}: {e}", item.id))? {
            Remembered::Stored { id, .. } => ids.insert((item.ns.clone(), id), item.id.clone()),
            Remembered::Discarded { reason } => {
                return Err(format!("item {} discarded: {reason}", item.id))
            }
        };
    }
    engine.maintain(true, None).map_err(|e| e.to_string())?;
    eprintln!("  ingested in {:.2}s (embedding excluded)", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let formulas: Vec<Formula> = a
        .formula
        .iter()
        .map(|f| {
            Formula::parse(f.trim()).ok_or_else(|| {
                format!(
                    "unknown formula {f:?}: use balanced, plain-decay, weighted, lexical or dense"
                )
            })
        })
        .collect::<Result<_, _>>()?;
    for (name, formula) in a.formula.iter().zip(formulas) {
        let path = a.out_for(name);
        let shown = path.display();
        let mut out = std::fs::File::create(&path).map_err(|e| format!("{shown}: {e}"))?;
        let mut scoring = Scoring { formula, ..Scoring::default() };
        for kv in &a.set {
            set(&mut scoring, kv)?;
        }
        for (q, v) in queries.iter().zip(&query_vecs) {
            let mut query = Query::new(q.text.clone(), k);
            query.vector = Some(v.clone());
            query.touch = false;
            query.scoring = Some(scoring.clone());
            let ranked: Vec<(&str, f32)> = match engine.recall(&q.ns, &query, q.ts) {
                Ok(r) => r
                    .hits
                    .iter()
                    .filter_map(|h| {
                        let id = ids.get(&(q.ns.clone(), h.episode.id))?;
                        Some((id.as_str(), h.explanation.final_score))
                    })
                    .collect(),
                Err(e) if e.code() == "UNKNOWN_NAMESPACE" => Vec::new(),
                Err(e) => return Err(format!("query {}: {e}", q.id)),
            };
            let names: Vec<&str> = ranked.iter().map(|r| r.0).collect();
            let mut line = serde_json::json!({ "qid": q.id, "ranked": names });
            if a.scores {
                let scores: Vec<f64> = ranked.iter().map(|r| f64::from(r.1)).collect();
                line["scores"] = serde_json::json!(scores);
            }
            writeln!(out, "{line}").map_err(|e| format!("{shown}: {e}"))?;
        }
    }
    eprintln!(
        "  answered {} queries × {} formulas in {:.2}s (query embedding excluded)",
        queries.len(),
        a.formula.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Applies one `NAME=VALUE` override of `--set`.
fn set(s: &mut Scoring, kv: &str) -> Result<(), String> {
    let (name, value) = kv.split_once('=').ok_or_else(|| format!("--set {kv}: use NAME=VALUE"))?;
    let v: f64 = value.trim().parse().map_err(|_| format!("--set {kv}: VALUE is not a number"))?;
    s.set(name.trim(), v).map_err(|e| format!("--set {kv}: {e}"))
}
