//! Vector index: build time, exact vs HNSW query time, and HNSW recall@10 against exact, on
//! synthetic vectors shaped like E5's (a shared direction, topic clusters, noise: pairwise
//! cosines around 0.7–0.9), next to instant-distance (the one-call HNSW build the index used
//! before) over the same int8 rows in the same run.
//!
//! Also the longest single `maintain` call when the build is spread over calls of the default
//! budget (`--budget` to change it), and how many calls it took.
//!
//! With `--codes`, also what compact codes would keep of the answers: binary codes (the signs
//! of a vector minus the mean, 48 bytes at 384-d) and 4-bit codes (one scale a vector, 192
//! bytes) scanned for a candidate set of C, which is then rescored exactly with the f32
//! vectors, as a host would fetch them from its storage; recall@10 against the exact f32 top
//! 10, for C of 20, 50, 100 and 200, beside the int8 rows the index keeps (388 bytes).
//!
//! `cargo bench --bench vectors -- [--n 10000,100000] [--queries 200] [--seal N] [--efc N]
//! [--efs N] [--budget UNITS] [--no-peer] [--codes]`

use std::time::Instant;

use instant_distance::{Builder, Point, Search};
use mnemo::index::vectors::{QVec, VectorConfig, VectorIndex};
use mnemo_bench::e5_like;

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
        if args.iter().any(|a| a == "--codes") {
            codes(points, qs);
        }
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

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The ids of the `k` highest of `scores`, best first (ties by id).
fn top(scores: impl Iterator<Item = (usize, f32)>, k: usize) -> Vec<usize> {
    let mut all: Vec<(usize, f32)> = scores.collect();
    let k = k.min(all.len());
    if k == 0 {
        return Vec::new();
    }
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    all.select_nth_unstable_by(k - 1, order);
    all.truncate(k);
    all.sort_by(order);
    all.into_iter().map(|(i, _)| i).collect()
}

/// Recall@10 of compact codes with exact rescoring of C candidates (module docs).
fn codes(points: &[Vec<f32>], qs: &[Vec<f32>]) {
    let dim = points[0].len();
    let n = points.len() as f32;
    let mean: Vec<f32> = (0..dim).map(|i| points.iter().map(|v| v[i]).sum::<f32>() / n).collect();
    let bits = |v: &[f32]| -> Vec<u64> {
        let mut words = vec![0u64; dim.div_ceil(64)];
        for (i, (x, m)) in v.iter().zip(&mean).enumerate() {
            if x > m {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        words
    };
    let nibbles = |v: &[f32]| -> (f32, Vec<i8>) {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 7.0 } else { 1.0 };
        (scale, v.iter().map(|x| (x / scale).round().clamp(-7.0, 7.0) as i8).collect())
    };
    let binary: Vec<Vec<u64>> = points.iter().map(|v| bits(v)).collect();
    let four: Vec<(f32, Vec<i8>)> = points.iter().map(|v| nibbles(v)).collect();
    let int8: Vec<QVec> = points.iter().map(|v| QVec::new(v)).collect();
    let rescored =
        |cands: Vec<usize>, q: &[f32]| top(cands.into_iter().map(|i| (i, dot(&points[i], q))), 10);
    let exacts: Vec<Vec<usize>> =
        qs.iter().map(|q| top(points.iter().map(|v| dot(v, q)).enumerate(), 10)).collect();
    let mut report = Vec::new();
    for c in [20usize, 50, 100, 200] {
        let (mut hit_b, mut hit_4) = (0, 0);
        for (q, exact) in qs.iter().zip(&exacts) {
            let qb = bits(q);
            let hamming = binary.iter().map(|b| {
                -(b.iter().zip(&qb).map(|(x, y)| (x ^ y).count_ones()).sum::<u32>() as f32)
            });
            let got = rescored(top(hamming.enumerate(), c), q);
            hit_b += got.iter().filter(|i| exact.contains(i)).count();
            let four_dot = four
                .iter()
                .map(|(s, d)| s * d.iter().zip(q).map(|(&x, y)| f32::from(x) * y).sum::<f32>());
            let got = rescored(top(four_dot.enumerate(), c), q);
            hit_4 += got.iter().filter(|i| exact.contains(i)).count();
        }
        let per = (10 * qs.len()) as f64;
        report.push(format!(
            "{{\"code\":\"binary\",\"bytes\":{},\"candidates\":{c},\"recall_at_10\":{:.4}}}",
            dim.div_ceil(64) * 8,
            hit_b as f64 / per,
        ));
        report.push(format!(
            "{{\"code\":\"4-bit\",\"bytes\":{},\"candidates\":{c},\"recall_at_10\":{:.4}}}",
            dim / 2 + 4,
            hit_4 as f64 / per,
        ));
    }
    // The int8 rows alone, no rescoring: what the index answers with today.
    let mut hit = 0;
    for (q, exact) in qs.iter().zip(&exacts) {
        let got = top(int8.iter().map(|r| r.dot_f32(q)).enumerate(), 10);
        hit += got.iter().filter(|i| exact.contains(i)).count();
    }
    report.push(format!(
        "{{\"code\":\"int8\",\"bytes\":{},\"candidates\":10,\"recall_at_10\":{:.4}}}",
        dim + 4,
        hit as f64 / (10 * qs.len()) as f64
    ));
    for line in report {
        println!("{line}");
    }
}
