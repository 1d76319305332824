//! Vector index: build time, exact vs HNSW query time, and HNSW recall@10 against exact, on
//! synthetic vectors shaped like E5's (a shared direction, topic clusters, noise: pairwise
//! cosines around 0.7–0.9).
//!
//! `cargo bench --bench vectors -- [--n 10000,100000] [--queries 200] [--seal N]`

use std::time::Instant;

use mnemo::index::vectors::{VectorConfig, VectorIndex};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn gauss(&mut self) -> f32 {
        let u = (self.next() % 1_000_000 + 1) as f32 / 1_000_001.0;
        let v = (self.next() % 1_000_000) as f32 / 1_000_000.0;
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
    fn vec(&mut self, dim: usize) -> Vec<f32> {
        (0..dim).map(|_| self.gauss()).collect()
    }
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// `n` vectors in `dim` dimensions drawn around 1,000 topics.
pub fn e5_like(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = Rng(seed | 1);
    let common = unit(rng.vec(dim));
    let topics: Vec<Vec<f32>> = (0..1000).map(|_| unit(rng.vec(dim))).collect();
    (0..n)
        .map(|_| {
            let t = &topics[(rng.next() % 1000) as usize];
            let noise = unit(rng.vec(dim));
            unit((0..dim).map(|i| 0.85 * common[i] + 0.45 * t[i] + 0.3 * noise[i]).collect())
        })
        .collect()
}

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
