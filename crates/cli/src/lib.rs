//! `mnemo`: the command-line tool, as a library: the `mnemo` binary is [`main`]; `mnemo-host`
//! (the component under wasmtime) shares the command line (`args`), the learning loop's and the
//! privacy commands (`learn`, `privacy`) and the bench's input (`jsonl`). Run `mnemo --help` for
//! the commands, `mnemo COMMAND --help` for one of them.

pub mod args;
pub mod bench;
pub mod bench_vectors;
pub mod demo;
pub mod globals;
pub mod jsonl;
pub mod learn;
pub mod mcp;
mod mcp_answer;
mod mcp_args;
mod mcp_wire;
pub mod memory;
pub mod privacy;
pub mod progress;

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

use args::{Command, Globals};
use clap::Parser;
use mnemo::embed::{cosine, polarity};
use mnemo::{Embedder, Role};
use mnemo_embed::{BertConfig, BertEmbedder};
use serde_json::json;

/// Long-term memory for LLM agents, on a store directory: remember episodes, recall them with
/// explained scores, keep versioned facts and rules.
#[derive(Parser, Debug)]
#[command(name = "mnemo", version, arg_required_else_help = true)]
struct Cli {
    #[command(flatten)]
    globals: Globals,
    #[command(subcommand)]
    command: Top,
}

/// The shared commands (`args::Command`, which `mnemo-host` has too) and those only `mnemo` has.
#[derive(clap::Subcommand, Debug)]
#[allow(clippy::large_enum_variant)]
enum Top {
    #[command(flatten)]
    Shared(Command),
    /// Serve this store as a Model Context Protocol server on stdin/stdout (tools remember,
    /// recall, context, expand, signal, facts, fact_get, fact_set, task_start, task_step, task_end; resources mnemo://rules and
    /// mnemo://observations)
    Mcp(mcp::Mcp),
    /// The mail agent's main job, end to end: replay 90 days of Maria Rossi's mail (episodes,
    /// behaviour signals, a nightly run each night), assemble the context for a new email from
    /// her client Marco Bertelli, then mark one observation wrong and show it gone
    Demo(demo::Demo),
    /// Compile a model file of the model directory (model.onnx by default) into an NNEF archive
    /// (model.nnef.tar; model.q4.nnef.tar from model.q4.onnx): the graph already typed,
    /// decluttered and fused, which loads without parsing or analysing it (same model id)
    CompileModel(CompileModel),
}

/// `mnemo compile-model`'s arguments.
#[derive(clap::Args, Debug)]
struct CompileModel {
    /// The ONNX file in the model directory to compile
    #[arg(long, default_value = "model.onnx")]
    file: String,
    /// Where to write the archive [default: the file's name with .onnx replaced by .nnef.tar,
    /// in the model directory]
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
}

/// The `mnemo` binary: parses the command line, runs the command, reports an error on stderr.
pub fn main() -> ExitCode {
    let cli: Cli = match args::parse("mnemo") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let done = match &cli.command {
        Top::Shared(c) => run(&cli.globals, c),
        Top::Mcp(a) => mcp::run(&cli.globals, a),
        Top::Demo(a) => demo::run(&cli.globals, a),
        Top::CompileModel(a) => compile_model(&cli.globals, a),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("mnemo: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(g: &Globals, command: &Command) -> Result<(), String> {
    match command {
        Command::Embed(a) => embed(g, a),
        Command::Compare(a) => compare(g, a),
        Command::Bench(a) => bench::run(g, a),
        Command::Remember(a) => memory::remember(g, a),
        Command::Ingest(a) => memory::ingest(g, a),
        Command::Recall(a) => memory::recall(g, a),
        Command::Timeline(a) => memory::timeline(g, a),
        Command::Fact(a) => memory::fact(g, a),
        Command::Facts(a) => memory::facts(g, a),
        Command::Status { id, status } => memory::status(g, *id, status),
        Command::Rule(a) => memory::rule(g, a),
        Command::Triple(a) => memory::triple(g, a),
        Command::Triples { subject, history } => memory::triples(g, subject, *history),
        Command::Rules(a) => memory::rules(g, a),
        Command::Learn(c) => learn::run(g, c, &mut memory::open_learning(g)?),
        Command::Privacy(c) => privacy::run(g, c, &mut memory::open_learning(g)?),
    }
}

fn compile_model(g: &Globals, a: &CompileModel) -> Result<(), String> {
    let dir = g.model_dir();
    let read = |name: &str| {
        std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()))
    };
    let archive = BertEmbedder::compile(&read(&a.file)?, &read("tokenizer.json")?)
        .map_err(|e| e.to_string())?;
    let out = a.out.clone().unwrap_or_else(|| dir.join(mnemo_embed::archive_name(&a.file)));
    let tmp = out.with_extension("tar.tmp");
    std::fs::write(&tmp, &archive)
        .and_then(|()| std::fs::rename(&tmp, &out))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    if g.json {
        println!("{}", json!({"wrote": out.display().to_string(), "bytes": archive.len()}));
    } else {
        println!("wrote {} ({} bytes)", out.display(), archive.len());
    }
    Ok(())
}

/// The default model (multilingual-e5-small, latin vocabulary) from a model directory.
pub fn load(dir: &Path) -> Result<BertEmbedder, String> {
    BertEmbedder::from_dir(dir, BertConfig::e5("multilingual-e5-small-latin"))
        .map_err(|e| e.to_string())
}

fn role(query: bool) -> Role {
    if query {
        Role::Query
    } else {
        Role::Passage
    }
}

/// One vector per stdin line; with `--json`, one array of them at the end.
fn embed(g: &Globals, a: &args::Embed) -> Result<(), String> {
    let mut embedder = load(&g.model_dir())?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut all = Vec::new();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| format!("stdin line {}: {e}", n + 1))?;
        let mut e =
            embedder.embed(&[&line], role(a.query)).map_err(|e| format!("line {}: {e}", n + 1))?;
        if e[0].truncated {
            eprintln!("mnemo: line {} was truncated to {} tokens", n + 1, e[0].tokens);
        }
        let vector = std::mem::take(&mut e[0].vector);
        if g.json {
            all.push(vector);
            continue;
        }
        let json = serde_json::to_string(&vector).map_err(|e| e.to_string())?;
        writeln!(out, "{json}").map_err(|e| e.to_string())?;
    }
    if g.json {
        writeln!(out, "{}", mnemo_json::value(&all)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn compare(g: &Globals, a: &args::Compare) -> Result<(), String> {
    let (first, others) = a.split()?;
    let mut embedder = load(&g.model_dir())?;
    let texts: Vec<&str> = a.texts.iter().map(String::as_str).collect();
    let v = embedder.embed(&texts, role(a.query)).map_err(|e| e.to_string())?;
    let rows = others.iter().zip(&v[1..]).map(|(b, e)| {
        let c = cosine(&v[0].vector, &e.vector);
        (
            b,
            c,
            e.polarity,
            polarity::stance(c, v[0].polarity, e.polarity, polarity::DEFAULT_SAME_TOPIC),
        )
    });
    if g.json {
        let against: Vec<_> = rows
            .map(|(b, c, p, s)| {
                json!({"text": b, "cosine": mnemo_json::value(c), "polarity": format!("{p:?}"), "stance": format!("{s:?}")})
            })
            .collect();
        let doc = json!({"model": embedder.model_id(), "text": first,
            "polarity": format!("{:?}", v[0].polarity), "against": against});
        println!("{doc}");
        return Ok(());
    }
    println!("model {}", embedder.model_id());
    println!("A: {first:?} ({:?})", v[0].polarity);
    for (b, c, p, s) in rows {
        println!("  cosine {c:.3}  {:<10} {:<9} {b:?}", format!("{p:?}"), format!("{s:?}"));
    }
    Ok(())
}
