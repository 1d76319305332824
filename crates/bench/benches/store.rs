//! The engine at scale, embedding excluded: ingest rate, index build, recall latency p50/p99,
//! cold open and memory, one JSON line per size (the workload is `mnemo_bench::store`, which
//! `tools/bench-store` also runs in wasm under Node).
//!
//! Then, per size, the bytes written by a touching recall and by a change amortised over
//! `--changes` new episodes with `maintain` every 100 (`mnemo_bench::writes`).
//!
//! `cargo bench --bench store -- [--n 10000,100000] [--queries 300] [--changes 10000]`

use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = arg(&args, "--n")
        .unwrap_or_else(|| "10000,100000".into())
        .split(',')
        .map(|s| s.parse().expect("--n takes sizes separated by commas"))
        .collect();
    let queries: usize = arg(&args, "--queries").map_or(300, |s| s.parse().expect("--queries"));
    let changes: usize = arg(&args, "--changes").map_or(10_000, |s| s.parse().expect("--changes"));
    let t = Instant::now();
    let mut clock = || t.elapsed().as_secs_f64() * 1e3;
    for n in sizes {
        let report = mnemo_bench::store(n, queries, &mut clock);
        let mut json = serde_json::to_value(&report).expect("serialisable");
        json["runtime"] = "native".into();
        println!("{json}");
        let writes = mnemo_bench::writes(n, queries, changes);
        println!("{}", serde_json::to_string(&writes).expect("serialisable"));
    }
}
