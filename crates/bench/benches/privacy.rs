//! Erasure and export on the file store: a namespace of N episodes (host vectors, 384-d, texts
//! naming one of 100 people) next to another user's; then the time and bytes of erasing one
//! subject, one episode and the whole namespace, the encrypted export and import speed, and
//! scrypt's cost. One JSON object per line; `tools/bench-privacy` prints the table.
//!
//! `cargo bench --bench privacy -- [--episodes 10000]`

use std::time::Instant;

use mnemo::engine::{Erasure, ExportOptions};
use mnemo::record::Episode;
use mnemo::store::file::FileStore;
use mnemo::{Config, Engine};
use serde_json::json;

const DIM: usize = 384;

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |s| s.parse().expect("a number"))
}

/// A deterministic unit vector.
fn vector(seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f32> = (0..DIM)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn person(i: u64) -> String {
    format!("Person{:03} Surname{:03}", i % 100, (i * 7) % 100)
}

fn log_bytes(dir: &std::path::Path) -> u64 {
    std::fs::metadata(dir.join("mnemo.log")).map_or(0, |m| m.len())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = arg(&args, "--episodes", 10_000);
    let dir = std::env::temp_dir().join(format!("mnemo-bench-privacy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = Config { dim: DIM, vector_model: "bench@1".into(), ..Config::default() };
    let mut e = Engine::new(FileStore::open(&dir).expect("opens"), config);
    let t0 = 1_700_000_000_000i64;
    for i in 0..n {
        let text =
            format!("{} asked about invoice {i} and the deploy of service {}", person(i), i % 37);
        e.remember("ana", Episode::new(text, t0 + i as i64 * 60_000), Some(&vector(i)))
            .expect("stored");
    }
    for i in 0..n / 10 {
        let text = format!("{} reviewed release {i}", person(i + 3));
        e.remember("bo", Episode::new(text, t0 + i as i64), Some(&vector(n + i))).expect("stored");
    }
    e.snapshot("ana").expect("snapshot");
    let before = log_bytes(&dir);

    // One subject: 1 % of the namespace's episodes name them.
    let t = Instant::now();
    let r = e.erase("ana", &Erasure::Subject(person(42)), t0).expect("erases");
    let subject_ms = t.elapsed().as_secs_f64() * 1e3;
    let after = log_bytes(&dir);
    let deleted: usize = r.layers.iter().map(|l| l.deleted).sum();
    assert!(r.verified(), "{r:?}");
    println!(
        "{}",
        json!({"op": "erase-subject", "episodes": n, "erased_episodes": r.episode_ids.len(),
            "records_deleted": deleted, "ms": subject_ms, "log_before": before,
            "bytes_rewritten": after, "scanned_bytes": r.verification.bytes_scanned})
    );

    let t = Instant::now();
    let r = e.erase("ana", &Erasure::Episode(7), t0).expect("erases");
    println!(
        "{}",
        json!({"op": "erase-episode", "episodes": n, "ms": t.elapsed().as_secs_f64() * 1e3,
            "bytes_rewritten": log_bytes(&dir), "verified": r.verified()})
    );

    // scrypt alone: the export of an empty namespace is the key derivation and one tag.
    for log_n in [14u8, 15, 16, 17] {
        let options = ExportOptions { log_n, ..ExportOptions::new([1; 16], [2; 7], t0) };
        let t = Instant::now();
        e.export_encrypted_bytes("nobody", "passphrase", &options).expect("exports");
        println!(
            "{}",
            json!({"op": "scrypt", "log_n": log_n, "r": 8, "p": 1,
                "memory_mib": 128u64 * 8 * (1u64 << log_n) / (1 << 20),
                "ms": t.elapsed().as_secs_f64() * 1e3})
        );
    }
    let options = ExportOptions { log_n: 14, ..ExportOptions::new([1; 16], [2; 7], t0) };
    let t = Instant::now();
    e.export_encrypted_bytes("nobody", "passphrase", &options).expect("exports");
    let kdf = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let file = e.export_encrypted_bytes("ana", "passphrase", &options).expect("exports");
    let export_s = t.elapsed().as_secs_f64() - kdf;
    let mut fresh = Engine::new(mnemo::store::MemoryStore::new(), Config::default());
    let t = Instant::now();
    fresh.import_encrypted("ana", "passphrase", &file).expect("imports");
    let import_s = t.elapsed().as_secs_f64() - kdf;
    let mb = file.len() as f64 / 1e6;
    println!(
        "{}",
        json!({"op": "export", "runtime": "native", "episodes": n, "mb": mb,
            "export_mb_s": mb / export_s, "import_mb_s": mb / import_s})
    );

    let t = Instant::now();
    let r = e.erase("ana", &Erasure::Namespace, t0).expect("erases");
    println!(
        "{}",
        json!({"op": "erase-namespace", "episodes": n, "ms": t.elapsed().as_secs_f64() * 1e3,
            "records_deleted": r.layers.iter().map(|l| l.deleted).sum::<usize>(),
            "bytes_rewritten": log_bytes(&dir), "verified": r.verified()})
    );
    let _ = std::fs::remove_dir_all(&dir);
}
