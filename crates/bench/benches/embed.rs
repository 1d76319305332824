//! Embedding benchmark, tract native side. Prints one JSON object (figures, not assertions).
//!
//! `cargo bench --bench embed -- [--model DIR] [--file model.onnx] [--texts FILE] [--iters N]
//! [--buckets] [--hf-tokenizer] [--ingest]`
//!
//! `--only t32_b1` (or t32_b16, t128_b1, t128_b16) times that case alone, for a profiler.
//!
//! `--compile` first compiles `--file` into its NNEF archive in the model directory
//! (`model.onnx` -> `model.nnef.tar`, `model.q4.onnx` -> `model.q4.nnef.tar`; see
//! `BertEmbedder::compile`) and measures that.
//!
//! `--ingest` measures ingest throughput instead: 96 distinct passages of 64 tokens embedded
//! in batches of 16, by 1 and then 2 threads, each thread with its own embedder; `--texts` then
//! receives those passages, for `tools/bench/ingest-chromium.mjs` (1 and 2 Web Workers).
//!
//! Writes the benchmark texts (16 passages of exactly 32 and of exactly 128 tokens, prefix and
//! special tokens included) to `--texts` so the onnxruntime and wasm sides run the same inputs.
//! `tools/bench-embed` runs every side and prints the comparison table.

use std::path::PathBuf;
use std::time::Instant;

use mnemo::{Embedder, Role};

use mnemo_embed::{BertConfig, BertEmbedder};

const WORDS: &str = "the agent retried the deploy after the build failed because the cache held \
    a stale lockfile and the user asked to pin node twenty two before any migration of the \
    payments service which had timed out twice on friday evening while the database was being \
    vacuumed so we wrote down that long running jobs must never overlap with maintenance windows \
    and that every retry needs a backoff a and of to in it is was for on with as by at";

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Texts whose passage encoding has exactly `target` tokens.
fn texts_of(e: &BertEmbedder, target: usize, count: usize) -> Vec<String> {
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    (0..count)
        .map(|k| {
            let mut text = String::new();
            let mut i = k * 7;
            let mut misses = 0;
            while misses < words.len() {
                let w = words[i % words.len()];
                i += 1;
                let candidate = if text.is_empty() { w.to_string() } else { format!("{text} {w}") };
                let n = e.token_ids(&candidate, Role::Passage).expect("tokenises").len();
                if n <= target {
                    text = candidate;
                    misses = 0;
                    if n == target {
                        return text;
                    }
                } else {
                    misses += 1;
                }
            }
            panic!("could not build a text of {target} tokens")
        })
        .collect()
}

/// Hands the allocator's free pages back to the system (glibc keeps freed memory mapped), so
/// that resident memory measures what the loaded embedder holds rather than what the load once
/// needed on the way.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only releases free memory; it takes no pointer of ours.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Passages per second with 1 and 2 threads, each thread its own embedder; prints JSON.
fn ingest_throughput(model: &std::path::Path, file: &str, texts_out: Option<&std::path::Path>) {
    let onnx = std::sync::Arc::new(std::fs::read(model.join(file)).expect("model file"));
    let tok = std::sync::Arc::new(std::fs::read(model.join("tokenizer.json")).expect("tokenizer"));
    let config = || BertConfig { cache_capacity: 0, ..BertConfig::e5("e5") };
    let probe = BertEmbedder::from_bytes(&onnx, &tok, config()).expect("model loads");
    let texts = std::sync::Arc::new(texts_of(&probe, 64, 96));
    drop(probe);
    if let Some(path) = texts_out {
        let doc = serde_json::json!({ "texts": *texts });
        std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).expect("write texts");
    }
    let mut out = serde_json::Map::new();
    for threads in [1usize, 2] {
        let start = std::sync::Arc::new(std::sync::Barrier::new(threads + 1));
        let workers: Vec<_> = (0..threads)
            .map(|w| {
                let (onnx, tok, texts, start) =
                    (onnx.clone(), tok.clone(), texts.clone(), start.clone());
                std::thread::spawn(move || {
                    let mut e = BertEmbedder::from_bytes(&onnx, &tok, config()).expect("loads");
                    e.embed(&["warm up the plan"], Role::Passage).expect("embeds");
                    let mine: Vec<&str> =
                        texts.iter().skip(w).step_by(threads).map(String::as_str).collect();
                    start.wait();
                    for batch in mine.chunks(16) {
                        e.embed(batch, Role::Passage).expect("embeds");
                    }
                })
            })
            .collect();
        start.wait();
        let t = Instant::now();
        for w in workers {
            w.join().expect("worker ran");
        }
        let per_s = texts.len() as f64 / t.elapsed().as_secs_f64();
        out.insert(format!("threads_{threads}"), serde_json::json!(per_s));
    }
    let ratio = out["threads_2"].as_f64().unwrap() / out["threads_1"].as_f64().unwrap();
    println!(
        "{}",
        serde_json::json!({
            "runtime": format!("tract native, {file}, ingest (64-token passages, batches of 16)"),
            "passages_per_s": out,
            "two_over_one": ratio,
        })
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut model = PathBuf::from("models/multilingual-e5-small-latin");
    let mut texts_out: Option<PathBuf> = None;
    let mut iters = 10usize;
    let mut fixed = false;
    let mut file = String::from("model.onnx");
    let mut compact = true;
    let mut ingest = false;
    let mut compile = false;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--model" => model = args.next().expect("--model DIR").into(),
            "--texts" => texts_out = Some(args.next().expect("--texts FILE").into()),
            "--iters" => iters = args.next().expect("--iters N").parse().expect("a number"),
            "--buckets" => fixed = true,
            "--file" => file = args.next().expect("--file NAME"),
            "--hf-tokenizer" => compact = false,
            "--ingest" => ingest = true,
            "--compile" => compile = true,
            "--only" => only = Some(args.next().expect("--only t32_b1|t32_b16|t128_b1|t128_b16")),
            _ => {} // cargo bench passes --bench
        }
    }
    if compile {
        // The model file compiled to its NNEF archive (typed, decluttered, fused), then measured
        let read = |n: &str| std::fs::read(model.join(n)).expect("model files");
        let archive =
            BertEmbedder::compile(&read(&file), &read("tokenizer.json")).expect("compiles");
        file = mnemo_embed::archive_name(&file);
        std::fs::write(model.join(&file), archive).expect("write the archive");
        trim_heap();
    }
    if ingest {
        return ingest_throughput(&model, &file, texts_out.as_deref());
    }
    let rss_before = rss_kib("VmRSS:");
    let onnx = std::fs::read(model.join(&file)).expect("model file");
    let tok = std::fs::read(model.join("tokenizer.json")).expect("tokenizer.json");
    let config = BertConfig {
        cache_capacity: 0,
        fixed_shapes: fixed,
        compact_tokenizer: compact,
        ..BertConfig::e5("e5")
    };
    let t = Instant::now();
    let mut stages = serde_json::Map::new();
    let mut last = t;
    let mut e = BertEmbedder::from_bytes_staged(&onnx, &tok, config, &mut |name| {
        stages.insert(name.into(), serde_json::json!(last.elapsed().as_secs_f64() * 1e3));
        last = Instant::now();
    })
    .expect("model loads");
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    e.embed(&["warm"], Role::Passage).expect("embeds");
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    drop((onnx, tok));
    trim_heap();
    let rss_loaded = rss_kib("VmRSS:");

    let mut results = serde_json::Map::new();
    let mut tokenize = serde_json::Map::new();
    let mut corpus = serde_json::Map::new();
    for tokens in [32usize, 128] {
        let texts = texts_of(&e, tokens, 16);
        let ids: Vec<Vec<i64>> =
            texts.iter().map(|t| e.token_ids(t, Role::Passage).expect("tokenises")).collect();
        corpus.insert(tokens.to_string(), serde_json::json!({ "texts": texts, "ids": ids }));
        for batch in [1usize, 16] {
            let case = format!("t{tokens}_b{batch}");
            if only.as_ref().is_some_and(|o| *o != case) {
                continue;
            }
            let refs: Vec<&str> = texts.iter().take(batch).map(String::as_str).collect();
            e.embed(&refs, Role::Passage).expect("embeds"); // optimise this shape's plan
            let runs = if batch == 1 { iters * 4 } else { iters };
            let samples: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    e.embed(&refs, Role::Passage).expect("embeds");
                    t.elapsed().as_secs_f64() * 1e3 / batch as f64
                })
                .collect();
            // The tokenizer's share of that time: the same texts tokenised alone.
            let tok: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    for text in &refs {
                        e.token_ids(text, Role::Passage).expect("tokenises");
                    }
                    t.elapsed().as_secs_f64() * 1e3 / batch as f64
                })
                .collect();
            tokenize.insert(case.clone(), serde_json::json!(median(tok)));
            results.insert(case, serde_json::json!(median(samples)));
        }
    }
    if let Some(path) = texts_out {
        std::fs::write(&path, serde_json::to_vec_pretty(&corpus).unwrap()).expect("write texts");
    }
    let out = serde_json::json!({
        "runtime": format!("tract native, {file}{}", if fixed { ", shape buckets" } else { "" }),
        "load_ms": load_ms,
        "load_stages_ms": stages,
        "first_embed_ms": first_ms,
        "ms_per_passage": results,
        "tokenize_ms_per_passage": tokenize,
        "rss_loaded_mb": (rss_loaded.saturating_sub(rss_before)) as f64 / 1024.0,
        "peak_rss_mb": rss_kib("VmHWM:") as f64 / 1024.0,
        "plans": e.plan_count(),
        "compact_tokenizer": e.compact_tokenizer(),
    });
    println!("{out}");
}
