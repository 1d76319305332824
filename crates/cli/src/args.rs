//! The command line shared by `mnemo` and `mnemo-host`: the options every command takes and
//! one struct per command. `mnemo-host` uses this very module (it depends on this crate's
//! library), so the two tools cannot drift apart.
//!
//! To add a command: a variant in [`Command`] with a doc comment (its `--help` line), a struct
//! for its arguments, and its arm in each binary's `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use mnemo::record::{Origin, Outcome, Policy, RuleStatus, Source};
use mnemo::time::DAY;
use serde_json::{json, Value};

/// The largest `--k`: recall sizes its result lists by k, so an absurd k is refused up front.
pub const MAX_K: u64 = 10_000;

pub use crate::globals::{now_or, Globals};

/// The commands of both tools (`mnemo-host` adds its own next to these).
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Embed one text per stdin line and print one JSON unit vector per line
    Embed(Embed),
    /// Compare text A with each text B: cosine similarity, polarity and stance
    Compare(Compare),
    /// Benchmark retrieval: store JSONL items, answer JSONL queries, write ranked ids
    Bench(Bench),
    /// Store one episode (something that happened) in the namespace
    Remember(Remember),
    /// Store every episode of a JSONL file, one JSON object per line
    Ingest(Ingest),
    /// Find the episodes that best answer a query, each with its score explained
    Recall(Recall),
    /// List the latest episodes, oldest first, with their decay
    Timeline(Timeline),
    /// Change an episode's status: raw, active, superseded or rejected (rejected and
    /// superseded episodes leave recall; they stay in the log)
    Status {
        /// The episode's id
        id: u64,
        /// raw, active, superseded or rejected
        status: String,
    },
    /// Set, read, trace or roll back one fact (a key with a versioned value)
    #[command(subcommand)]
    Fact(Fact),
    /// List the facts that hold now
    Facts(Facts),
    /// Add a rule (an instruction injected into the agent's context)
    #[command(subcommand)]
    Rule(Rule),
    /// List the rules
    Rules(Rules),
    /// Assert an entity triple (subject, predicate, object)
    #[command(subcommand)]
    Triple(Triple),
    /// List the triples about a subject that hold now
    Triples {
        /// The subject entity
        subject: String,
        /// Include the triples a contradicting assertion ended
        #[arg(long)]
        history: bool,
    },
    #[command(flatten)]
    Learn(crate::learn::Learn),
    #[command(flatten)]
    Privacy(crate::privacy::Privacy),
}

/// Joins a command's words into its text; refuses a blank one.
pub fn joined(words: &[String], what: &str) -> Result<String, String> {
    let t = words.join(" ");
    if t.trim().is_empty() {
        return Err(format!("{what} needs a text"));
    }
    Ok(t)
}

#[derive(Args, Debug)]
pub struct Embed {
    /// Embed the texts as search queries instead of as passages to be found
    #[arg(long)]
    pub query: bool,
}

#[derive(Args, Debug)]
pub struct Compare {
    /// Text A, then the texts to compare it with
    #[arg(value_name = "TEXT", required = true)]
    pub texts: Vec<String>,
    /// Embed the texts as search queries instead of as passages
    #[arg(long)]
    pub query: bool,
}

impl Compare {
    /// A and the others (at least one).
    pub fn split(&self) -> Result<(&String, &[String]), String> {
        match self.texts.split_first() {
            Some((a, others)) if !others.is_empty() => Ok((a, others)),
            _ => Err("compare needs at least two texts".into()),
        }
    }
}

#[derive(Args, Debug)]
pub struct Bench {
    /// Items to store, one {"id","ns","ts","text"} per line
    #[arg(long, value_name = "ITEMS.jsonl")]
    pub items: PathBuf,
    /// Queries to answer, one {"qid","ns","ts","text"} per line
    #[arg(long, value_name = "QUERIES.jsonl")]
    pub queries: PathBuf,
    /// Where to write one {"qid","ranked":[ids]} per line
    #[arg(long, value_name = "RUN.jsonl")]
    pub out: PathBuf,
    /// Scoring formulas to rank with, comma-separated: balanced (the default), plain-decay (formerly seed), weighted,
    /// lexical (BM25 alone), dense (cosine alone). With several, each writes OUT with
    /// `.FORMULA` before its extension; items and queries are embedded once.
    #[arg(long, default_value = "balanced", value_delimiter = ',')]
    pub formula: Vec<String>,
    /// Override scoring parameters, comma-separated NAME=VALUE: lexical_weight, recency_floor,
    /// cosine_floor, sharpness, shadow_cosine, shadow_penalty, context_weight, context_gap_ms,
    /// importance_weight, past_recency_floor, stems (0 or 1)
    #[arg(long, value_name = "NAME=VALUE", value_delimiter = ',')]
    pub set: Vec<String>,
    /// Keep the embeddings of items and queries in this directory and reuse them when the
    /// model and the texts are the same (re-running with another formula skips embedding)
    #[arg(long, value_name = "DIR")]
    pub vector_cache: Option<PathBuf>,
    /// Embed each item whole, cut at the model's token limit, instead of a long one as
    /// overlapping passages (to measure what passages change)
    #[arg(long)]
    pub truncate: bool,
    /// Embedders to run in parallel, each on a thread of its own with its own copy of the
    /// model (vectors agree whatever the count, up to float rounding: a text repeated in the items
    /// may be taken from one embedder's cache or embedded in another batch)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub threads: u64,
    /// The model (`--model`) takes no `query: ` / `passage: ` prefixes: a sentence-transformers
    /// model such as all-MiniLM-L6-v2 (`tools/fetch-minilm`), to compare dense retrievers
    #[arg(long)]
    pub plain_model: bool,
    /// How many ids to rank per query (at most 10000)
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=MAX_K))]
    pub k: u64,
    /// Print each ranked id's final score too (`"scores"`, in rank order), for comparing
    /// rankings with a tolerance (tools/golden-ranking)
    #[arg(long)]
    pub scores: bool,
}

#[derive(Args, Debug)]
pub struct Remember {
    /// What happened (several words are joined with spaces; put `--` before a text that starts
    /// with `-`)
    #[arg(value_name = "TEXT", required = true)]
    pub text: Vec<String>,
    /// How it ended: success, failure, partial or unknown
    #[arg(long)]
    pub outcome: Option<Outcome>,
    /// The lesson learnt, in a few words
    #[arg(long)]
    pub verdict: Option<String>,
    /// The agent that acted
    #[arg(long)]
    pub agent: Option<String>,
    /// The kind of event (e.g. tool_call, message)
    #[arg(long)]
    pub kind: Option<String>,
    /// The tool in use (git, npm, sql…)
    #[arg(long)]
    pub tool: Option<String>,
    /// The stage of the task (e.g. build, deploy)
    #[arg(long)]
    pub stage: Option<String>,
    /// The class of error met (e.g. lockfile, timeout)
    #[arg(long)]
    pub error_class: Option<String>,
    /// An entity it is about (repeatable)
    #[arg(long = "entity", value_name = "ENTITY")]
    pub entities: Vec<String>,
    /// A tag (repeatable)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Where the text comes from: user (the person at this terminal, the default), admin,
    /// agent, tool, web, email or unknown. Only user and admin are trusted: text of any other
    /// origin is marked untrusted in the context, and withheld when it reads as instructions
    #[arg(long, default_value = "user")]
    pub origin: Origin,
}

impl Remember {
    /// The episode as the engine's JSON (`record::json`), created at `at`.
    pub fn episode(&self, at: i64) -> Result<Value, String> {
        Ok(json!({
            "text": joined(&self.text, "remember")?, "createdAt": at,
            "outcome": self.outcome, "verdict": self.verdict, "agent": self.agent,
            "kind": self.kind, "tool": self.tool, "stage": self.stage,
            "error_class": self.error_class, "entities": self.entities, "tags": self.tags,
            "origin": self.origin,
        }))
    }
}

#[derive(Args, Debug)]
pub struct Ingest {
    /// JSONL file, one episode per line: {ts, text, outcome, verdict, agent, tool, tags, …}
    #[arg(value_name = "FILE.jsonl")]
    pub file: PathBuf,
    /// The most trusted origin a line may claim (by its "origin" or "source"): unknown (the
    /// default: a file is untrusted unless you vouch for it), user or admin. A line claiming
    /// user or admin beyond this is refused, and then nothing is stored
    #[arg(long, default_value = "unknown")]
    pub origin: Origin,
}

#[derive(Args, Debug)]
pub struct Recall {
    /// What to recall, in words (several words are joined with spaces)
    #[arg(value_name = "QUERY", required = true)]
    pub query: Vec<String>,
    /// How many episodes to return (at most 10000)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=MAX_K))]
    pub k: u64,
    /// Also search cold records: episodes compaction summarised and episodes a rule now
    /// represents (full history search). Without it a summary stands for its sources.
    #[arg(long)]
    pub include_cold: bool,
}

impl Recall {
    /// The query as the engine's JSON.
    pub fn json(&self) -> Result<Value, String> {
        Ok(json!({"text": joined(&self.query, "recall")?, "k": self.k,
            "includeCold": self.include_cold}))
    }
}

#[derive(Args, Debug)]
pub struct Timeline {
    /// How many episodes to list
    #[arg(long, default_value_t = 20)]
    pub limit: u32,
}

#[derive(Subcommand, Debug)]
pub enum Fact {
    /// Write a new version of a fact (unless a stronger source holds it)
    Set(FactSet),
    /// Show the fact that holds now
    Get {
        /// The fact's key
        key: String,
        /// Include a fact below the confidence threshold
        #[arg(long)]
        all: bool,
    },
    /// Show every version of a fact, oldest first
    History {
        /// The fact's key
        key: String,
    },
    /// Make an old version of a fact current again (as a new version)
    Rollback {
        /// The fact's key
        key: String,
        /// The version to restore (see `fact history`)
        version: u32,
    },
}

#[derive(Args, Debug)]
pub struct FactSet {
    /// The fact's key (e.g. language, billing.currency)
    pub key: String,
    /// Its value (several words are joined with spaces)
    #[arg(value_name = "VALUE", required = true)]
    pub value: Vec<String>,
    /// Who says so: explicit (the user said it), admin or implicit (inferred, the default); a
    /// weaker source never overwrites a stronger one
    #[arg(long, default_value = "implicit")]
    pub source: Source,
    /// Where the text comes from: user (the person at this terminal, the default), admin,
    /// agent, tool, web, email or unknown. Only user and admin are trusted: any other origin
    /// writes implicit facts and never replaces what a trusted one set
    #[arg(long, default_value = "user")]
    pub origin: Origin,
    /// Confidence, 0 to 1
    #[arg(long, default_value_t = 1.0)]
    pub confidence: f32,
    /// When it may be shown to the model: auto-inject, sensitive or never-inject
    #[arg(long, default_value = "auto-inject")]
    pub policy: Policy,
    /// Let the fact expire after this many days
    #[arg(long, value_name = "DAYS")]
    pub ttl_days: Option<f64>,
}

impl FactSet {
    /// The value, words joined.
    pub fn value(&self) -> String {
        self.value.join(" ")
    }

    /// `--ttl-days` in ms.
    pub fn ttl_ms(&self) -> Option<i64> {
        self.ttl_days.map(|d| (d * DAY as f64) as i64)
    }

    /// The fact as the engine's JSON (`set_fact_json`).
    pub fn json(&self) -> Value {
        json!({
            "key": self.key, "value": self.value(), "source": self.source, "origin": self.origin,
            "confidence": self.confidence, "policy": self.policy, "ttlMs": self.ttl_ms(),
        })
    }
}

#[derive(Args, Debug)]
pub struct Facts {
    /// Include facts below the confidence threshold
    #[arg(long)]
    pub all: bool,
}

#[derive(Subcommand, Debug)]
pub enum Rule {
    /// Add a rule
    Add {
        /// The rule, as it will be injected (several words are joined with spaces)
        #[arg(value_name = "TEXT", required = true)]
        text: Vec<String>,
        /// candidate (proposed, not injected) or active (injected)
        #[arg(long, default_value = "active")]
        status: RuleStatus,
        /// Who writes it: user (the person at this terminal, the default) or admin; rules from
        /// any other origin are refused
        #[arg(long, default_value = "user")]
        origin: Origin,
    },
    /// Change a rule's status: active, candidate (proposed, not injected) or demoted; a rule
    /// leaving the active set gives back the rules it absorbed
    Status {
        /// The rule's id
        id: u64,
        /// candidate, active or demoted (superseded is set only by merging)
        status: RuleStatus,
    },
}

#[derive(Subcommand, Debug)]
pub enum Triple {
    /// Assert (subject, predicate, object): agreeing assertions raise its confidence, a
    /// contradicting one ends the current triple unless that one has a higher source
    Set {
        /// The subject entity ("Marco")
        subject: String,
        /// The predicate ("works_at"); one object per subject and predicate holds at a time
        predicate: String,
        /// The object ("Acme")
        object: String,
        /// How sure, from 0 to 1
        #[arg(long, default_value_t = 1.0)]
        confidence: f32,
        /// Who says so: explicit (the user, the default here), admin or implicit
        #[arg(long, default_value = "explicit")]
        source: Source,
    },
}

impl Triple {
    /// The triple as the engine's JSON.
    pub fn json(&self) -> Value {
        let Triple::Set { subject, predicate, object, confidence, source } = self;
        json!({"subject": subject, "predicate": predicate, "object": object,
            "confidence": mnemo_json::value(confidence), "source": source})
    }
}

#[derive(Args, Debug)]
pub struct Rules {
    /// Include candidate, demoted and superseded rules, not only active ones
    #[arg(long)]
    pub all: bool,
}

impl Rules {
    /// The statuses to list (empty: every status).
    pub fn statuses(&self) -> Vec<RuleStatus> {
        if self.all {
            Vec::new()
        } else {
            vec![RuleStatus::Active]
        }
    }

    /// [`Rules::statuses`] by name, for the JSON calls.
    pub fn status_names(&self) -> Vec<String> {
        self.statuses().iter().map(|s| json!(s).as_str().unwrap_or_default().to_string()).collect()
    }
}

/// Parses the command line (`std::env::args_os`, so a non-UTF-8 argument is an error, not a
/// panic). `--help` and `--version` print on stdout and end with success; a usage error prints
/// on stderr as `PROG: message` and ends with exit code 1, like every other error.
pub fn parse<C: clap::Parser>(prog: &str) -> Result<C, ExitCode> {
    C::try_parse_from(std::env::args_os()).map_err(|e| {
        if !e.use_stderr() {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        let msg = e.render().to_string();
        match msg.strip_prefix("error: ") {
            Some(m) => eprint!("{prog}: {m}"),
            None => eprint!("{msg}"),
        }
        ExitCode::FAILURE
    })
}

impl Bench {
    /// Where `formula`'s ranking goes: `--out` itself for one formula, else `run.jsonl` +
    /// `dense` → `run.dense.jsonl`.
    pub fn out_for(&self, formula: &str) -> PathBuf {
        if self.formula.len() == 1 {
            return self.out.clone();
        }
        let stem = self.out.file_stem().map(|s| s.to_string_lossy().into_owned());
        let ext = self.out.extension().map(|e| format!(".{}", e.to_string_lossy()));
        self.out.with_file_name(format!(
            "{}.{formula}{}",
            stem.unwrap_or_default(),
            ext.unwrap_or_default()
        ))
    }
}
