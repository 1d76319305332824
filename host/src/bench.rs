//! `mnemo-host bench`: the `mnemo bench` workload with the engine in the component. Texts are
//! embedded natively by the host (as `mnemo bench` does: a long one as passages), the vectors
//! passed in, so the two rankings can be compared id for id.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use mnemo::embed::passages;
use mnemo::store::MemoryStore;
use mnemo::{Embedder, Role};
use mnemo_embed::{BertConfig, BertEmbedder};
use mnemo_tool::jsonl::{read_jsonl, Line};
use serde_json::{json, Value};

use crate::Opts;
use mnemo_tool::args;

fn embed(e: &mut BertEmbedder, lines: &[Line], role: Role) -> Result<Vec<Vec<f32>>, String> {
    let mut out = Vec::with_capacity(lines.len());
    for chunk in lines.chunks(16) {
        let texts: Vec<&str> = chunk.iter().map(|l| l.text.as_str()).collect();
        out.extend(e.embed(&texts, role).map_err(|e| e.to_string())?.into_iter().map(|x| x.vector));
    }
    Ok(out)
}

pub fn run(opts: &Opts, a: &args::Bench) -> Result<(), String> {
    if a.vector_cache.is_some() {
        return Err("mnemo-host bench embeds every time: --vector-cache is mnemo bench's".into());
    }
    let k = a.k as usize;
    let items = read_jsonl(&a.items, "id")?;
    let queries = read_jsonl(&a.queries, "qid")?;
    let dir = crate::model_dir(opts);
    let read =
        |f: &str| std::fs::read(dir.join(f)).map_err(|e| format!("{}: {e}", dir.join(f).display()));
    let mut embedder = BertEmbedder::from_bytes(
        &read("model.onnx")?,
        &read("tokenizer.json")?,
        BertConfig::e5("multilingual-e5-small-latin"),
    )
    .map_err(|e| e.to_string())?;
    eprintln!("mnemo-host bench: {} items, {} queries", items.len(), queries.len());
    // Items as `mnemo bench` embeds them: a long text as passages, handed over in the episode.
    let mut item_vecs = Vec::with_capacity(items.len());
    for chunk in items.chunks(16) {
        let texts: Vec<&str> = chunk.iter().map(|l| l.text.as_str()).collect();
        item_vecs.extend(passages::embed_texts(&mut embedder, &texts).map_err(|e| e.to_string())?);
    }
    let query_vecs = embed(&mut embedder, &queries, Role::Query)?;
    let model = embedder.model_id().to_string();
    let t = Instant::now();
    let mut m = crate::open_bare(opts, Box::new(MemoryStore::new()))?;
    eprintln!("  component ready in {:.2}s", t.elapsed().as_secs_f64());
    let options = json!({"vectorModel": model, "dim": embedder.dim(), "keepAll": true, "snapshotAfter": u64::MAX});
    m.call(|g, s| g.call_configure(s, &options.to_string()))?;
    let mut ids: HashMap<(String, u64), String> = HashMap::new();
    let t = Instant::now();
    for (item, v) in items.iter().zip(&item_vecs) {
        let mut e = json!({"text": item.text, "createdAt": item.ts, "refId": item.id});
        if !v.passages.is_empty() {
            let p: Vec<Value> = v
                .passages
                .iter()
                .map(|p| json!({"start": p.start, "end": p.end, "vector": p.vector}))
                .collect();
            e["passages"] = Value::Array(p);
        }
        let r = m.call(|g, s| g.call_remember(s, &item.ns, &e.to_string(), Some(&v.whole)))?;
        let r: Value = serde_json::from_str(&r).map_err(|e| e.to_string())?;
        let id = r["id"].as_u64().ok_or(format!("item {} discarded: {}", item.id, r["reason"]))?;
        ids.insert((item.ns.clone(), id), item.id.clone());
    }
    m.call(|g, s| g.call_maintain(s, true, Some(u64::MAX)))?;
    eprintln!("  ingested in {:.2}s (embedding excluded)", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let mut overrides = serde_json::Map::new();
    for kv in &a.set {
        let (name, value) =
            kv.split_once('=').ok_or_else(|| format!("--set {kv}: use NAME=VALUE"))?;
        let v: f64 =
            value.trim().parse().map_err(|_| format!("--set {kv}: VALUE is not a number"))?;
        overrides.insert(name.trim().to_string(), json!(v));
    }
    for formula in &a.formula {
        let path = a.out_for(formula);
        let out_path = path.display();
        let mut out = std::fs::File::create(&path).map_err(|e| format!("{out_path}: {e}"))?;
        for (q, v) in queries.iter().zip(&query_vecs) {
            let query = json!({"text": q.text, "k": k, "touch": false, "formula": formula,
            "scoring": overrides});
            let ranked: Vec<(String, Value)> =
                match m.call(|g, s| g.call_recall(s, &q.ns, &query.to_string(), q.ts, Some(v))) {
                    Ok(r) => {
                        let r: Value = serde_json::from_str(&r).map_err(|e| e.to_string())?;
                        r["hits"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|h| {
                                let id = ids.get(&(q.ns.clone(), h["episode"]["id"].as_u64()?))?;
                                Some((id.clone(), h["explanation"]["finalScore"].clone()))
                            })
                            .collect()
                    }
                    Err(e) if e.contains("UNKNOWN_NAMESPACE") => Vec::new(),
                    Err(e) => return Err(format!("query {}: {e}", q.id)),
                };
            let names: Vec<&str> = ranked.iter().map(|r| r.0.as_str()).collect();
            let mut line = json!({ "qid": q.id, "ranked": names });
            if a.scores {
                line["scores"] = Value::Array(ranked.into_iter().map(|r| r.1).collect());
            }
            writeln!(out, "{line}").map_err(|e| format!("{out_path}: {e}"))?;
        }
    }
    eprintln!(
        "  answered {} queries in {:.2}s (query embedding excluded)",
        queries.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
