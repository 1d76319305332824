//! `mnemo`: the command-line tool. Run `mnemo help` for the commands.

mod bench;
mod memory;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use mnemo::embed::{cosine, polarity};
use mnemo::{BertConfig, BertEmbedder, Embedder, Role};

const USAGE: &str = "usage:
  mnemo embed [--model DIR] [--query]      one text per stdin line -> one JSON unit vector per line
  mnemo compare [--model DIR] A B...       cosine, polarity and stance of text A against each B
  mnemo bench --items ITEMS.jsonl --queries QUERIES.jsonl --out RUN.jsonl [--model DIR] [--k 100]

  against a store directory (--store DIR, default ./mnemo-store; --ns NAME, default `default`;
  --at ISO-8601 sets the time, default now):
  mnemo remember TEXT [--outcome success|failure|partial] [--verdict TEXT] [--agent A]
                 [--kind T] [--tool T] [--stage S] [--error-class C] [--entity E] [--tag T]
  mnemo ingest FILE.jsonl                  one episode per line: {ts, text, outcome, verdict, …}
  mnemo recall QUERY [--k 5] [--json]      hits with score explanations
  mnemo timeline [--limit 20]
  mnemo fact set KEY VALUE [--source explicit|admin|implicit] [--confidence 1]
                 [--policy auto-inject|sensitive|never-inject] [--ttl-days N]
  mnemo fact get KEY [--all]  |  fact history KEY  |  fact rollback KEY VERSION  |  facts
  mnemo rule add TEXT [--status candidate|active]  |  rules [--all]";

/// Flags that take no value.
const SWITCHES: &[&str] = &["query", "json", "all"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("mnemo: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// Parsed options: `--name value` pairs, switches, and positional arguments.
pub struct Opts {
    pub model: PathBuf,
    values: HashMap<String, Vec<String>>,
    switches: Vec<String>,
    pub rest: Vec<String>,
}

impl Opts {
    /// The last value of `--name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(|v| v.last()).map(String::as_str)
    }
    /// Every value of a repeatable `--name`.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.values.get(name).cloned().unwrap_or_default()
    }
    /// True when switch `--name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s == name)
    }
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut opts = Opts {
        model: default_model_dir(),
        values: HashMap::new(),
        switches: Vec::new(),
        rest: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.strip_prefix("--") {
            Some(name) if SWITCHES.contains(&name) => opts.switches.push(name.to_string()),
            Some(name) => {
                let v = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                if name == "model" {
                    opts.model = v.into();
                }
                opts.values.entry(name.to_string()).or_default().push(v.clone());
            }
            None => opts.rest.push(a.clone()),
        }
    }
    Ok(opts)
}

fn default_model_dir() -> PathBuf {
    std::env::var_os("MNEMO_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("models/multilingual-e5-small-latin"))
}

pub fn load(dir: &std::path::Path) -> Result<BertEmbedder, String> {
    BertEmbedder::from_dir(dir, BertConfig::e5("multilingual-e5-small-latin"))
        .map_err(|e| e.to_string())
}

fn run(args: &[String]) -> Result<(), String> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    let opts = parse(rest)?;
    match cmd.as_str() {
        "embed" => embed(&opts),
        "compare" => compare(&opts),
        "bench" => bench::run(&opts),
        "remember" | "ingest" | "recall" | "timeline" | "fact" | "facts" | "rule" | "rules" => {
            memory::run(cmd, &opts)
        }
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}

fn embed(opts: &Opts) -> Result<(), String> {
    let mut embedder = load(&opts.model)?;
    let role = if opts.has("query") { Role::Query } else { Role::Passage };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| format!("stdin line {}: {e}", n + 1))?;
        let e = embedder.embed(&[&line], role).map_err(|e| format!("line {}: {e}", n + 1))?;
        if e[0].truncated {
            eprintln!("mnemo: line {} was truncated to {} tokens", n + 1, e[0].tokens);
        }
        let json = serde_json::to_string(&e[0].vector).map_err(|e| e.to_string())?;
        writeln!(out, "{json}").map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn compare(opts: &Opts) -> Result<(), String> {
    let (a, others) = opts.rest.split_first().ok_or("compare needs at least two texts")?;
    if others.is_empty() {
        return Err("compare needs at least two texts".into());
    }
    let mut embedder = load(&opts.model)?;
    let role = if opts.has("query") { Role::Query } else { Role::Passage };
    let texts: Vec<&str> = opts.rest.iter().map(String::as_str).collect();
    let v = embedder.embed(&texts, role).map_err(|e| e.to_string())?;
    println!("model {}", embedder.model_id());
    println!("A: {a:?} ({:?})", v[0].polarity);
    for (b, e) in others.iter().zip(&v[1..]) {
        let c = cosine(&v[0].vector, &e.vector);
        let s = polarity::stance(c, v[0].polarity, e.polarity, polarity::DEFAULT_SAME_TOPIC);
        println!(
            "  cosine {c:.3}  {:<10} {:<9} {b:?}",
            format!("{:?}", e.polarity),
            format!("{s:?}")
        );
    }
    Ok(())
}
