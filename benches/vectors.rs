//! Vector index: build time, exact vs HNSW query time, and HNSW recall@10 against exact, on
//! synthetic vectors shaped like E5's (a shared direction, topic clusters, noise: pairwise
//! cosines around 0.7–0.9).
//!
//! `cargo bench --bench vectors -- [--n 10000,100000] [--queries 200] [--seal N]`

use std::time::Instant;

use mnemo::index::vectors::{VectorConfig, VectorIndex};

use mnemo::bench::e5_like;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = arg(&args, "--n")
        .unwrap_or_else(|| "1000,4000,10000,30000".into())
        .split(',')
        .map(|s| s.parse().expect("--n takes sizes separated by commas"))
        .collect();
    let queries: usize = arg(&args, "--queries").map_or(200, |s| s.parse().expect("--queries"));
    let dim = 384;
    for n in sizes {
        let data = e5_like(n + queries, dim, 7);
        let (points, qs) = data.split_at(n);
        let seal = arg(&args, "--seal").map_or(n, |s| s.parse().expect("--seal"));
        let mut config = VectorConfig { seal_at: seal, ..Default::default() };
        if let Some(e) = arg(&args, "--efc") {
            config.ef_construction = e.parse().expect("--efc");
        }
        if let Some(e) = arg(&args, "--efs") {
            config.ef_search = e.parse().expect("--efs");
        }
        let mut idx = VectorIndex::new(dim, config);
        for (i, v) in points.iter().enumerate() {
            idx.insert(i as u64, v);
        }
        let t = Instant::now();
        let report = idx.maintain(true);
        let build = t.elapsed().as_secs_f64();
        let (mut t_exact, mut t_ann, mut found) = (Vec::new(), Vec::new(), 0usize);
        for q in qs {
            let t = Instant::now();
            let exact = idx.exact(q, 10, |_| true);
            t_exact.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let ann = idx.search(q, 10, |_| true);
            t_ann.push(t.elapsed().as_secs_f64() * 1e3);
            found += ann.iter().filter(|h| exact.iter().any(|e| e.0 == h.0)).count();
        }
        let p = |v: &mut Vec<f64>, q: f64| {
            v.sort_by(f64::total_cmp);
            v[((v.len() as f64 - 1.0) * q).round() as usize]
        };
        println!(
            "{{\"n\":{n},\"segments\":{},\"build_s\":{build:.2},\"exact_p50_ms\":{:.3},\"hnsw_p50_ms\":{:.3},\"hnsw_p99_ms\":{:.3},\"recall_at_10\":{:.4},\"index_mb\":{:.1}}}",
            report.segments,
            p(&mut t_exact, 0.5),
            p(&mut t_ann, 0.5),
            p(&mut t_ann, 0.99),
            found as f64 / (10 * qs.len()) as f64,
            idx.memory() as f64 / 1e6
        );
    }
}
