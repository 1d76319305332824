//! `mnemo bench`: ingest JSONL items as episodes, answer JSONL queries, write ranked ids.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use mnemo::embed::passages::{self, Passage, TextVectors};
use mnemo::engine::WritePolicy;
use mnemo::engine::{Formula, Scoring};
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
    let bar = crate::progress::bar(lines.len() as u64, &format!("{what} embedded"));
    for chunk in lines.chunks(16) {
        let texts: Vec<&str> = chunk.iter().map(|l| l.text.as_str()).collect();
        out.extend(e.embed(&texts, role).map_err(|e| e.to_string())?.into_iter().map(|x| x.vector));
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    eprintln!("  embedded {} {what} in {:.0}s", out.len(), t.elapsed().as_secs_f64());
    Ok(out)
}

/// The cache file in `dir` for the texts of `lines` embedded as `what` (model, role or
/// layout): named by the first 16 bytes of their SHA-256, in hex.
fn cache_file(dir: &std::path::Path, what: &str, lines: &[Line], ext: &str) -> std::path::PathBuf {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(what);
    for l in lines {
        h.update(l.text.as_bytes());
        h.update([0]);
    }
    let name: String = h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{name}.{ext}"))
}

/// [`embed_all`] through a cache directory: one file per (model, role, texts), named by their
/// SHA-256, holding the vectors as little-endian f32s.
fn cached(
    dir: Option<&std::path::Path>,
    e: &mut dyn Embedder,
    lines: &[Line],
    role: Role,
    what: &str,
) -> Result<Vec<Vec<f32>>, String> {
    let Some(dir) = dir else { return embed_all(e, lines, role, what) };
    let path = cache_file(dir, &format!("{}\0{role:?}\0", e.model_id()), lines, "f32");
    let dim = e.dim();
    if let Ok(bytes) = std::fs::read(&path) {
        if bytes.len() == lines.len() * dim * 4 {
            eprintln!("  {what}: vectors from {}", path.display());
            let floats: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            return Ok(floats.chunks(dim).map(<[f32]>::to_vec).collect());
        }
    }
    let vecs = embed_all(e, lines, role, what)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bytes: Vec<u8> = vecs.iter().flatten().flat_map(|f| f.to_le_bytes()).collect();
    std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(vecs)
}

/// The items' vectors, long texts as passages ([`mnemo::embed::passages`]), through the cache
/// directory like [`cached`]: per item `count:u32` (0 for a text read whole), the whole vector,
/// then per passage `start:u32 end:u32` and its vector, little-endian.
fn cached_passages(
    dir: Option<&std::path::Path>,
    e: &mut dyn Embedder,
    lines: &[Line],
) -> Result<Vec<TextVectors>, String> {
    let embed = |e: &mut dyn Embedder| -> Result<Vec<TextVectors>, String> {
        let t = Instant::now();
        let bar = crate::progress::bar(lines.len() as u64, "items embedded");
        let mut out = Vec::with_capacity(lines.len());
        for chunk in lines.chunks(16) {
            let texts: Vec<&str> = chunk.iter().map(|l| l.text.as_str()).collect();
            out.extend(passages::embed_texts(e, &texts).map_err(|e| e.to_string())?);
            bar.inc(chunk.len() as u64);
        }
        bar.finish_and_clear();
        let n: usize = out.iter().map(|v| v.passages.len()).sum();
        eprintln!(
            "  embedded {} items ({n} passages) in {:.0}s",
            out.len(),
            t.elapsed().as_secs_f64()
        );
        Ok(out)
    };
    // When the model reads every text whole (the tokenizer says so), passages change nothing:
    // the plain vector cache serves.
    if lines.iter().all(|l| e.truncates(&l.text, Role::Passage) == Some(false)) {
        let v = cached(dir, e, lines, Role::Passage, "items")?;
        return Ok(v.into_iter().map(TextVectors::single).collect());
    }
    let Some(dir) = dir else { return embed(e) };
    let path = cache_file(dir, &format!("{}\0passages/1\0", e.model_id()), lines, "passages");
    let dim = e.dim();
    if let Ok(bytes) = std::fs::read(&path) {
        if let Some(v) = read_passages(&bytes, dim, lines.len()) {
            eprintln!("  items: vectors from {}", path.display());
            return Ok(v);
        }
    }
    let out = embed(e)?;
    let mut bytes = Vec::new();
    for v in &out {
        bytes.extend((v.passages.len() as u32).to_le_bytes());
        bytes.extend(v.whole.iter().flat_map(|f| f.to_le_bytes()));
        for p in &v.passages {
            bytes.extend(p.start.to_le_bytes());
            bytes.extend(p.end.to_le_bytes());
            bytes.extend(p.vector.iter().flat_map(|f| f.to_le_bytes()));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(out)
}

/// Reads [`cached_passages`]' file; `None` when it does not hold `n` items of `dim`.
fn read_passages(bytes: &[u8], dim: usize, n: usize) -> Option<Vec<TextVectors>> {
    let mut at = 0;
    let u32_at = |at: &mut usize| -> Option<u32> {
        let b = bytes.get(*at..*at + 4)?;
        *at += 4;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let floats = |at: &mut usize| -> Option<Vec<f32>> {
        let b = bytes.get(*at..*at + 4 * dim)?;
        *at += 4 * dim;
        Some(b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    };
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let count = u32_at(&mut at)?;
        let whole = floats(&mut at)?;
        let mut passages = Vec::new();
        for _ in 0..count {
            let (start, end) = (u32_at(&mut at)?, u32_at(&mut at)?);
            passages.push(Passage { start, end, vector: floats(&mut at)? });
        }
        out.push(TextVectors { whole, passages });
    }
    (at == bytes.len()).then_some(out)
}

pub fn run(g: &Globals, a: &args::Bench) -> Result<(), String> {
    let items = read_jsonl(&a.items, "id")?;
    let queries = read_jsonl(&a.queries, "qid")?;
    let k = a.k as usize;
    eprintln!("mnemo bench: {} items, {} queries, k={k}", items.len(), queries.len());
    let mut embedder = crate::load(&g.model_dir())?;
    let cache = a.vector_cache.as_deref();
    let item_vecs = if a.truncate {
        cached(cache, &mut embedder, &items, Role::Passage, "items")?
            .into_iter()
            .map(TextVectors::single)
            .collect()
    } else {
        cached_passages(cache, &mut embedder, &items)?
    };
    let query_vecs = cached(cache, &mut embedder, &queries, Role::Query, "queries")?;
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
    engine.maintain(true).map_err(|e| e.to_string())?;
    eprintln!("  ingested in {:.2}s (embedding excluded)", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let formulas: Vec<Formula> = a
        .formula
        .iter()
        .map(|f| {
            Formula::parse(f.trim()).ok_or_else(|| {
                format!("unknown formula {f:?}: use balanced, seed, weighted, lexical or dense")
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
