//! Vector index: build time, exact vs HNSW query time, and HNSW recall@10 against exact, on
//! synthetic vectors shaped like E5's (a shared direction, topic clusters, noise: pairwise
//! cosines around 0.7–0.9), next to instant-distance (the one-call HNSW build the index used
//! before) over the same int8 rows in the same run.
//!
//! Also the longest single `maintain` call when the build is spread over calls of the default
//! budget (`--budget` to change it), and how many calls it took.
//!
//! `cargo bench --bench vectors -- [--n 10000,100000] [--queries 200] [--seal N] [--efc N]
//! [--efs N] [--budget UNITS] [--no-peer]`

use std::time::Instant;

use instant_distance::{Builder, Point, Search};
use mnemo::bench::e5_like;
use mnemo::index::vectors::{QVec, VectorConfig, VectorIndex};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// A row for instant-distance: the same int8 quantisation and distance as the index's graph.
#[derive(Clone)]
struct Row(QVec);

impl Point for Row {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - self.0.dot(&other.0)
    }
}

fn p(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = arg(&args, "--n")
        .unwrap_or_else(|| "1000,4000,10000,30000".into())
        .split(',')
        .map(|s| s.parse().expect("--n takes sizes separated by commas"))
        .collect();
    let queries: usize = arg(&args, "--queries").map_or(200, |s| s.parse().expect("--queries"));
    let budget: u64 = arg(&args, "--budget")
        .map_or(mnemo::engine::MAINTAIN_BUDGET, |s| s.parse().expect("--budget"));
    let peer = !args.iter().any(|a| a == "--no-peer");
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
        // The build in calls of `budget` units, as a host's idle timer or alarm makes them.
        let (t, mut longest, mut calls, mut work) = (Instant::now(), 0f64, 0, 0u64);
        loop {
            let c = Instant::now();
            let report = idx.maintain(true, budget);
            longest = longest.max(c.elapsed().as_secs_f64());
            calls += 1;
            work += report.work;
            if report.done {
                break;
            }
        }
        let build = t.elapsed().as_secs_f64();
        let (mut t_exact, mut t_ann, mut found) = (Vec::new(), Vec::new(), 0usize);
        let mut exacts = Vec::new();
        for q in qs {
            let t = Instant::now();
            let exact = idx.exact(q, 10, |_| true);
            t_exact.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let ann = idx.search(q, 10, |_| true);
            t_ann.push(t.elapsed().as_secs_f64() * 1e3);
            found += ann.iter().filter(|h| exact.iter().any(|e| e.0 == h.0)).count();
            exacts.push(exact);
        }
        println!(
            "{{\"index\":\"mnemo\",\"n\":{n},\"segments\":{},\"build_s\":{build:.2},\"maintain_calls\":{calls},\"longest_call_ms\":{:.1},\"work\":{work},\"exact_p50_ms\":{:.3},\"hnsw_p50_ms\":{:.3},\"hnsw_p99_ms\":{:.3},\"recall_at_10\":{:.4},\"index_mb\":{:.1}}}",
            idx.segment_count(),
            longest * 1e3,
            p(&mut t_exact, 0.5),
            p(&mut t_ann, 0.5),
            p(&mut t_ann, 0.99),
            found as f64 / (10 * qs.len()) as f64,
            idx.memory() as f64 / 1e6
        );
        if !peer {
            continue;
        }
        let rows: Vec<Row> = points.iter().map(|v| Row(QVec::new(v))).collect();
        let t = Instant::now();
        let map = Builder::default()
            .ef_construction(config.ef_construction)
            .ef_search(config.ef_search)
            .seed(config.seed)
            .build(rows, (0..n as u64).collect::<Vec<u64>>());
        let build = t.elapsed().as_secs_f64();
        let (mut t_ann, mut found, mut search) = (Vec::new(), 0usize, Search::default());
        for (q, exact) in qs.iter().zip(&exacts) {
            let t = Instant::now();
            let query = Row(QVec::new(q));
            let mut hits: Vec<(u64, f32)> = map
                .search(&query, &mut search)
                .map(|item| (*item.value, idx.score(*item.value, q).unwrap_or(f32::MIN)))
                .collect();
            hits.sort_by(|a, b| b.1.total_cmp(&a.1));
            hits.truncate(10);
            t_ann.push(t.elapsed().as_secs_f64() * 1e3);
            found += hits.iter().filter(|h| exact.iter().any(|e| e.0 == h.0)).count();
        }
        println!(
            "{{\"index\":\"instant-distance\",\"n\":{n},\"build_s\":{build:.2},\"longest_call_ms\":{:.1},\"hnsw_p50_ms\":{:.3},\"hnsw_p99_ms\":{:.3},\"recall_at_10\":{:.4}}}",
            build * 1e3,
            p(&mut t_ann, 0.5),
            p(&mut t_ann, 0.99),
            found as f64 / (10 * qs.len()) as f64,
        );
    }
}
