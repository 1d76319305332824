//! `mnemo-host`: the mnemo component under wasmtime, on file-backed or SQLite-backed storage,
//! with the `mnemo` CLI's commands (so any result can be reproduced under wasmtime).
//!
//! ```text
//! mnemo-host [--store DIR | --sqlite FILE] [--component FILE] [--model DIR] [--host-embedder]
//!            [--ns NS] [--at ISO-8601] COMMAND …
//!   remember TEXT [--outcome O] [--verdict V] [--agent A] [--tag T]…   ingest FILE.jsonl
//!   recall TEXT [--k N] [--json]   timeline   maintain
//!   fact set KEY VALUE [--source S] | fact get KEY | fact history KEY | fact rollback KEY V
//!   rule add TEXT   rules
//!   bench --items ITEMS.jsonl --queries QUERIES.jsonl --out RUN.jsonl [--k 100]
//!   embed [--query] (one text a line on stdin)   compare A B… [--query]
//! ```
//! Texts are embedded by the component's own embedder (tract in wasm, from `--model`), or by
//! the host's native one with `--host-embedder`.

mod bench;
mod runtime;
mod sqlite;

use std::path::PathBuf;
use std::process::ExitCode;

use mnemo::store::file::FileStore;
use mnemo::store::KvStore;
use mnemo::time::parse_iso8601;
use mnemo::{BertConfig, BertEmbedder};
use runtime::Memory;
use serde_json::{json, Value};

/// Parsed command line: `--name value` options, repeatable, and the rest.
pub struct Opts {
    values: Vec<(String, String)>,
    switches: Vec<String>,
    rest: Vec<String>,
}

const SWITCHES: [&str; 4] = ["json", "host-embedder", "timings", "query"];

impl Opts {
    fn parse(args: &[String]) -> Result<Self, String> {
        let mut o = Opts { values: Vec::new(), switches: Vec::new(), rest: Vec::new() };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.strip_prefix("--") {
                Some(name) if SWITCHES.contains(&name) => o.switches.push(name.into()),
                Some(name) => {
                    let v = it.next().ok_or(format!("--{name} needs a value"))?;
                    o.values.push((name.into(), v.clone()));
                }
                None => o.rest.push(a.clone()),
            }
        }
        Ok(o)
    }
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    fn all(&self, name: &str) -> Vec<&str> {
        self.values.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }
    fn has(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s == name)
    }
}

pub fn model_dir(opts: &Opts) -> PathBuf {
    opts.get("model").map(PathBuf::from).unwrap_or_else(|| {
        std::env::var_os("MNEMO_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("models/multilingual-e5-small-latin"))
    })
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn component_path(opts: &Opts) -> PathBuf {
    opts.get("component").map(PathBuf::from).unwrap_or_else(|| {
        let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
        PathBuf::from(target).join("wasm32-wasip2/release/mnemo.wasm")
    })
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))?
                .split_whitespace()
                .nth(1)?
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Prints a phase's time with `--timings` (stderr).
fn timing(opts: &Opts, what: &str, since: std::time::Instant) {
    if opts.has("timings") {
        eprintln!(
            "timing {what}: {:.1} ms (peak RSS {:.0} MB)",
            since.elapsed().as_secs_f64() * 1e3,
            peak_rss_mb()
        );
    }
}

/// Starts the component over `kv`, with `native` behind its embedder import.
fn start(
    opts: &Opts,
    kv: Box<dyn KvStore + Send>,
    native: Option<BertEmbedder>,
) -> Result<Memory, String> {
    let started = std::time::Instant::now();
    let engine = wasmtime::Engine::default();
    let path = component_path(opts);
    let component = runtime::load(&engine, &path)
        .map_err(|e| format!("{}: {e} (build it: tools/build-component)", path.display()))?;
    timing(opts, "component load (precompiled .cwasm when fresh)", started);
    Memory::new(&engine, &component, kv, native).map_err(|e| format!("{e:?}"))
}

/// Starts the component over `kv`, without an embedder.
pub fn open_bare(opts: &Opts, kv: Box<dyn KvStore + Send>) -> Result<Memory, String> {
    start(opts, kv, None)
}

/// Opens the store, starts the component and gives it an embedder.
pub fn open(opts: &Opts, kv: Box<dyn KvStore + Send>) -> Result<Memory, String> {
    let started = std::time::Instant::now();
    let dir = model_dir(opts);
    let host_embedder = opts.has("host-embedder");
    let native = if host_embedder {
        let e = BertEmbedder::from_bytes(
            &read(&dir.join("model.onnx"))?,
            &read(&dir.join("tokenizer.json"))?,
            BertConfig::e5("multilingual-e5-small-latin"),
        )
        .map_err(|e| e.to_string())?;
        Some(e)
    } else {
        None
    };
    let mut m = start(opts, kv, native)?;
    timing(opts, "instantiated", started);
    if host_embedder {
        m.call(|g, s| g.call_use_host_embedder(s))?;
    } else if dir.join("model.onnx").exists() {
        let (model, tok) = (read(&dir.join("model.onnx"))?, read(&dir.join("tokenizer.json"))?);
        m.call(|g, s| g.call_load_model(s, &model, &tok))?;
    }
    timing(opts, "embedder ready", started);
    Ok(m)
}

fn store(opts: &Opts) -> Result<Box<dyn KvStore + Send>, String> {
    match (opts.get("sqlite"), opts.get("store")) {
        (Some(path), _) => {
            Ok(Box::new(sqlite::SqliteStore::open(path).map_err(|e| e.to_string())?))
        }
        (None, dir) => {
            Ok(Box::new(FileStore::open(dir.unwrap_or("mnemo-store")).map_err(|e| e.to_string())?))
        }
    }
}

fn now(opts: &Opts) -> Result<i64, String> {
    match opts.get("at") {
        Some(t) => parse_iso8601(t).map_err(|e| e.to_string()),
        None => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)),
    }
}

fn text(opts: &Opts, what: &str) -> Result<String, String> {
    let t = opts.rest[1..].join(" ");
    if t.trim().is_empty() {
        return Err(format!("{what} needs a text"));
    }
    Ok(t)
}

fn print_json(s: &str) -> Result<(), String> {
    let v: Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
    println!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
    Ok(())
}

fn run(opts: &Opts) -> Result<(), String> {
    let cmd = opts.rest.first().map(String::as_str).ok_or("no command (see --help)")?;
    if cmd == "bench" {
        return bench::run(opts);
    }
    if cmd == "embed" || cmd == "compare" {
        return embed(cmd, opts);
    }
    let ns = opts.get("ns").unwrap_or("default").to_string();
    let mut m = open(opts, store(opts)?)?;
    let at = now(opts)?;
    match cmd {
        "remember" => {
            let e = json!({
                "text": text(opts, "remember")?, "createdAt": at, "outcome": opts.get("outcome"),
                "verdict": opts.get("verdict"), "agent": opts.get("agent"), "tags": opts.all("tag"),
            });
            print_json(&m.call(|g, s| g.call_remember(s, &ns, &e.to_string(), None))?)?;
        }
        "ingest" => {
            let path = opts.rest.get(1).ok_or("ingest needs a JSONL file")?;
            let body = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            let mut kept = 0;
            for (n, line) in body.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let r = m
                    .call(|g, s| g.call_remember(s, &ns, line, None))
                    .map_err(|e| format!("{path} line {}: {e}", n + 1))?;
                kept += usize::from(r.contains("\"stored\":true"));
            }
            m.call(|g, s| g.call_maintain(s, false))?;
            println!("ingested {kept} episodes into namespace {ns:?}");
        }
        "recall" => {
            let k: u64 =
                opts.get("k").map_or(Ok(5), str::parse).map_err(|_| "--k takes a number")?;
            let q = json!({"text": text(opts, "recall")?, "k": k});
            let t = std::time::Instant::now();
            let r = m.call(|g, s| g.call_recall(s, &ns, &q.to_string(), at, None))?;
            timing(opts, "first recall (namespace load + query embedding + recall)", t);
            if opts.has("json") {
                println!("{r}");
            } else {
                let v: Value = serde_json::from_str(&r).map_err(|e| e.to_string())?;
                for h in v["hits"].as_array().into_iter().flatten() {
                    let x = &h["explanation"];
                    println!(
                        "#{} {:.3}  {}\n    relevance {:.2} × recency {:.2} × importance {:.2}  (cosine {:.2}, bm25 {:.2}; {})",
                        h["episode"]["id"], x["finalScore"].as_f64().unwrap_or(0.0), h["episode"]["text"].as_str().unwrap_or(""),
                        x["relevance"].as_f64().unwrap_or(0.0), x["recency"].as_f64().unwrap_or(0.0),
                        x["importance"].as_f64().unwrap_or(0.0), x["cosine"].as_f64().unwrap_or(0.0),
                        x["bm25"].as_f64().unwrap_or(0.0), x["sources"]
                    );
                }
            }
        }
        "timeline" => print_json(&m.call(|g, s| g.call_timeline(s, &ns, i64::MAX, 1000))?)?,
        "maintain" => print_json(&m.call(|g, s| g.call_maintain(s, true))?)?,
        "fact" => {
            let a: Vec<&str> = opts.rest.iter().skip(1).map(String::as_str).collect();
            match a.as_slice() {
                ["set", key, value] => {
                    let f = json!({"key": key, "value": value, "source": opts.get("source").unwrap_or("explicit")});
                    print_json(&m.call(|g, s| g.call_set_fact(s, &ns, &f.to_string(), at))?)?;
                }
                ["get", key] => print_json(&m.call(|g, s| g.call_fact(s, &ns, key, at, false))?)?,
                ["history", key] => print_json(&m.call(|g, s| g.call_fact_history(s, &ns, key))?)?,
                ["rollback", key, v] => {
                    let v: u32 = v.parse().map_err(|_| "the version is a number")?;
                    println!(
                        "now version {}",
                        m.call(|g, s| g.call_rollback_fact(s, &ns, key, v, at))?
                    );
                }
                _ => {
                    return Err(
                        "fact set KEY VALUE | get KEY | history KEY | rollback KEY VERSION".into()
                    )
                }
            }
        }
        "rule" if opts.rest.get(1).map(String::as_str) == Some("add") => {
            let t = opts.rest[2..].join(" ");
            println!("rule {}", m.call(|g, s| g.call_add_rule(s, &ns, &t, "active", at))?);
        }
        "rules" => print_json(&m.call(|g, s| g.call_rules(s, &ns, &[]))?)?,
        other => return Err(format!("unknown command {other:?}")),
    }
    Ok(())
}

/// `embed`: stdin lines to JSON vectors; `compare`: cosine and stance of A against the others.
fn embed(cmd: &str, opts: &Opts) -> Result<(), String> {
    use mnemo::embed::{cosine, polarity, Polarity};
    use std::io::BufRead;
    let mut m = open(opts, Box::new(mnemo::store::MemoryStore::new()))?;
    let query = opts.has("query");
    if cmd == "embed" {
        for (n, line) in std::io::stdin().lock().lines().enumerate() {
            let line = line.map_err(|e| format!("stdin line {}: {e}", n + 1))?;
            let v = m.call(|g, s| g.call_embed(s, std::slice::from_ref(&line), query))?;
            println!("{}", serde_json::to_string(&v[0]).map_err(|e| e.to_string())?);
        }
        return Ok(());
    }
    let texts: Vec<String> = opts.rest[1..].to_vec();
    if texts.len() < 2 {
        return Err("compare needs at least two texts".into());
    }
    let v = m.call(|g, s| g.call_embed(s, &texts, query))?;
    let pa = Polarity::of(&texts[0]);
    println!("A: {:?} ({pa:?})", texts[0]);
    for (b, vb) in texts[1..].iter().zip(&v[1..]) {
        let (c, pb) = (cosine(&v[0], vb), Polarity::of(b));
        let s = polarity::stance(c, pa, pb, polarity::DEFAULT_SAME_TOPIC);
        println!("  cosine {c:.3}  {:<10} {:<9} {b:?}", format!("{pb:?}"), format!("{s:?}"));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") || args.is_empty() {
        println!(
            "{}",
            include_str!("main.rs")
                .lines()
                .skip(3)
                .take(9)
                .map(|l| l.trim_start_matches("//! "))
                .collect::<Vec<_>>()
                .join("\n")
        );
        return ExitCode::SUCCESS;
    }
    match Opts::parse(&args).and_then(|o| run(&o)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mnemo-host: {e}");
            ExitCode::FAILURE
        }
    }
}
