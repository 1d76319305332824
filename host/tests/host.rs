//! `mnemo-host` as a user runs it: the component under wasmtime on file and SQLite storage,
//! the host's native embedder and the component's own (tract in wasm), persistence across
//! processes. Needs the component (`tools/build-component`) and the default model.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../tests/common/spellings.rs"]
mod spellings;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn component() -> PathBuf {
    if let Some(p) = std::env::var_os("MNEMO_COMPONENT") {
        return p.into();
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    let p = target.join("wasm32-wasip2/release/mnemo_component.wasm");
    assert!(p.exists(), "no component at {}: run tools/build-component", p.display());
    p
}

fn model() -> PathBuf {
    std::env::var_os("MNEMO_MODEL_DIR")
        .map_or_else(|| root().join("models/multilingual-e5-small-latin"), PathBuf::from)
}

fn host(store: &[&str], args: &[&str]) -> (bool, String, String) {
    host_in(store, "ana", args)
}

fn host_in(store: &[&str], ns: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mnemo-host"))
        .args(store)
        .arg("--component")
        .arg(component())
        .arg("--model")
        .arg(model())
        .args(["--ns", ns, "--at", "2025-03-01T00:00:00Z"])
        .args(args)
        .env("MNEMO_PASSPHRASE", "correct horse battery")
        .output()
        .expect("runs");
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), s(&out.stdout), s(&out.stderr))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mnemo-host-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn exercise(store: &[&str]) {
    let embed = ["--host-embedder"];
    for text in [
        "Invoice INV-2025-0042 for 1,250 EUR sent to Marco",
        "npm install failed: stale lockfile in the cache",
        "Lunch with the design team on Friday",
    ] {
        let (ok, out, err) = host(store, &[&embed[..], &["remember", text]].concat());
        assert!(ok && out.contains("\"stored\": true"), "{out}{err}");
    }
    // A new process: everything comes back from the store.
    let (ok, out, err) = host(
        store,
        &["--host-embedder", "recall", "why", "did", "the", "install", "break?", "--k", "1"],
    );
    assert!(ok, "{err}");
    assert!(out.contains("stale lockfile") && out.contains("relevance"), "{out}");
    let (ok, out, _) = host(
        store,
        &["--host-embedder", "fact", "set", "language", "Italian", "--source", "explicit"],
    );
    assert!(ok && out.contains("written"), "{out}");
    let (ok, out, _) = host(
        store,
        &["--host-embedder", "fact", "set", "language", "English", "--source", "implicit"],
    );
    assert!(ok && out.contains("refused"), "{out}");
    let (ok, out, _) = host(store, &["--host-embedder", "fact", "history", "language"]);
    assert!(ok && out.contains("Italian") && !out.contains("English"), "{out}");
    let (ok, out, _) =
        host(store, &["--host-embedder", "rule", "add", "Delete the lockfile before reinstalling"]);
    assert!(ok && out.starts_with("rule"), "{out}");
    let (ok, out, _) = host(store, &["--host-embedder", "timeline"]);
    assert!(ok && out.matches("\"text\"").count() == 3, "{out}");
    let (ok, _, err) = host(store, &["--host-embedder", "remember", " "]);
    assert!(!ok && err.contains("needs a text"), "{err}");
    let (ok, out, err) = host(store, &["--host-embedder", "facts"]);
    assert!(ok && out.contains("Italian"), "{out}{err}");
    // The learning loop through the component: signals, the nightly job, observations.
    let lines: Vec<String> = (0..6)
        .map(|i| {
            serde_json::json!({"ts": format!("2025-02-20T09:{i:02}:00+01:00"), "kind": "edited",
                "agent": "email", "before": format!("Order {i} is confirmed; it ships soon."),
                "after": format!("Order {i} is confirmed, it ships soon.")})
            .to_string()
        })
        .collect();
    let kind = store[0].trim_start_matches('-');
    let file = std::env::temp_dir()
        .join(format!("mnemo-host-signals-{}-{kind}.jsonl", std::process::id()));
    std::fs::write(&file, lines.join("\n")).unwrap();
    let (ok, out, err) = host(store, &["signals", file.to_str().unwrap()]);
    assert!(ok && out.contains("stored 6 signals"), "{out}{err}");
    let (ok, out, err) = host(store, &["--host-embedder", "nightly", "--json"]);
    assert!(ok && out.contains("\"done\":true"), "{out}{err}");
    let (ok, out, err) = host(store, &["observations"]);
    assert!(ok && out.contains("semicolons") && out.contains("6 of 6"), "{out}{err}");
    privacy(store);
}

/// Export, import, erasure through the component; then no byte of the erased subject is left
/// in the store's files (the log, or SQLite's database and WAL).
fn privacy(store: &[&str]) {
    // One file per store kind: the file and SQLite tests run at once in this process.
    let kind = store[0].trim_start_matches('-');
    let file =
        std::env::temp_dir().join(format!("mnemo-host-export-{}-{kind}.mnemo", std::process::id()));
    let f = file.to_str().unwrap();
    let (ok, out, err) = host(store, &["export", f, "--scrypt-log-n", "10"]);
    assert!(ok && out.contains("\"encrypted\":true"), "{out}{err}");
    let (ok, out, err) = host_in(store, "restored", &["import", f]);
    assert!(ok && out.contains("\"records\""), "{out}{err}");
    let (ok, out, err) =
        host_in(store, "restored", &["--host-embedder", "recall", "INV-2025-0042", "--k", "1"]);
    assert!(ok && out.contains("INV-2025-0042"), "{out}{err}");
    let (ok, out, err) =
        host(store, &["--host-embedder", "correct", "3", "Dinner with the design team on Friday"]);
    assert!(ok && out.contains("\"scope\":\"correction\""), "{out}{err}");
    let (ok, out, err) = host(store, &["--host-embedder", "timeline"]);
    assert!(ok && out.contains("Dinner with") && !out.contains("Lunch with"), "{out}{err}");
    let (ok, out, err) = host(store, &["forget", "--subject", "Friday"]);
    assert!(ok, "{err}");
    let receipt: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(receipt["verification"]["occurrences"], 0, "{receipt}");
    assert_eq!(receipt["episodeIds"].as_array().unwrap().len(), 1, "{receipt}");
    let (ok, out, err) = host_in(store, "restored", &["forget", "--all"]);
    assert!(ok && out.contains("\"scope\":\"namespace\""), "{out}{err}");
    let path = Path::new(store[1]);
    let files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).collect()
    } else {
        let dir = path.parent().unwrap();
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
    };
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        assert!(!bytes.windows(6).any(|w| w == b"Friday"), "{} still holds Friday", f.display());
        assert!(
            !bytes.windows(10).any(|w| w == b"Lunch with"),
            "{} holds the wrong text",
            f.display()
        );
    }
    let (ok, out, _) = host(store, &["--host-embedder", "recall", "stale", "lockfile", "--k", "1"]);
    assert!(ok && out.contains("stale lockfile"), "the rest stays: {out}");
}

#[test]
fn file_store_with_the_native_embedder_and_the_component_s_own() {
    let d = tmp("file");
    let dir = d.to_string_lossy().to_string();
    exercise(&["--store", &dir]);
    // The component's own embedder (tract compiled to wasm) reads what the native one wrote:
    // the same model id, the same vector space.
    let (ok, out, err) = host(&["--store", &dir], &["recall", "INV-2025-0042", "--k", "1"]);
    assert!(ok, "{err}");
    assert!(out.contains("INV-2025-0042"), "{out}");
    // A damaged record of the log is listed as the native CLI lists it.
    let log = d.join("mnemo.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let at = bytes.len() - 20;
    bytes[at] ^= 1;
    std::fs::write(&log, &bytes).unwrap();
    let (ok, out, err) = host(&["--store", &dir], &["quarantined", "--json"]);
    assert!(ok && out.contains("\"key\":\"store\"") && out.contains("checksum"), "{out}{err}");
}

#[test]
fn sqlite_store() {
    let d = tmp("sqlite");
    let db = d.join("memory.sqlite").to_string_lossy().to_string();
    exercise(&["--sqlite", &db]);
}

/// The subject however it is spelled (`tests/common/spellings.rs`), ingested through the
/// component into SQLite and erased: no byte of any spelling's marker is left in the database
/// or its WAL, and another person's stays.
#[test]
fn sqlite_erasure_finds_every_spelling() {
    let d = tmp("sqlite-spell");
    let db = d.join("memory.sqlite").to_string_lossy().to_string();
    let store = ["--sqlite", db.as_str()];
    let spellings = spellings::spellings("René", "Müller");
    let mut lines: Vec<String> = spellings
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let text = format!("spellmark{i:04}x: call {s} today");
            serde_json::json!({"ts": "2025-02-20T10:00:00Z", "text": text}).to_string()
        })
        .collect();
    lines.push(
        r#"{"ts":"2025-02-20T10:00:00Z","text":"keepmark: call Rene Mullerova today"}"#.into(),
    );
    let file = d.join("spellings.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let (ok, out, err) =
        host(&store, &["--host-embedder", "ingest", file.to_str().unwrap(), "--json"]);
    assert!(ok && out.contains(&format!("\"ingested\":{}", lines.len())), "{out}{err}");
    // The database, its WAL and journal: every file SQLite keeps (not the input file).
    let markers = || {
        let (mut spelled, mut kept) = (0, 0);
        for f in std::fs::read_dir(&d).unwrap() {
            let path = f.unwrap().path();
            if !path.file_name().unwrap().to_string_lossy().starts_with("memory.sqlite") {
                continue;
            }
            let bytes = std::fs::read(path).unwrap();
            spelled += bytes.windows(9).filter(|w| *w == b"spellmark").count();
            kept += bytes.windows(8).filter(|w| *w == b"keepmark").count();
        }
        (spelled, kept)
    };
    assert!(markers().0 >= spellings.len(), "stored before the erasure");
    let (ok, out, err) = host(&store, &["forget", "--subject", "René Müller", "--force"]);
    assert!(ok, "{err}");
    let receipt: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(receipt["episodeIds"].as_array().map(Vec::len), Some(spellings.len()), "{receipt}");
    let (spelled, kept) = markers();
    assert_eq!(spelled, 0, "a spelling's marker is still in SQLite's files");
    assert!(kept > 0, "another person is not erased");
}

#[test]
fn embed_and_compare_match_the_native_cli_s_vectors() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mnemo-host"))
        .arg("--component")
        .arg(component())
        .arg("--model")
        .arg(model())
        .args(["embed", "--query"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"how do I reset the cache?\nciao\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<Vec<f32>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!((lines.len(), lines[0].len()), (2, 384));
    // The same text through the native embedder: tract in wasm and natively agree.
    let dir = model();
    let mut native = mnemo_embed::BertEmbedder::from_bytes(
        &std::fs::read(dir.join("model.onnx")).unwrap(),
        &std::fs::read(dir.join("tokenizer.json")).unwrap(),
        mnemo_embed::BertConfig::e5("multilingual-e5-small-latin"),
    )
    .unwrap();
    use mnemo::Embedder;
    let v = native.embed(&["how do I reset the cache?"], mnemo::Role::Query).unwrap();
    let cos: f32 = v[0].vector.iter().zip(&lines[0]).map(|(a, b)| a * b).sum();
    assert!(cos > 0.9999, "cosine {cos}");
    let (ok, out, err) =
        host(&[], &["compare", "Never use semicolons", "Use semicolons", "Do not use semicolons"]);
    assert!(ok, "{err}");
    assert!(out.contains("Opposite") && out.contains("Same"), "{out}");
}

/// The component counts context tokens with the host's tokenizer (its `tokenizer` import)
/// when the host lends one: the section tokens are cl100k_base's, not the estimate's.
#[test]
fn context_tokens_counted_by_the_host_tokenizer() {
    let d = tmp("tokenizer");
    let dir = d.to_string_lossy().to_string();
    let store = ["--store", dir.as_str()];
    let embed = ["--host-embedder"];
    for text in ["Quote Q-2024-117 for Bertelli & Co: 48 valve assemblies", "Marco prefers Como"] {
        let (ok, _, err) = host(&store, &[&["remember", text][..], &embed].concat());
        assert!(ok, "{err}");
    }
    let ask = ["context", "Reply to Marco about the quote", "--json", "--host-embedder"];
    let (ok, out, err) = host(&store, &ask);
    assert!(ok, "{err}");
    let estimated: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (ok, out, err) = host(&store, &[&ask[..], &["--host-tokenizer", "cl100k"]].concat());
    assert!(ok, "{err}");
    let counted: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(estimated["tokens"]["counter"], "estimate");
    assert_eq!(counted["tokens"]["counter"], "host", "{}", counted["tokens"]);
    let bpe = tiktoken_rs::cl100k_base().unwrap();
    let episodes = counted["sections"].as_array().unwrap().iter().find(|s| s["name"] == "episodes");
    let first = &episodes.expect("an episodes section")["items"][0];
    let text = first["text"].as_str().unwrap();
    assert_eq!(
        first["tokens"].as_u64().unwrap() as usize,
        bpe.encode_with_special_tokens(&format!("- {}\n", text.trim())).len(),
        "an item's tokens are the host tokenizer's count of its line"
    );
    let (ok, _, err) = host(&store, &[&ask[..], &["--host-tokenizer", "gpt2"]].concat());
    assert!(!ok && err.contains("cl100k"), "{err}");
}
