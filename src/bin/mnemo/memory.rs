//! Store commands: remember, ingest, recall, timeline, facts and rules against a directory.

use std::io::{BufRead, BufReader};

use mnemo::record::json::episode_from_json;
use mnemo::record::{Policy, RuleStatus, Source};
use mnemo::store::file::FileStore;
use mnemo::time::{format_date, parse_iso8601, DAY};
use mnemo::{Config, Embedder, Engine, Query, Remembered, Role};
use serde_json::Value;

use crate::Opts;

type Store = Engine<FileStore>;

fn open(opts: &Opts, with_model: bool) -> Result<Store, String> {
    let dir = opts.get("store").unwrap_or("mnemo-store");
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    let store = FileStore::open(dir).map_err(|e| e.to_string())?;
    let engine = Engine::new(store, Config::default());
    Ok(if with_model { engine.with_embedder(Box::new(crate::load(&opts.model)?)) } else { engine })
}

fn now(opts: &Opts) -> Result<i64, String> {
    match opts.get("at") {
        Some(s) => parse_iso8601(s).map_err(|e| e.to_string()),
        None => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_millis() as i64),
    }
}

fn text(opts: &Opts, what: &str) -> Result<String, String> {
    let t = opts.rest.join(" ");
    if t.trim().is_empty() {
        return Err(format!("{what} needs a text"));
    }
    Ok(t)
}

pub fn run(cmd: &str, opts: &Opts) -> Result<(), String> {
    let ns = opts.get("ns").unwrap_or("default").to_string();
    let err = |e: mnemo::Error| e.to_string();
    match cmd {
        "remember" => {
            let json = serde_json::json!({
                "text": text(opts, "remember")?, "createdAt": now(opts)?,
                "outcome": opts.get("outcome"), "verdict": opts.get("verdict"),
                "agent": opts.get("agent"), "kind": opts.get("kind"), "tool": opts.get("tool"),
                "stage": opts.get("stage"), "error_class": opts.get("error-class"),
                "entities": opts.all("entity"), "tags": opts.all("tag"),
            });
            let e = episode_from_json(&json).map_err(err)?;
            let mut engine = open(opts, true)?;
            report(engine.remember(&ns, e, None).map_err(err)?);
        }
        "ingest" => ingest(opts, &ns)?,
        "recall" => {
            let mut engine = open(opts, true)?;
            let k = opts.get("k").map_or(Ok(5), str::parse).map_err(|_| "--k takes a number")?;
            let r = engine
                .recall(&ns, &Query::new(text(opts, "recall")?, k), now(opts)?)
                .map_err(err)?;
            if let Some(t) = &r.time {
                let w = r.window.map_or("dropped: nothing in it".into(), |w| {
                    format!("{} to {}", format_date(w.from.max(0)), format_date(w.to - 1))
                });
                println!("time: {:?} -> {w}", t.phrase);
            }
            for (i, h) in r.hits.iter().enumerate() {
                if opts.has("json") {
                    let line = serde_json::json!({"id": h.episode.id, "text": h.episode.text, "explanation": h.explanation});
                    println!("{line}");
                    continue;
                }
                let (e, x) = (&h.episode, &h.explanation);
                println!(
                    "{}. [{}] {}  (#{}, tier {}, {:?})",
                    i + 1,
                    format_date(e.created_at),
                    e.text,
                    e.id,
                    e.tier,
                    e.status
                );
                println!(
                    "   final {:.3} = relevance {:.3} x recency {:.3} x importance {:.2}",
                    x.final_score, x.relevance, x.recency, x.importance
                );
                let terms: Vec<String> =
                    x.terms.iter().map(|(t, s)| format!("{t} {s:.2}")).collect();
                println!(
                    "   bm25 {:.2} [{}] -> lex {:.2} | cosine {:.3} -> sim {:.2} | fused {:.3} | {:.1} days since last access | via {}",
                    x.bm25, terms.join(", "), x.lex, x.cosine, x.sim, x.fused, x.age_days, x.sources.join("+")
                );
                if let Some(by) = x.shadowed_by {
                    let f = engine.config().scoring.shadow_penalty;
                    println!("   shadowed by #{by} (newer, nearly the same): score x {f}");
                }
            }
        }
        "timeline" => {
            let mut engine = open(opts, false)?;
            let limit = opts
                .get("limit")
                .map_or(Ok(20), str::parse)
                .map_err(|_| "--limit takes a number")?;
            let at = now(opts)?;
            for e in engine.timeline(&ns, at + 1, limit).map_err(err)? {
                let decay = engine
                    .config()
                    .scoring
                    .decay_factor((at - e.last_accessed_at) as f32 / DAY as f32, e.tier);
                println!(
                    "[{}] #{} tier {} {:?} importance {:.2} decay {:.3} accessed {}x  {}",
                    format_date(e.created_at),
                    e.id,
                    e.tier,
                    e.status,
                    e.importance,
                    decay,
                    e.access_count,
                    e.text
                );
            }
        }
        "fact" => fact(opts, &ns)?,
        "facts" => {
            let engine = open(opts, false)?;
            for f in engine.facts(&ns, now(opts)?, &[], opts.has("all")).map_err(err)? {
                println!(
                    "{} = {}  (v{}, {:?}, confidence {:.2}, {:?})",
                    f.key, f.value, f.version, f.source, f.confidence, f.policy
                );
            }
        }
        "rule" => {
            let mut engine = open(opts, false)?;
            if opts.rest.first().map(String::as_str) != Some("add") || opts.rest.len() < 2 {
                return Err("usage: mnemo rule add TEXT [--status candidate|active]".into());
            }
            let status: RuleStatus = opts.get("status").unwrap_or("active").parse().map_err(err)?;
            let id = engine
                .add_rule(&ns, &opts.rest[1..].join(" "), "", status, now(opts)?)
                .map_err(err)?;
            println!("rule #{id} added ({status:?})");
        }
        _ => {
            let engine = open(opts, false)?;
            let statuses = if opts.has("all") { vec![] } else { vec![RuleStatus::Active] };
            for r in engine.rules(&ns, &statuses).map_err(err)? {
                println!("#{} [{:?}] {}", r.id, r.status, r.text);
            }
        }
    }
    Ok(())
}

fn report(r: Remembered) {
    match r {
        Remembered::Stored { id, importance, reason } => {
            println!("remembered #{id} (importance {importance:.2}: {reason})")
        }
        Remembered::Discarded { reason } => println!("discarded: {reason}"),
    }
}

/// Copies the optional fields of a JSON event into `e`.
fn ingest(opts: &Opts, ns: &str) -> Result<(), String> {
    let path = opts.rest.first().ok_or("ingest needs a JSONL file")?;
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut episodes = Vec::new();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let at = format!("{path} line {}", n + 1);
        let line = line.map_err(|e| format!("{at}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| format!("{at}: not JSON: {e}"))?;
        let e = episode_from_json(&v).map_err(|e| format!("{at}: {e}"))?;
        episodes.push(e);
    }
    let mut embedder = crate::load(&opts.model)?;
    let texts: Vec<&str> = episodes.iter().map(|e| e.text.as_str()).collect();
    let vectors = embedder.embed(&texts, Role::Passage).map_err(|e| e.to_string())?;
    let mut engine = open(opts, false)?.with_embedder(Box::new(embedder));
    let (mut kept, mut dropped) = (0, 0);
    for (e, v) in episodes.into_iter().zip(vectors) {
        match engine.remember(ns, e, Some(&v.vector)).map_err(|e| e.to_string())? {
            Remembered::Stored { .. } => kept += 1,
            Remembered::Discarded { .. } => dropped += 1,
        }
    }
    // Seals the vectors and, past `snapshot_after` changes, snapshots the namespace so the
    // next command opens it without rebuilding.
    engine.maintain(false).map_err(|e| e.to_string())?;
    println!(
        "ingested {kept} episodes into namespace {ns:?} ({dropped} discarded by the write policy)"
    );
    Ok(())
}

fn fact(opts: &Opts, ns: &str) -> Result<(), String> {
    let err = |e: mnemo::Error| e.to_string();
    let mut engine = open(opts, false)?;
    let at = now(opts)?;
    let args: Vec<&str> = opts.rest.iter().map(String::as_str).collect();
    let show = |f: &mnemo::record::Fact| {
        println!(
            "v{} {} = {}  ({:?}, confidence {:.2}, {:?}, {})",
            f.version,
            f.key,
            f.value,
            f.source,
            f.confidence,
            f.policy,
            format_date(f.updated_at)
        )
    };
    match args.as_slice() {
        ["set", key, value @ ..] if !value.is_empty() => {
            let source: Source = opts.get("source").unwrap_or("explicit").parse().map_err(err)?;
            let policy: Policy = opts.get("policy").unwrap_or("auto-inject").parse().map_err(err)?;
            let confidence: f32 = opts.get("confidence").map_or(Ok(1.0), str::parse).map_err(|_| "--confidence takes a number")?;
            let ttl = match opts.get("ttl-days") {
                Some(d) => Some((d.parse::<f64>().map_err(|_| "--ttl-days takes a number")? * DAY as f64) as i64),
                None => None,
            };
            let r = engine.set_fact(ns, key, &value.join(" "), source, confidence, policy, ttl, at).map_err(err)?;
            println!("{r:?}");
        }
        ["get", key] => match engine.fact(ns, key, at, opts.has("all")).map_err(err)? {
            Some(f) => show(&f),
            None => return Err(format!("fact {key:?} is not set (or expired, or below the confidence threshold: try --all)")),
        },
        ["history", key] => engine.fact_history(ns, key).map_err(err)?.iter().for_each(show),
        ["rollback", key, version] => {
            let v: u32 = version.parse().map_err(|_| "VERSION is a number")?;
            println!("now v{}", engine.rollback_fact(ns, key, v, at).map_err(err)?);
        }
        _ => return Err("usage: mnemo fact set KEY VALUE | get KEY | history KEY | rollback KEY VERSION".into()),
    }
    Ok(())
}
