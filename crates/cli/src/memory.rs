//! Store commands: remember, ingest, recall, timeline, facts and rules against a directory.
//! With `--json` each prints one JSON document: the engine's JSON shapes (`mnemo_json`), the
//! same as `mnemo-host` prints from the component.

use mnemo::engine::{FactInput, FactWrite, IngestOptions};
use mnemo::record::json::episode_from_json;
use mnemo::record::Fact;
use mnemo::store::file::FileStore;
use mnemo::time::{format_date, DAY};
use mnemo::{Config, Engine, Query, Remembered};
use mnemo_json::Json;
use serde_json::json;

use crate::args::{self, Globals};

type Store = Engine<FileStore>;

/// Work units per slice of a nightly run drawn with a progress bar. Each slice ends by
/// persisting the run's cursor, so a slice is large enough for that write to be small beside it.
const NIGHTLY_SLICE: u64 = 5_000;

fn err(e: mnemo::Error) -> String {
    e.to_string()
}

/// An enum's name as the JSON shapes spell it ("explicit", "auto-inject", "active"), for
/// output meant for people.
fn name(v: impl serde::Serialize) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// The engine with the model when its directory holds one (the learning commands use it to
/// spot near-duplicate observations, and work without it).
pub fn open_learning(g: &Globals) -> Result<Store, String> {
    open(g, g.model_dir().join("model.onnx").is_file())
}

fn open(g: &Globals, with_model: bool) -> Result<Store, String> {
    let store = g.open_store().map_err(err)?;
    let damage = store.damage();
    if !damage.is_empty() {
        eprintln!(
            "warning: {} stretch(es) of the store could not be read and are kept aside (first: \
             bytes {}..{}, {}); `mnemo quarantined` lists them; restore what they held from a \
             backup or an export",
            damage.len(),
            damage[0].at,
            damage[0].at + damage[0].len,
            damage[0].reason
        );
    }
    let engine = Engine::new(store, Config::default());
    Ok(if with_model {
        engine.with_embedder(Box::new(crate::load(&g.model_dir())?))
    } else {
        engine
    })
}

pub fn remember(g: &Globals, a: &args::Remember) -> Result<(), String> {
    let json = a.episode(g.now())?;
    let e = episode_from_json(&json).map_err(err)?;
    let mut engine = open(g, true)?;
    if g.json {
        println!("{}", Json(&mut engine).remember(&g.ns, &json.to_string(), None).map_err(err)?);
        return Ok(());
    }
    match engine.remember(&g.ns, e, None).map_err(err)? {
        Remembered::Stored { id, importance, reason } => {
            println!("remembered #{id} (importance {importance:.2}: {reason})")
        }
        Remembered::Discarded { reason } => println!("discarded: {reason}"),
    }
    Ok(())
}

pub fn recall(g: &Globals, a: &args::Recall) -> Result<(), String> {
    let mut engine = open(g, true)?;
    let mut query = Query::new(args::joined(&a.query, "recall")?, a.k as usize);
    query.include_cold = a.include_cold;
    let r = engine.recall(&g.ns, &query, g.now()).map_err(err)?;
    if g.json {
        println!("{}", mnemo_json::recall_answer(&r).map_err(err)?);
        return Ok(());
    }
    if let Some(t) = &r.time {
        let w = r.window.map_or("dropped: nothing in it".into(), |w| {
            format!("{} to {}", format_date(w.from.max(0)), format_date(w.to - 1))
        });
        println!("time: {:?} -> {w}", t.phrase);
    }
    for (i, h) in r.hits.iter().enumerate() {
        let (e, x) = (&h.episode, &h.explanation);
        println!(
            "{}. [{}] {}  (#{}, tier {}, {})",
            i + 1,
            format_date(e.created_at),
            e.text,
            e.id,
            e.tier,
            name(e.status)
        );
        println!(
            "   final {:.3} = relevance {:.3} x recency {:.3} x importance {:.2}",
            x.final_score, x.relevance, x.recency, x.importance
        );
        let terms: Vec<String> = x.terms.iter().map(|(t, s)| format!("{t} {s:.2}")).collect();
        println!(
            "   bm25 {:.2} [{}] -> lex {:.2} | cosine {:.3} -> sim {:.2} | fused {:.3} | {:.1} days since last access | via {}",
            x.bm25, terms.join(", "), x.lex, x.cosine, x.sim, x.fused, x.age_days, x.sources.join("+")
        );
        if let Some(m) = x.passage {
            let window = e.text.get(m.start as usize..m.end as usize).unwrap_or_default();
            let words: Vec<&str> = window.split_whitespace().collect();
            let more = if words.len() > 12 { " …" } else { "" };
            println!(
                "   cosine of passage {} (bytes {}..{}): \"{}{more}\"",
                m.index + 1,
                m.start,
                m.end,
                words[..words.len().min(12)].join(" ")
            );
        }
        if !e.evidence.is_empty() {
            let ids: Vec<String> = e.evidence.iter().map(|i| format!("#{i}")).collect();
            println!("   summarises {} (mnemo recall --include-cold reaches them)", ids.join(" "));
        }
        if e.represented_by != 0 {
            println!("   cold: rule #{} now represents it", e.represented_by);
        }
        if let Some(by) = x.shadowed_by {
            let f = engine.config().scoring.shadow_penalty;
            println!("   shadowed by #{by} (newer, nearly the same): score x {f}");
        }
        if x.outcome_weight != 1.0 {
            println!(
                "   preceded failures far more often than usual: score x {}",
                x.outcome_weight
            );
        }
    }
    if let Some(id) = r.retrieval_id {
        println!("retrieval {id} (report how the task went: mnemo outcome {id} success|failure)");
    }
    Ok(())
}

pub fn timeline(g: &Globals, a: &args::Timeline) -> Result<(), String> {
    let mut engine = open(g, false)?;
    let at = g.now();
    let limit = a.limit as usize;
    if g.json {
        println!("{}", Json(&mut engine).timeline(&g.ns, at + 1, limit).map_err(err)?);
        return Ok(());
    }
    for e in engine.timeline(&g.ns, at + 1, limit).map_err(err)? {
        let decay = engine
            .config()
            .scoring
            .decay_factor((at - e.last_accessed_at) as f32 / DAY as f32, e.tier);
        println!(
            "[{}] #{} tier {} {} importance {:.2} decay {:.3} accessed {}x  {}",
            format_date(e.created_at),
            e.id,
            e.tier,
            name(e.status),
            e.importance,
            decay,
            e.access_count,
            e.text
        );
    }
    Ok(())
}

pub fn facts(g: &Globals, a: &args::Facts) -> Result<(), String> {
    let engine = open(g, false)?;
    if g.json {
        println!("{}", Json(&engine).facts(&g.ns, g.now(), a.all).map_err(err)?);
        return Ok(());
    }
    for f in engine.facts(&g.ns, g.now(), &[], a.all).map_err(err)? {
        println!(
            "{} = {}  (v{}, {}, confidence {:.2}, {})",
            f.key,
            f.value,
            f.version,
            name(f.source),
            f.confidence,
            name(f.policy)
        );
    }
    Ok(())
}

pub fn rule(g: &Globals, a: &args::Rule) -> Result<(), String> {
    let mut engine = open(g, false)?;
    let (text, status, origin) = match a {
        args::Rule::Add { text, status, origin } => (text, status, origin),
        args::Rule::Status { id, status } => {
            engine.set_rule_status(&g.ns, *id, *status, g.now()).map_err(err)?;
            if g.json {
                println!("{}", json!({"id": id, "status": status}));
            } else {
                println!("rule #{id} is {}", name(status));
            }
            return Ok(());
        }
    };
    let id = engine
        .add_rule(&g.ns, &args::joined(text, "rule add")?, "", *status, *origin, g.now())
        .map_err(err)?;
    if g.json {
        println!("{}", json!({"id": id, "status": status}));
    } else {
        println!("rule #{id} added ({})", name(status));
    }
    Ok(())
}

/// `mnemo status ID STATUS`: an episode's status.
pub fn status(g: &Globals, id: u64, to: &str) -> Result<(), String> {
    let mut engine = open(g, false)?;
    engine.set_status(&g.ns, id, mnemo_json::status(to).map_err(err)?).map_err(err)?;
    if g.json {
        println!("{}", json!({"id": id, "status": to}));
    } else {
        println!("episode #{id} is {to}");
    }
    Ok(())
}

/// `mnemo triple set S P O`.
pub fn triple(g: &Globals, a: &args::Triple) -> Result<(), String> {
    let mut engine = open(g, false)?;
    let out = Json(&mut engine).assert_triple(&g.ns, &a.json().to_string(), g.now());
    let out = out.map_err(err)?;
    if g.json {
        println!("{out}");
    } else {
        let t: serde_json::Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
        println!(
            "{} {} {} (confidence {}, {})",
            t["subject"].as_str().unwrap_or(""),
            t["predicate"].as_str().unwrap_or(""),
            t["object"].as_str().unwrap_or(""),
            t["confidence"],
            t["source"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

/// `mnemo triples SUBJECT`.
pub fn triples(g: &Globals, subject: &str, history: bool) -> Result<(), String> {
    let engine = open(g, false)?;
    if g.json {
        println!("{}", Json(&engine).triples(&g.ns, subject, history).map_err(err)?);
        return Ok(());
    }
    for t in engine.triples(&g.ns, subject, history).map_err(err)? {
        let ended = t.valid_to.map(|to| format!(", ended {to}")).unwrap_or_default();
        println!(
            "{} {} {} (confidence {}, {}{ended})",
            t.subject,
            t.predicate,
            t.object,
            mnemo_json::value(t.confidence),
            name(t.source)
        );
    }
    Ok(())
}

pub fn rules(g: &Globals, a: &args::Rules) -> Result<(), String> {
    let engine = open(g, false)?;
    if g.json {
        println!("{}", Json(&engine).rules(&g.ns, &a.status_names()).map_err(err)?);
        return Ok(());
    }
    for r in engine.rules(&g.ns, &a.statuses()).map_err(err)? {
        match r.superseded_by {
            Some(by) => println!("#{} [{} by #{by}] {}", r.id, name(r.status), r.text),
            None => println!("#{} [{}] {}", r.id, name(r.status), r.text),
        }
        if !r.evidence.is_empty() {
            println!("   {} (observation #{})", r.evidence, r.observation);
        }
    }
    Ok(())
}

/// Stores the lines of a JSONL file as episodes, all or nothing (`engine::import`): every line
/// is checked and embedded first, then one atomic batch stores them; lines imported before are
/// skipped.
pub fn ingest(g: &Globals, a: &args::Ingest) -> Result<(), String> {
    let path = a.file.display();
    let body = std::fs::read(&a.file).map_err(|e| format!("{path}: read: {e}"))?;
    let body = String::from_utf8(body).map_err(|e| format!("{path}: not UTF-8: {e}"))?;
    let embedder = crate::load(&g.model_dir())?;
    let mut engine = open(g, false)?.with_embedder(Box::new(embedder));
    let options = IngestOptions { origin: a.origin, now: g.now() };
    let bar = crate::progress::bar(0, "embedding");
    let r = engine
        .ingest_jsonl_with(&g.ns, &body, &options, None, &mut |done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        })
        .map_err(|e| format!("{path}: {} (nothing was stored)", err(e)))?;
    bar.finish_and_clear();
    // Seals the vectors and, past `snapshot_after` changes, snapshots the namespace so the
    // next command opens it without rebuilding.
    engine.maintain(false, None).map_err(err)?;
    let ns = &g.ns;
    let (kept, dropped, dup) = (r.stored.len(), r.discarded.len(), r.duplicates.len());
    if g.json {
        println!(
            "{}",
            json!({"ns": ns, "ingested": kept, "discarded": dropped, "duplicates": dup, "ids": r.stored})
        );
    } else {
        println!(
            "ingested {kept} episodes into namespace {ns:?} ({dropped} discarded by the write \
             policy, {dup} imported before)"
        );
    }
    Ok(())
}

pub fn fact(g: &Globals, a: &args::Fact) -> Result<(), String> {
    let (ns, at) = (&g.ns, g.now());
    let mut engine = open(g, false)?;
    let show = |f: &Fact| {
        println!(
            "v{} {} = {}  ({}, confidence {:.2}, {}, {})",
            f.version,
            f.key,
            f.value,
            name(f.source),
            f.confidence,
            name(f.policy),
            format_date(f.updated_at)
        )
    };
    match a {
        args::Fact::Set(s) if g.json => {
            println!("{}", Json(&mut engine).set_fact(ns, &s.json().to_string(), at).map_err(err)?)
        }
        args::Fact::Set(s) => {
            let input = FactInput {
                key: s.key.clone(),
                value: s.value(),
                source: s.source,
                origin: s.origin,
                confidence: s.confidence,
                policy: s.policy,
                ttl_ms: s.ttl_ms(),
            };
            match engine.write_fact(ns, &input, at).map_err(err)? {
                FactWrite::Written { version } => {
                    println!("{} = {} (v{version})", s.key, s.value())
                }
                FactWrite::Confirmed { version } => {
                    println!("{} = {} confirmed (v{version}, unchanged)", s.key, s.value())
                }
                FactWrite::Refused { held_by } => println!(
                    "refused: {} is held by source {}, which this one may not overwrite",
                    s.key,
                    name(held_by)
                ),
            }
        }
        args::Fact::Get { key, all } if g.json => {
            println!("{}", Json(&engine).fact(ns, key, at, *all).map_err(err)?)
        }
        args::Fact::Get { key, all } => match engine.fact(ns, key, at, *all).map_err(err)? {
            Some(f) => show(&f),
            None => {
                return Err(format!(
                "fact {key:?} is not set (or expired, or below the confidence threshold: try --all)"
            ))
            }
        },
        args::Fact::History { key } if g.json => {
            println!("{}", Json(&engine).fact_history(ns, key).map_err(err)?)
        }
        args::Fact::History { key } => {
            engine.fact_history(ns, key).map_err(err)?.iter().for_each(show)
        }
        args::Fact::Rollback { key, version } => {
            let v = engine.rollback_fact(ns, key, *version, at).map_err(err)?;
            if g.json {
                println!("{}", json!({"version": v}));
            } else {
                println!("now v{v}");
            }
        }
    }
    Ok(())
}

impl crate::privacy::Calls for Store {
    fn erase(&mut self, ns: &str, what: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).erase(ns, what, now).map_err(err)
    }
    fn correct(&mut self, ns: &str, id: u64, fix: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).correct(ns, id, fix, now).map_err(err)
    }
    fn request_erasure(&mut self, ns: &str, what: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).request_erasure(ns, what, now).map_err(err)
    }
    fn export_readable(&mut self, ns: &str, now: i64) -> Result<String, String> {
        self.export_json(ns, now).map_err(err)
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
        let mut options = mnemo::engine::ExportOptions::from_random(random, now).map_err(err)?;
        options.log_n = log_n;
        let mut sink = |b: &[u8]| {
            out.write_all(b)
                .map_err(|e| mnemo::Error::Io { path: "export".into(), detail: e.to_string() })
        };
        Engine::export_encrypted(self, ns, passphrase, &options, &mut sink).map(|_| ()).map_err(err)
    }
    fn import_encrypted(
        &mut self,
        ns: &str,
        passphrase: &str,
        file: &[u8],
    ) -> Result<String, String> {
        Json(&mut *self).import_encrypted(ns, passphrase, file).map_err(err)
    }
    fn reembed(&mut self, ns: &str) -> Result<String, String> {
        Json(&mut *self).reembed(ns).map_err(err)
    }
    fn quarantined(&mut self, ns: &str) -> Result<String, String> {
        Json(&mut *self).quarantined(ns).map_err(err)
    }
}

impl crate::learn::Calls for Store {
    fn signal(&mut self, ns: &str, json: &str) -> Result<String, String> {
        self.signal_json(ns, json).map_err(err)
    }
    fn signals(&mut self, ns: &str, jsonl: &str) -> Result<String, String> {
        Json(&mut *self).signals(ns, jsonl).map_err(err)
    }
    fn maintain(&mut self, ns: &str, force: bool, budget: Option<u64>) -> Result<String, String> {
        self.load(ns).map_err(err)?;
        Json(&mut *self).maintain(force, budget).map_err(err)
    }
    fn nightly(&mut self, ns: &str, now: i64, budget: Option<u64>) -> Result<String, String> {
        use std::io::IsTerminal;
        if budget.is_some() || !std::io::stderr().is_terminal() {
            return Json(&mut *self).nightly(ns, now, budget).map_err(err);
        }
        // On a terminal: the run in budgeted slices (each one batch, resumable as any budgeted
        // run is), with a bar of the steps done. What it writes is what one call writes; a run
        // cut short (Ctrl-C) leaves its cursor, and the next `nightly` continues that run.
        let steps = mnemo::engine::NIGHTLY_STEPS;
        let bar = crate::progress::bar(steps.len() as u64 - 1, "nightly");
        let mut work = 0;
        loop {
            let r = Engine::nightly(self, ns, now, Some(NIGHTLY_SLICE)).map_err(err)?;
            work += r.work;
            let at = steps.iter().position(|s| s.name() == r.next).unwrap_or(0);
            bar.set_position(at as u64);
            bar.set_message(format!("nightly: {} ({work} work units)", r.next));
            if r.done {
                bar.finish_and_clear();
                let report = mnemo::engine::Nightly { work, ..r };
                return serde_json::to_string(&report).map_err(|e| e.to_string());
            }
        }
    }
    fn observe(&mut self, ns: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).observe(ns, now).map_err(err)
    }
    fn observations(&mut self, ns: &str, statuses: &[String]) -> Result<String, String> {
        Json(&*self).observations(ns, statuses).map_err(err)
    }
    fn nightly_log(&mut self, ns: &str) -> Result<String, String> {
        Json(&*self).nightly_log(ns).map_err(err)
    }
    fn recall_observations(
        &mut self,
        ns: &str,
        text: &str,
        k: u32,
        now: i64,
    ) -> Result<String, String> {
        Json(&mut *self).recall_observations(ns, text, None, k as usize, now).map_err(err)
    }
    fn feedback(&mut self, ns: &str, id: u64, verdict: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).feedback(ns, id, verdict, now).map_err(err)
    }
    fn promote(&mut self, ns: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).promote(ns, now).map_err(err)
    }
    fn outcome(&mut self, ns: &str, id: u64, outcome: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).outcome(ns, id, outcome, now).map_err(err)
    }
    fn report(&mut self, ns: &str) -> Result<String, String> {
        Json(&*self).outcome_report(ns).map_err(err)
    }
    fn stats(&mut self, ns: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).stats(ns, now).map_err(err)
    }
    fn context(&mut self, ns: &str, request: &str, now: i64) -> Result<String, String> {
        Json(&mut *self).context(ns, request, now).map_err(err)
    }
    fn expand(&mut self, ns: &str, id: &str) -> Result<String, String> {
        Engine::expand(self, ns, id).map_err(err)
    }
}
