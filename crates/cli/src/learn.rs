//! The learning loop's commands, shared by `mnemo` (the engine in-process) and `mnemo-host`
//! (the component under wasmtime), which compiles this file too (`#[path]`): each tool
//! implements [`Calls`] over its engine's JSON calls, and everything else — reading files,
//! printing text or the one `--json` document — is here.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};
use serde_json::Value;

use crate::globals::Globals;

/// The engine's JSON calls the learning commands need.
pub trait Calls {
    /// `signal_json`.
    fn signal(&mut self, ns: &str, json: &str) -> Result<String, String>;
    /// `signals_jsonl`.
    fn signals(&mut self, ns: &str, jsonl: &str) -> Result<String, String>;
    /// `nightly_json`.
    fn nightly(&mut self, ns: &str, now: i64, budget: Option<u64>) -> Result<String, String>;
    /// `load`, then `maintain_json` (`None`: until nothing is due).
    fn maintain(&mut self, ns: &str, force: bool, budget: Option<u64>) -> Result<String, String>;
    /// `observe_json`.
    fn observe(&mut self, ns: &str, now: i64) -> Result<String, String>;
    /// `observations_json`.
    fn observations(&mut self, ns: &str, statuses: &[String]) -> Result<String, String>;
    /// `feedback_json`.
    fn feedback(&mut self, ns: &str, id: u64, verdict: &str, now: i64) -> Result<String, String>;
    /// `promote_json`.
    fn promote(&mut self, ns: &str, now: i64) -> Result<String, String>;
    /// `outcome_json`.
    fn outcome(&mut self, ns: &str, id: u64, outcome: &str, now: i64) -> Result<String, String>;
    /// `outcome_report_json`.
    fn report(&mut self, ns: &str) -> Result<String, String>;
    /// `stats_json`.
    fn stats(&mut self, ns: &str, now: i64) -> Result<String, String>;
    /// `context_json`.
    fn context(&mut self, ns: &str, request: &str, now: i64) -> Result<String, String>;
    /// `expand`.
    fn expand(&mut self, ns: &str, id: &str) -> Result<String, String>;
    /// `nightly_log`.
    fn nightly_log(&mut self, ns: &str) -> Result<String, String>;
    /// `recall_observations` (the query embedded by the engine's model).
    fn recall_observations(
        &mut self,
        ns: &str,
        text: &str,
        k: u32,
        now: i64,
    ) -> Result<String, String>;
}

/// The learning loop's commands.
#[derive(Subcommand, Debug)]
pub enum Learn {
    /// Store one behaviour signal, given as a JSON object ({"ts","kind","agent","situation",
    /// "before","after",…})
    Signal {
        /// The signal as JSON
        // Not named `json`: that is the global `--json` flag's id, and clap would panic.
        #[arg(value_name = "JSON")]
        signal: String,
    },
    /// Store every behaviour signal of a JSONL file (every line is checked first; one bad line
    /// stores nothing)
    Signals {
        /// One signal per line
        #[arg(value_name = "FILE.jsonl")]
        file: PathBuf,
    },
    /// Run the nightly job: compact old episodes into weekly and monthly summaries, merge
    /// duplicate observations, cluster recurring lessons, detect patterns in the last 30 days
    /// of signals, promote rules, evict what rules represent, act on outcomes
    Nightly {
        /// Stop after about this many records read or written; the next run continues
        #[arg(long, value_name = "N")]
        budget: Option<u64>,
    },
    /// Run the background step for the namespace: write a snapshot when one is due, then
    /// build its vector graphs (seal recent vectors, merge segments)
    Maintain {
        /// Seal recent vectors even when fewer than a segment's worth
        #[arg(long)]
        force: bool,
        /// Stop after about this many work units (distances computed); run it again to
        /// continue. Without it the step runs until nothing is due
        #[arg(long, value_name = "N")]
        budget: Option<u64>,
    },
    /// Run the pattern detector now (at most 3 new observations)
    Observe,
    /// Assemble the context for a task: rules (whole, first), facts, the episodes recall
    /// finds, observations, each within its token cap; what did not fit is listed as withheld
    /// (--json: {sections, withheld, tokens: {total, budget, …}, disclosure, text})
    Context {
        /// The task: the new email, the request (several words are joined with spaces)
        #[arg(value_name = "TASK", required = true)]
        task: Vec<String>,
        /// Everything but the response buffer fits N tokens (the caps scale down; default
        /// 9,600 of a 32k window)
        #[arg(long, value_name = "N")]
        budget: Option<usize>,
        /// Disclosure level: 1 (rules, facts, episodes), 2 (+ observations), 3 (+ full
        /// history); chosen from the task when absent
        #[arg(long, value_parser = clap::value_parser!(u8).range(1..=3))]
        level: Option<u8>,
        /// The host's system prompt, from a file (counted against its cap, never cut)
        #[arg(long, value_name = "FILE")]
        system: Option<PathBuf>,
    },
    /// Print the full text behind an id a context listed (episode:42, rule:3, fact:KEY,
    /// observation:7)
    Expand {
        /// The id
        id: String,
    },
    /// Count the episodes per compaction tier and status, retrievable and cold, and the
    /// namespace's bytes (--json: {episodes, retrievable, cold, tiers, statuses, bytes})
    Stats,
    /// List the observations the engine counted (open ones; --all for every status), or with
    /// --like the open ones closest to a text, by cosine × exp(−λ·days)
    Observations {
        /// Include rejected and merged observations
        #[arg(long)]
        all: bool,
        /// Rank the open observations against this text instead
        #[arg(long, value_name = "TEXT", conflicts_with = "all")]
        like: Option<String>,
        /// How many to rank with --like
        #[arg(long, default_value_t = 5, requires = "like")]
        k: u32,
    },
    /// Print the reports of the nightly runs, oldest first
    NightlyLog,
    /// Tell the engine whether an observation is right or wrong (wrong is final)
    Feedback {
        /// The observation's id
        id: u64,
        /// right or wrong
        verdict: Verdict,
    },
    /// Promote the observations that qualify to active rules
    Promote,
    /// Report how the task a recall served went (the retrieval id recall printed)
    Outcome {
        /// The recall's retrieval id
        retrieval_id: u64,
        /// success, failure or partial
        outcome: OutcomeArg,
    },
    /// Which memories precede failures (harmful), successes (helpful) or nothing (rent)
    Report,
}

/// The user's verdict on an observation.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum Verdict {
    /// The observation is right: confidence goes up a band.
    Right,
    /// It is wrong: rejected for good, its rule demoted.
    Wrong,
}

/// How a task ended.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum OutcomeArg {
    /// It worked.
    Success,
    /// It failed.
    Failure,
    /// It partly worked.
    Partial,
}

fn parse(s: &str) -> Result<Value, String> {
    serde_json::from_str(s).map_err(|e| e.to_string())
}

fn ids(v: &Value) -> String {
    let list: Vec<String> = v
        .as_array()
        .map(|a| a.iter().map(|x| format!("#{}", x.as_u64().unwrap_or(0))).collect())
        .unwrap_or_default();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// Runs one learning command against `calls`.
pub fn run(g: &Globals, cmd: &Learn, calls: &mut dyn Calls) -> Result<(), String> {
    let (ns, now) = (g.ns.as_str(), g.now());
    let out = match cmd {
        Learn::Signal { signal } => calls.signal(ns, signal)?,
        Learn::Signals { file } => {
            let body =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            // A UTF-8 byte order mark is not part of the first line's JSON.
            let body = body.strip_prefix('\u{feff}').unwrap_or(&body);
            calls.signals(ns, body).map_err(|e| format!("{}: {e}", file.display()))?
        }
        Learn::Nightly { budget } => calls.nightly(ns, now, *budget)?,
        Learn::Maintain { force, budget } => calls.maintain(ns, *force, *budget)?,
        Learn::Observe => calls.observe(ns, now)?,
        Learn::Stats => calls.stats(ns, now)?,
        Learn::Context { task, budget, level, system } => {
            let system = match system {
                Some(f) => {
                    std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?
                }
                None => String::new(),
            };
            let req = serde_json::json!({
                "task": task.join(" "), "total": budget, "level": level, "system": system,
            });
            calls.context(ns, &req.to_string(), now)?
        }
        Learn::Expand { id } => {
            let text = calls.expand(ns, id)?;
            if g.json {
                println!("{}", serde_json::json!({ "id": id, "text": text }));
            } else {
                println!("{text}");
            }
            return Ok(());
        }
        Learn::Observations { like: Some(text), k, .. } => {
            calls.recall_observations(ns, text, *k, now)?
        }
        Learn::Observations { all, like: None, .. } => {
            let statuses = if *all { Vec::new() } else { vec!["open".to_string()] };
            calls.observations(ns, &statuses)?
        }
        Learn::NightlyLog => calls.nightly_log(ns)?,
        Learn::Feedback { id, verdict } => {
            let v = if matches!(verdict, Verdict::Right) { "right" } else { "wrong" };
            calls.feedback(ns, *id, v, now)?
        }
        Learn::Promote => calls.promote(ns, now)?,
        Learn::Outcome { retrieval_id, outcome } => {
            let o = match outcome {
                OutcomeArg::Success => "success",
                OutcomeArg::Failure => "failure",
                OutcomeArg::Partial => "partial",
            };
            calls.outcome(ns, *retrieval_id, o, now)?
        }
        Learn::Report => calls.report(ns)?,
    };
    if g.json {
        println!("{out}");
        return Ok(());
    }
    let v = parse(&out)?;
    match cmd {
        Learn::Signal { .. } => println!("signal {} stored", v["id"]),
        Learn::Signals { file } => println!(
            "stored {} signals from {}",
            v["ids"].as_array().map_or(0, Vec::len),
            file.display()
        ),
        Learn::Maintain { .. } => println!(
            "sealed {} vectors, {} merges, {} segments, {} snapshots ({} bytes), {} work units{}",
            v["sealed"],
            v["merges"],
            v["segments"],
            v["snapshots"],
            v["snapshotBytes"],
            v["work"],
            if v["done"].as_bool() == Some(true) { "" } else { ": run it again to continue" }
        ),
        Learn::Nightly { .. } => {
            if v["done"].as_bool() == Some(true) {
                println!("nightly run done ({} work units)", v["work"]);
            } else {
                println!(
                    "nightly run paused before {} ({} work units): run it again to continue",
                    v["next"].as_str().unwrap_or("?"),
                    v["work"]
                );
            }
            let compacted = v["compacted"].as_array().cloned().unwrap_or_default();
            for tier in [1, 2] {
                let of: Vec<&Value> =
                    compacted.iter().filter(|c| c["tier"].as_u64() == Some(tier)).collect();
                let sources: usize =
                    of.iter().map(|c| c["sources"].as_array().map_or(0, Vec::len)).sum();
                let what = if tier == 1 { "weekly summaries" } else { "monthly overviews" };
                println!("  {what}: {} (of {sources} records)", of.len());
            }
            println!("  lesson observations from episode clusters: {}", ids(&v["clustered"]));
            println!("  episodes evicted (a rule represents them): {}", ids(&v["evicted"]));
            println!("  signals read: {}", v["signalsRead"]);
            println!("  new observations: {}", ids(&v["inserted"]));
            println!("  recounted: {}", ids(&v["updated"]));
            println!("  merged: {}", ids(&v["merged"]));
            println!("  rules promoted: {}", ids(&v["promoted"]));
            println!("  harmful episodes down-weighted: {}", ids(&v["harmfulEpisodes"]));
            println!("  rules demoted by outcomes: {}", ids(&v["demotedRules"]));
            println!("  rules merged into a wider one: {}", ids(&v["mergedRules"]));
        }
        Learn::Stats => {
            let t = &v["tiers"];
            let st = &v["statuses"];
            println!(
                "{} episodes: {} retrievable, {} cold; {} bytes",
                v["episodes"], v["retrievable"], v["cold"], v["bytes"]
            );
            println!("  tiers: raw {}, weekly {}, monthly {}", t["raw"], t["weekly"], t["monthly"]);
            println!(
                "  statuses: raw {}, active {}, superseded {}, rejected {}",
                st["raw"], st["active"], st["superseded"], st["rejected"]
            );
        }
        Learn::Context { .. } => print_context(&v),
        Learn::Expand { .. } => {}
        Learn::Observe => {
            println!("read {} signals, found {} patterns", v["signals"], v["found"]);
            println!("  new observations: {}", ids(&v["inserted"]));
            println!("  updated: {}", ids(&v["updated"]));
        }
        Learn::NightlyLog => {
            for run in v.as_array().into_iter().flatten() {
                println!("{run}");
            }
        }
        Learn::Observations { like: Some(_), .. } => {
            for h in v.as_array().into_iter().flatten() {
                let o = &h["observation"];
                println!(
                    "#{} {:.3} (cosine {:.3} × recency {:.3}) {}",
                    o["id"],
                    h["score"].as_f64().unwrap_or(0.0),
                    h["cosine"].as_f64().unwrap_or(0.0),
                    h["recency"].as_f64().unwrap_or(0.0),
                    o["quote"].as_str().unwrap_or("")
                );
            }
        }
        Learn::Observations { .. } => {
            for o in v.as_array().into_iter().flatten() {
                println!(
                    "#{} [{}, {}] {}",
                    o["id"],
                    o["confidence"].as_str().unwrap_or("?"),
                    o["status"].as_str().unwrap_or("?"),
                    o["quote"].as_str().unwrap_or("")
                );
                let rule = o["rule"].as_u64().map_or(String::new(), |r| format!("; rule #{r}"));
                println!(
                    "   {} ({} of {}, {:.0}%; pattern {}{rule})",
                    o["evidence"].as_str().unwrap_or(""),
                    o["occurrences"],
                    o["opportunities"],
                    o["consistency"].as_f64().unwrap_or(0.0) * 100.0,
                    o["pattern"].as_str().unwrap_or("")
                );
            }
        }
        Learn::Feedback { id, .. } => {
            let o = &v["observation"];
            println!(
                "observation #{id}: {} ({} confidence)",
                o["status"].as_str().unwrap_or("?"),
                o["confidence"].as_str().or(o["counted"].as_str()).unwrap_or("?")
            );
            if v["reverseSignal"].is_u64() {
                println!("  rules demoted: {}", ids(&v["demotedRules"]));
                println!("  episodes rejected: {}", ids(&v["rejectedEpisodes"]));
                println!("  the pattern will not be proposed again");
            }
        }
        Learn::Promote => {
            for p in v.as_array().into_iter().flatten() {
                match p["mergedInto"].as_u64() {
                    Some(into) => println!(
                        "rule #{} from observation #{}: rule #{into} already says it (superseded)",
                        p["rule"], p["observation"]
                    ),
                    None => println!("rule #{} from observation #{}", p["rule"], p["observation"]),
                }
                if !p["absorbed"].as_array().is_none_or(|a| a.is_empty()) {
                    println!("  supersedes narrower rules: {}", ids(&p["absorbed"]));
                }
            }
        }
        Learn::Outcome { retrieval_id, .. } => {
            println!("outcome recorded for retrieval {retrieval_id}")
        }
        Learn::Report => {
            println!(
                "{} retrievals, {} with an outcome; failure rate {:.0}%",
                v["retrievals"],
                v["withOutcome"],
                v["baseFailureRate"].as_f64().unwrap_or(0.0) * 100.0
            );
            for e in v["entries"].as_array().into_iter().flatten() {
                println!(
                    "{} #{}: {} — retrieved {}x, before {} successes, {} failures, {} partial",
                    e["kind"].as_str().unwrap_or("?"),
                    e["id"],
                    e["verdict"].as_str().unwrap_or("?"),
                    e["retrieved"],
                    e["beforeSuccess"],
                    e["beforeFailure"],
                    e["beforePartial"]
                );
            }
        }
    }
    Ok(())
}

/// A context for people: its text, then each section's tokens against its cap, the level and
/// why, and what was withheld with the reason.
pub fn print_context(v: &Value) {
    println!("{}", v["text"].as_str().unwrap_or("").trim_end());
    println!();
    let t = &v["tokens"];
    println!(
        "— {} of {} tokens ({} counted; {} reserved for the answer); disclosure level {}: {}",
        t["total"],
        t["budget"],
        t["counter"].as_str().unwrap_or("?"),
        t["response"],
        v["disclosure"]["level"],
        v["disclosure"]["why"].as_str().unwrap_or("")
    );
    for s in v["sections"].as_array().into_iter().flatten() {
        let note = s["note"].as_str().filter(|n| !n.is_empty()).map(|n| format!(" — {n}"));
        println!(
            "  {:<13} {:>5} / {:<5} tokens, {} items{}",
            s["name"].as_str().unwrap_or("?"),
            s["tokens"],
            s["cap"],
            s["items"].as_array().map_or(0, Vec::len),
            note.unwrap_or_default()
        );
    }
    let withheld = v["withheld"].as_array().cloned().unwrap_or_default();
    if !withheld.is_empty() {
        println!("withheld (mnemo expand ID):");
        for w in withheld {
            println!(
                "  {} ({} tokens, {}): {}",
                w["id"].as_str().unwrap_or("?"),
                w["tokens"],
                w["reason"].as_str().unwrap_or(""),
                w["line"].as_str().unwrap_or("")
            );
        }
    }
}
