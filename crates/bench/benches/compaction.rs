//! Compaction and consolidation at scale: one nightly run over a year of history (time, work
//! units, memory, storage ratios; the workload is `mnemo_bench::compaction`, which
//! `tools/bench-compaction` also runs in wasm under Node).
//!
//! `cargo bench --bench compaction -- [--n 10000,100000]`

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = args
        .iter()
        .position(|a| a == "--n")
        .and_then(|i| args.get(i + 1))
        .map_or("10000,100000", String::as_str)
        .split(',')
        .map(|s| s.parse().expect("--n takes sizes separated by commas"))
        .collect();
    let t = Instant::now();
    let mut clock = || t.elapsed().as_secs_f64() * 1e3;
    for n in sizes {
        let report = mnemo_bench::compaction(n, &mut clock);
        let mut json = serde_json::to_value(&report).expect("serialisable");
        json["runtime"] = "native".into();
        println!("{json}");
    }
}
