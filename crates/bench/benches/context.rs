//! Context assembly at scale: `Engine::context` against a plain recall for the same task, on
//! namespaces of 10k and 100k episodes with host vectors (no embedding; the workload is
//! `mnemo_bench::context`, which `tools/bench-context` also runs in wasm under Node).
//!
//! `cargo bench --bench context -- [--n 10000,100000] [--queries 200]`

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: &'static str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or(default.into())
    };
    let sizes: Vec<usize> = arg("--n", "10000,100000")
        .split(',')
        .map(|s| s.parse().expect("--n takes sizes separated by commas"))
        .collect();
    let queries: usize = arg("--queries", "200").parse().expect("--queries takes a number");
    let t = Instant::now();
    let mut clock = || t.elapsed().as_secs_f64() * 1e3;
    for n in sizes {
        let report = mnemo_bench::context(n, queries, &mut clock);
        let mut json = serde_json::to_value(&report).expect("serialisable");
        json["runtime"] = "native".into();
        println!("{json}");
    }
}
