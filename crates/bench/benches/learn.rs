//! The learning loop: the nightly job over 30 days × 300 signals a weekday (time, work units,
//! memory; the workload is `mnemo_bench::nightly`, which `tools/bench-learn` also runs in
//! wasm under Node), and the learning figures of the seeded mail-agent trace over many
//! generator seeds (precision and recall of the promoted rules against the four planted
//! habits, nightly runs every night for 60 days, no embedder).
//!
//! `cargo bench --bench learn -- [--days 30] [--per-day 300] [--seeds 20]`

use std::collections::BTreeSet;
use std::time::Instant;

use mnemo::demo::trace::{expected, trace};
use mnemo::learn::pattern::Pattern;
use mnemo::record::RuleStatus;
use mnemo::store::MemoryStore;
use mnemo::time::{parse_iso8601, DAY};
use mnemo::{Config, Engine};

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |s| s.parse().expect("a number"))
}

/// Promoted rules that are planted habits, promoted rules that are not, habits found.
fn learn(seed: u64) -> (usize, usize, usize) {
    let mut e = Engine::new(MemoryStore::new(), Config::default());
    let signals = trace(seed, 60, 8);
    let start = parse_iso8601("2024-03-04T00:00:00Z").expect("a date");
    let mut next = 0;
    for day in 1..=60 {
        let night = start + day * DAY + 2 * 3_600_000;
        while next < signals.len() {
            let ts = parse_iso8601(signals[next]["ts"].as_str().expect("ts")).expect("ts");
            if ts >= night {
                break;
            }
            e.signal_json("maria", &signals[next].to_string()).expect("valid");
            next += 1;
        }
        e.nightly("maria", night, None).expect("runs");
    }
    let found: Vec<Option<u8>> = e
        .rules("maria", &[RuleStatus::Active])
        .expect("rules")
        .iter()
        .map(|r| Pattern::parse(&r.pattern).as_ref().and_then(expected))
        .collect();
    let habits: BTreeSet<u8> = found.iter().flatten().copied().collect();
    let right = found.iter().filter(|f| f.is_some()).count();
    (right, found.len() - right, habits.len())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (days, per_day) = (arg(&args, "--days", 30) as u32, arg(&args, "--per-day", 300) as u32);
    let seeds = arg(&args, "--seeds", 20);
    let t = Instant::now();
    let mut clock = || t.elapsed().as_secs_f64() * 1e3;
    let report = mnemo_bench::nightly(days, per_day, &mut clock);
    let mut json = serde_json::to_value(&report).expect("serialisable");
    json["runtime"] = "native".into();
    println!("{json}");
    let (mut right, mut wrong, mut habits) = (0, 0, 0);
    for seed in 1..=seeds {
        let (r, w, h) = learn(seed);
        right += r;
        wrong += w;
        habits += h;
    }
    let precision = if right + wrong == 0 { 1.0 } else { right as f64 / (right + wrong) as f64 };
    let recall = habits as f64 / (4 * seeds) as f64;
    println!(
        "{}",
        serde_json::json!({"learning_seeds": seeds, "promoted": right + wrong, "planted_found": habits,
            "precision": precision, "recall": recall, "embedder": "none"})
    );
}
