//! `mnemo`: the command-line tool.
//!
//! ```text
//! mnemo embed [--model DIR] [--query]     one text per stdin line -> one JSON unit vector per line
//! mnemo compare [--model DIR] A B...      cosine, polarity and stance of A against each B
//! ```

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use mnemo::embed::{cosine, polarity};
use mnemo::{BertConfig, BertEmbedder, Embedder, Role};

const USAGE: &str = "usage:
  mnemo embed [--model DIR] [--query]   read one text per line on stdin, print one JSON vector per line
  mnemo compare [--model DIR] A B...    cosine, polarity and stance of text A against each B";

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

struct Opts {
    model: PathBuf,
    query: bool,
    rest: Vec<String>,
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut opts = Opts { model: default_model_dir(), query: false, rest: Vec::new() };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--model" => opts.model = it.next().ok_or("--model needs a directory")?.into(),
            "--query" => opts.query = true,
            _ if a.starts_with("--") => return Err(format!("unknown option {a}\n{USAGE}")),
            _ => opts.rest.push(a.clone()),
        }
    }
    Ok(opts)
}

fn default_model_dir() -> PathBuf {
    std::env::var_os("MNEMO_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("models/multilingual-e5-small-latin"))
}

fn load(dir: &std::path::Path) -> Result<BertEmbedder, String> {
    BertEmbedder::from_dir(dir, BertConfig::e5("multilingual-e5-small-latin"))
        .map_err(|e| e.to_string())
}

fn run(args: &[String]) -> Result<(), String> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    let opts = parse(rest)?;
    match cmd.as_str() {
        "embed" => embed(&opts),
        "compare" => compare(&opts),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}

fn embed(opts: &Opts) -> Result<(), String> {
    let mut embedder = load(&opts.model)?;
    let role = if opts.query { Role::Query } else { Role::Passage };
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
    let role = if opts.query { Role::Query } else { Role::Passage };
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
