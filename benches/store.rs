//! The engine at scale, embedding excluded: ingest rate, index build, recall latency p50/p99,
//! cold open, and memory, at each size given.
//!
//! `cargo bench --bench store -- [--n 10000,100000] [--queries 300]`
//!
//! Texts are 12 words from a 5,000-word vocabulary plus a topic word; vectors are synthetic
//! E5-shaped (see synth.rs). Recall runs with host-supplied query vectors and `touch` off.

use std::time::Instant;

use mnemo::record::Episode;
use mnemo::store::MemoryStore;
use mnemo::{Config, Engine, Query};

#[path = "synth.rs"]
mod synth;
use synth::{e5_like, Rng};

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn pct(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

fn word(rng: &mut Rng) -> String {
    const SYL: [&str; 20] = [
        "ka", "lo", "mi", "ter", "den", "sa", "po", "ri", "gen", "tu", "va", "nel", "cor", "bi",
        "fa", "mon", "le", "zu", "qui", "ro",
    ];
    // Zipf-ish: low ids far more often.
    let id = (rng.next() % 5000).min(rng.next() % 5000);
    format!(
        "{}{}{}",
        SYL[(id % 20) as usize],
        SYL[(id / 20 % 20) as usize],
        SYL[(id / 400 % 20) as usize]
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = arg(&args, "--n")
        .unwrap_or_else(|| "10000,100000".into())
        .split(',')
        .map(|s| s.parse().expect("--n takes sizes separated by commas"))
        .collect();
    let queries: usize = arg(&args, "--queries").map_or(300, |s| s.parse().expect("--queries"));
    let dim = 384;
    for n in sizes {
        let vectors = e5_like(n + queries, dim, 11);
        let mut rng = Rng::new(5);
        let texts: Vec<String> = (0..n + queries)
            .map(|_| (0..12).map(|_| word(&mut rng)).collect::<Vec<_>>().join(" "))
            .collect();
        let config = Config { vector_model: "synthetic@1".into(), dim, ..Config::default() };
        let rss0 = rss_kb();
        let mut engine = Engine::new(MemoryStore::new(), config.clone());
        let day = 86_400_000i64;
        let t0 = 1_700_000_000_000i64;
        let t = Instant::now();
        for i in 0..n {
            let e = Episode::new(texts[i].clone(), t0 + (i as i64) * (365 * day / n as i64));
            engine.remember("bench", e, Some(&vectors[i])).expect("remember");
        }
        let ingest = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let report = engine.maintain(true);
        let build = t.elapsed().as_secs_f64();
        let rss1 = rss_kb();
        let now = t0 + 366 * day;
        let mut lat = Vec::new();
        for q in 0..queries {
            let mut query = Query::new(texts[n + q].clone(), 10);
            query.vector = Some(vectors[n + q].clone());
            query.touch = false;
            let t = Instant::now();
            let r = engine.recall("bench", &query, now).expect("recall");
            lat.push(t.elapsed().as_secs_f64() * 1e3);
            assert!(!r.hits.is_empty());
        }
        let store = engine.into_store();
        let t = Instant::now();
        let mut reopened = Engine::new(store, config);
        reopened.load("bench").expect("load");
        let open = t.elapsed().as_secs_f64();
        let mut lat_cold = Vec::new();
        for q in 0..queries.min(50) {
            let mut query = Query::new(texts[n + q].clone(), 10);
            query.vector = Some(vectors[n + q].clone());
            query.touch = false;
            let t = Instant::now();
            reopened.recall("bench", &query, now).expect("recall");
            lat_cold.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "{{\"n\":{n},\"ingest_per_s\":{:.0},\"index_build_s\":{build:.1},\"segments\":{},\"recall_p50_ms\":{:.3},\"recall_p99_ms\":{:.3},\"cold_open_ms\":{:.0},\"recall_before_maintain_p50_ms\":{:.3},\"engine_estimate_mb\":{:.1},\"rss_growth_mb\":{:.1}}}",
            n as f64 / ingest,
            report.segments,
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99),
            open * 1e3,
            pct(&mut lat_cold, 0.5),
            reopened.memory() as f64 / 1e6,
            (rss1.saturating_sub(rss0)) as f64 / 1024.0,
        );
    }
}
