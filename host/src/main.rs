//! `mnemo-host`: the mnemo component under wasmtime, on file-backed or SQLite-backed storage,
//! with the `mnemo` CLI's commands (so any result can be reproduced under wasmtime). The
//! command line is `mnemo`'s own (`mnemo_tool::args`) plus the host's
//! options and `maintain`; run `mnemo-host --help`.
//!
//! Texts are embedded by the component's own embedder (tract in wasm, from `--model`), or by
//! the host's native one with `--host-embedder`.

mod bench;
mod runtime;
mod sqlite;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser};
use mnemo::store::KvStore;
use mnemo_embed::{BertConfig, BertEmbedder};
use mnemo_tool::args::{self, Command, Globals};
use mnemo_tool::{learn, privacy};
use runtime::Memory;
use serde_json::{json, Value};

/// The mnemo engine as a WebAssembly component under wasmtime, on a store directory or a SQLite
/// file, with the commands of the `mnemo` tool.
#[derive(Parser, Debug)]
#[command(name = "mnemo-host", version, arg_required_else_help = true)]
struct Cli {
    #[command(flatten)]
    opts: Opts,
    #[command(subcommand)]
    command: Command,
}

/// `mnemo`'s options and the host's own, all accepted before or after the command.
#[derive(Args, Debug)]
pub struct Opts {
    #[command(flatten)]
    pub g: Globals,
    /// Store in this SQLite database file instead of the --store directory
    #[arg(long, global = true, value_name = "FILE")]
    pub sqlite: Option<String>,
    /// The mnemo component to run [default:
    /// $CARGO_TARGET_DIR/wasm32-wasip2/release/mnemo_component.wasm, built by tools/build-component]
    #[arg(long, global = true, value_name = "FILE")]
    pub component: Option<PathBuf>,
    /// Embed texts with the host's native embedder instead of the component's own
    #[arg(long, global = true)]
    pub host_embedder: bool,
    /// Count context tokens with this tokenizer, lent to the component through its tokenizer
    /// import (cl100k: OpenAI's cl100k_base), instead of the engine's estimate
    #[arg(long, global = true, value_name = "NAME", value_parser = ["cl100k"])]
    pub host_tokenizer: Option<String>,
    /// Print the time and peak memory of each start-up phase on stderr
    #[arg(long, global = true)]
    pub timings: bool,
}

pub fn model_dir(opts: &Opts) -> PathBuf {
    opts.g.model_dir()
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn component_path(opts: &Opts) -> PathBuf {
    opts.component.clone().unwrap_or_else(|| {
        let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
        PathBuf::from(target).join("wasm32-wasip2/release/mnemo_component.wasm")
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
    if opts.timings {
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
    let host_embedder = opts.host_embedder;
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
    if opts.host_tokenizer.is_some() {
        let bpe = tiktoken_rs::cl100k_base().map_err(|e| format!("the cl100k tokenizer: {e}"))?;
        m.use_tokenizer(bpe)?;
    }
    Ok(m)
}

fn store(opts: &Opts) -> Result<Box<dyn KvStore + Send>, String> {
    match &opts.sqlite {
        Some(path) => Ok(Box::new(sqlite::SqliteStore::open(path).map_err(|e| e.to_string())?)),
        None => Ok(Box::new(opts.g.open_store().map_err(|e| e.to_string())?)),
    }
}

/// Prints the component's JSON: compact with `--json`, else indented for reading.
fn print_json(opts: &Opts, s: &str) -> Result<(), String> {
    if opts.g.json {
        println!("{s}");
        return Ok(());
    }
    let v: Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
    println!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
    Ok(())
}

fn main() -> ExitCode {
    let cli: Cli = match args::parse("mnemo-host") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match run(&cli.opts, &cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mnemo-host: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(opts: &Opts, command: &Command) -> Result<(), String> {
    match command {
        Command::Bench(a) => return bench::run(opts, a),
        Command::Embed(a) => return embed(opts, a),
        Command::Compare(a) => return compare(opts, a),
        _ => {}
    }
    let ns = opts.g.ns.as_str();
    let at = opts.g.now();
    let mut m = open(opts, store(opts)?)?;
    match command {
        Command::Remember(a) => {
            let e = a.episode(at)?.to_string();
            print_json(opts, &m.call(|g, s| g.call_remember(s, ns, &e, None))?)?;
        }
        Command::Ingest(a) => ingest(opts, &mut m, a)?,
        Command::Recall(a) => {
            let q = a.json()?.to_string();
            let t = std::time::Instant::now();
            let r = m.call(|g, s| g.call_recall(s, ns, &q, at, None))?;
            timing(opts, "first recall (namespace load + query embedding + recall)", t);
            if opts.g.json {
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
                if let Some(id) = v["retrievalId"].as_u64() {
                    println!(
                        "retrieval {id} (report how the task went: mnemo-host outcome {id} success|failure)"
                    );
                }
            }
        }
        Command::Timeline(a) => print_json(
            opts,
            &m.call(|g, s| g.call_timeline(s, ns, at.saturating_add(1), a.limit))?,
        )?,
        Command::Fact(args::Fact::Set(f)) => {
            let f = f.json().to_string();
            print_json(opts, &m.call(|g, s| g.call_set_fact(s, ns, &f, at))?)?;
        }
        Command::Fact(args::Fact::Get { key, all }) => {
            print_json(opts, &m.call(|g, s| g.call_fact(s, ns, key, at, *all))?)?
        }
        Command::Fact(args::Fact::History { key }) => {
            print_json(opts, &m.call(|g, s| g.call_fact_history(s, ns, key))?)?
        }
        Command::Fact(args::Fact::Rollback { key, version }) => {
            let v = m.call(|g, s| g.call_rollback_fact(s, ns, key, *version, at))?;
            if opts.g.json {
                println!("{}", json!({"version": v}));
            } else {
                println!("now version {v}");
            }
        }
        Command::Rule(args::Rule::Add { text, status, origin }) => {
            let t = args::joined(text, "rule add")?;
            let name = json!(status).as_str().unwrap_or("active").to_string();
            let origin = origin.to_string();
            let id = m.call(|g, s| g.call_add_rule(s, ns, &t, &name, &origin, at))?;
            if opts.g.json {
                println!("{}", json!({"id": id, "status": status}));
            } else {
                println!("rule {id}");
            }
        }
        Command::Rule(args::Rule::Status { id, status }) => {
            let name = json!(status).as_str().unwrap_or("active").to_string();
            m.call(|g, s| g.call_set_rule_status(s, ns, *id, &name, at))?;
            if opts.g.json {
                println!("{}", json!({"id": id, "status": status}));
            } else {
                println!("rule {id} is {name}");
            }
        }
        Command::Status { id, status } => {
            m.call(|g, s| g.call_set_status(s, ns, *id, status))?;
            if opts.g.json {
                println!("{}", json!({"id": id, "status": status}));
            } else {
                println!("episode {id} is {status}");
            }
        }
        Command::Triple(t) => {
            let t = t.json().to_string();
            print_json(opts, &m.call(|g, s| g.call_assert_triple(s, ns, &t, at))?)?
        }
        Command::Triples { subject, history } => {
            print_json(opts, &m.call(|g, s| g.call_triples(s, ns, subject, *history))?)?
        }
        Command::Rules(a) => {
            let statuses = a.status_names();
            print_json(opts, &m.call(|g, s| g.call_rules(s, ns, &statuses))?)?
        }
        Command::Facts(a) => print_json(opts, &m.call(|g, s| g.call_facts(s, ns, at, a.all))?)?,
        Command::Learn(c) => learn::run(&opts.g, c, &mut m)?,
        Command::Privacy(c) => privacy::run(&opts.g, c, &mut m)?,
        Command::Bench(_) | Command::Embed(_) | Command::Compare(_) => {}
    }
    Ok(())
}

impl privacy::Calls for Memory {
    fn erase(&mut self, ns: &str, what: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_erase(s, ns, what, now))
    }
    fn correct(&mut self, ns: &str, id: u64, fix: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_correct(s, ns, id, fix, now))
    }
    fn request_erasure(&mut self, ns: &str, what: &str, now: i64) -> Result<String, String> {
        let id = self.call(|g, s| g.call_request_erasure(s, ns, what, now))?;
        Ok(json!({"id": id}).to_string())
    }
    fn export_readable(&mut self, ns: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_export_readable(s, ns, now))
    }
    fn export_encrypted(
        &mut self,
        ns: &str,
        passphrase: &str,
        random: &[u8],
        log_n: u8,
        now: i64,
        out: &mut dyn std::io::Write,
    ) -> Result<(), String> {
        let bytes =
            self.call(|g, s| g.call_export_encrypted(s, ns, passphrase, random, Some(log_n), now))?;
        out.write_all(&bytes).map_err(|e| e.to_string())
    }
    fn import_encrypted(
        &mut self,
        ns: &str,
        passphrase: &str,
        file: &[u8],
    ) -> Result<String, String> {
        self.call(|g, s| g.call_import_encrypted(s, ns, passphrase, file))
    }
    fn reembed(&mut self, ns: &str) -> Result<String, String> {
        self.call(|g, s| g.call_reembed(s, ns))
    }
    fn quarantined(&mut self, ns: &str) -> Result<String, String> {
        let list = self.call(|g, s| g.call_quarantined(s, ns))?;
        let mut list: Value = list.parse().map_err(|e| format!("quarantined answered {e}"))?;
        // The store's own damage, as the native CLI lists it (key "store", episode 0).
        if let Some(items) = list.as_array_mut() {
            for reason in self.store_damage() {
                items.push(json!({"key": "store", "episode": 0, "reason": reason}));
            }
        }
        Ok(list.to_string())
    }
}

impl learn::Calls for Memory {
    fn signal(&mut self, ns: &str, json: &str) -> Result<String, String> {
        self.call(|g, s| g.call_signal(s, ns, json))
    }
    fn signals(&mut self, ns: &str, jsonl: &str) -> Result<String, String> {
        self.call(|g, s| g.call_signals(s, ns, jsonl))
    }
    fn maintain(&mut self, ns: &str, force: bool, budget: Option<u64>) -> Result<String, String> {
        self.call(|g, s| g.call_load(s, ns))?;
        self.call(|g, s| g.call_maintain(s, force, Some(budget.unwrap_or(u64::MAX))))
    }
    fn nightly(&mut self, ns: &str, now: i64, budget: Option<u64>) -> Result<String, String> {
        self.call(|g, s| g.call_nightly(s, ns, now, budget))
    }
    fn observe(&mut self, ns: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_observe(s, ns, now))
    }
    fn observations(&mut self, ns: &str, statuses: &[String]) -> Result<String, String> {
        self.call(|g, s| g.call_observations(s, ns, statuses))
    }
    fn nightly_log(&mut self, ns: &str) -> Result<String, String> {
        self.call(|g, s| g.call_nightly_log(s, ns))
    }
    fn recall_observations(
        &mut self,
        ns: &str,
        text: &str,
        k: u32,
        now: i64,
    ) -> Result<String, String> {
        self.call(|g, s| g.call_recall_observations(s, ns, text, k, now))
    }
    fn feedback(&mut self, ns: &str, id: u64, verdict: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_feedback(s, ns, id, verdict, now))
    }
    fn promote(&mut self, ns: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_promote(s, ns, now))
    }
    fn outcome(&mut self, ns: &str, id: u64, outcome: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_outcome(s, ns, id, outcome, now))
    }
    fn report(&mut self, ns: &str) -> Result<String, String> {
        self.call(|g, s| g.call_outcome_report(s, ns))
    }
    fn stats(&mut self, ns: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_stats(s, ns, now))
    }
    fn context(&mut self, ns: &str, request: &str, now: i64) -> Result<String, String> {
        self.call(|g, s| g.call_context(s, ns, request, now))
    }
    fn expand(&mut self, ns: &str, id: &str) -> Result<String, String> {
        self.call(|g, s| g.call_expand(s, ns, id))
    }
}

/// The component's `ingest` (all or nothing, one atomic batch), then a maintenance pass.
fn ingest(opts: &Opts, m: &mut Memory, a: &args::Ingest) -> Result<(), String> {
    let (ns, path) = (opts.g.ns.as_str(), a.file.display());
    let body = std::fs::read_to_string(&a.file).map_err(|e| format!("{path}: read: {e}"))?;
    let (origin, now) = (a.origin.to_string(), opts.g.now());
    let r = m
        .call(|g, s| g.call_ingest(s, ns, &body, &origin, now, None))
        .map_err(|e| format!("{path}: {e} (nothing was stored)"))?;
    let r: serde_json::Value = r.parse().map_err(|e| format!("ingest answered {e}"))?;
    let count = |k: &str| r[k].as_array().map_or(0, Vec::len);
    let (kept, dropped, dup) = (count("stored"), count("discarded"), count("duplicates"));
    m.call(|g, s| g.call_maintain(s, false, Some(u64::MAX)))?;
    if opts.g.json {
        println!(
            "{}",
            json!({"ns": ns, "ingested": kept, "discarded": dropped, "duplicates": dup, "ids": r["stored"]})
        );
    } else {
        println!(
            "ingested {kept} episodes into namespace {ns:?} ({dropped} discarded by the write \
             policy, {dup} imported before)"
        );
    }
    Ok(())
}

/// One vector per stdin line (with `--json`, one array of them at the end).
fn embed(opts: &Opts, a: &args::Embed) -> Result<(), String> {
    use std::io::BufRead;
    let mut m = open(opts, Box::new(mnemo::store::MemoryStore::new()))?;
    let mut all = Vec::new();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| format!("stdin line {}: {e}", n + 1))?;
        let mut v = m.call(|g, s| g.call_embed(s, std::slice::from_ref(&line), a.query))?;
        let v = v.pop().ok_or("the component returned no vector")?;
        if opts.g.json {
            all.push(v);
        } else {
            println!("{}", serde_json::to_string(&v).map_err(|e| e.to_string())?);
        }
    }
    if opts.g.json {
        println!("{}", json!(all));
    }
    Ok(())
}

/// Cosine and stance of text A against each of the others.
fn compare(opts: &Opts, a: &args::Compare) -> Result<(), String> {
    use mnemo::embed::{cosine, polarity, Polarity};
    let (first, others) = a.split()?;
    let mut m = open(opts, Box::new(mnemo::store::MemoryStore::new()))?;
    let v = m.call(|g, s| g.call_embed(s, &a.texts, a.query))?;
    if v.len() != a.texts.len() {
        return Err(format!(
            "the component returned {} vectors for {} texts",
            v.len(),
            a.texts.len()
        ));
    }
    let pa = Polarity::of(first);
    let rows = others.iter().zip(&v[1..]).map(|(b, vb)| {
        let (c, pb) = (cosine(&v[0], vb), Polarity::of(b));
        (b, c, pb, polarity::stance(c, pa, pb, polarity::DEFAULT_SAME_TOPIC))
    });
    if opts.g.json {
        let against: Vec<Value> = rows
            .map(|(b, c, p, s)| {
                json!({"text": b, "cosine": c, "polarity": format!("{p:?}"), "stance": format!("{s:?}")})
            })
            .collect();
        let doc = json!({"text": first, "polarity": format!("{pa:?}"), "against": against});
        println!("{doc}");
        return Ok(());
    }
    println!("A: {first:?} ({pa:?})");
    for (b, c, pb, s) in rows {
        println!("  cosine {c:.3}  {:<10} {:<9} {b:?}", format!("{pb:?}"), format!("{s:?}"));
    }
    Ok(())
}
