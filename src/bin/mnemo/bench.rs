//! `mnemo bench`: ingest JSONL items as episodes, answer JSONL queries, write ranked ids.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use mnemo::engine::WritePolicy;
use mnemo::record::Episode;
use mnemo::store::MemoryStore;
use mnemo::{Config, Embedder, Engine, Query, Remembered, Role};

use crate::args::{self, Globals};
use mnemo::bench::{read_jsonl, Line};

fn embed_all(
    e: &mut dyn Embedder,
    lines: &[Line],
    role: Role,
    what: &str,
) -> Result<Vec<Vec<f32>>, String> {
    let mut out = Vec::with_capacity(lines.len());
    let t = Instant::now();
    for chunk in lines.chunks(16) {
        let texts: Vec<&str> = chunk.iter().map(|l| l.text.as_str()).collect();
        out.extend(e.embed(&texts, role).map_err(|e| e.to_string())?.into_iter().map(|x| x.vector));
        if out.len() % 1024 < 16 {
            eprintln!(
                "  embedded {}/{} {what} ({:.0}s)",
                out.len(),
                lines.len(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    Ok(out)
}

pub fn run(g: &Globals, a: &args::Bench) -> Result<(), String> {
    let items = read_jsonl(&a.items, "id")?;
    let queries = read_jsonl(&a.queries, "qid")?;
    let out_path = a.out.display();
    let k = a.k as usize;
    eprintln!("mnemo bench: {} items, {} queries, k={k}", items.len(), queries.len());
    let mut embedder = crate::load(&g.model_dir())?;
    let item_vecs = embed_all(&mut embedder, &items, Role::Passage, "items")?;
    let query_vecs = embed_all(&mut embedder, &queries, Role::Query, "queries")?;
    let config = Config {
        vector_model: embedder.model_id().to_string(),
        dim: embedder.dim(),
        // Every item is ingested: the benchmark scores retrieval, not the write policy.
        policy: WritePolicy { min_chars: 1, discard_kinds: Vec::new(), ..WritePolicy::default() },
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
        match engine.remember(&item.ns, e, Some(v)).map_err(|e| format!("item {}: {e}", item.id))? {
            Remembered::Stored { id, .. } => ids.insert((item.ns.clone(), id), item.id.clone()),
            Remembered::Discarded { reason } => {
                return Err(format!("item {} discarded: {reason}", item.id))
            }
        };
    }
    engine.maintain(true).map_err(|e| e.to_string())?;
    eprintln!("  ingested in {:.2}s (embedding excluded)", t.elapsed().as_secs_f64());
    let mut out = std::fs::File::create(&a.out).map_err(|e| format!("{out_path}: {e}"))?;
    let t = Instant::now();
    for (q, v) in queries.iter().zip(&query_vecs) {
        let mut query = Query::new(q.text.clone(), k);
        query.vector = Some(v.clone());
        query.touch = false;
        let ranked: Vec<&str> = match engine.recall(&q.ns, &query, q.ts) {
            Ok(r) => r
                .hits
                .iter()
                .filter_map(|h| ids.get(&(q.ns.clone(), h.episode.id)).map(String::as_str))
                .collect(),
            Err(e) if e.code() == "UNKNOWN_NAMESPACE" => Vec::new(),
            Err(e) => return Err(format!("query {}: {e}", q.id)),
        };
        let line = serde_json::json!({ "qid": q.id, "ranked": ranked });
        writeln!(out, "{line}").map_err(|e| format!("{out_path}: {e}"))?;
    }
    eprintln!(
        "  answered {} queries in {:.2}s (query embedding excluded)",
        queries.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
