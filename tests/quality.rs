//! The quality suite: recall@k on the seeds' failure modes, with the real default model, for
//! the default scoring and the alternatives (so the default is chosen by measurement).
//!
//! `tools/quality` runs it and prints one line per case and formula.

mod common;

use mnemo::engine::{Formula, Scoring};
use mnemo::record::{Episode, Outcome, Policy, Source};
use mnemo::store::MemoryStore;
use mnemo::time::{parse_iso8601, DAY};
use mnemo::{Config, Embedder, Engine, Query, Remembered, Role};
use mnemo_embed::{BertConfig, BertEmbedder};

struct Event {
    days_ago: f64,
    text: String,
    outcome: Outcome,
    verdict: &'static str,
    relevant: bool,
}

fn ev(days_ago: f64, text: impl Into<String>) -> Event {
    Event { days_ago, text: text.into(), outcome: Outcome::Unknown, verdict: "", relevant: false }
}

struct Case {
    name: &'static str,
    events: Vec<Event>,
    query: &'static str,
    k: usize,
    /// Lowest recall@k the default must reach.
    need: f64,
}

fn rel(mut e: Event) -> Event {
    e.relevant = true;
    e
}

fn stale_stack() -> Case {
    let old = [
        "CI runs on Node 18",
        "Tests pass on Node 18 after the dependency bump",
        "Node 18 LTS is the runtime for all services",
        "Pinned Node 18 in the CI image",
        "Build on Node 18 green",
        "Dockerfile uses node:18-alpine",
    ];
    let mut events: Vec<Event> = (0..30)
        .map(|i| ev(320.0 - i as f64 * 5.0, format!("{} (run {})", old[i % old.len()], i + 1)))
        .collect();
    events.push(rel(ev(135.0, "Migrated every service and the CI from Node 18 to Node 22")));
    for (d, t) in [
        (100.0, "CI runs on Node 22"),
        (70.0, "Dockerfile switched to node:22-alpine"),
        (40.0, "Tests pass on Node 22"),
        (10.0, "Node 22 is the runtime for all services"),
    ] {
        events.push(rel(ev(d, t)));
    }
    Case {
        name: "stale-stack (Node 18 -> 22)",
        events,
        query: "which Node version does the CI run?",
        k: 5,
        need: 0.6,
    }
}

fn buried_lesson() -> Case {
    let mut events: Vec<Event> = (0..300)
        .map(|i| {
            let mut e = ev(
                200.0 - i as f64 * 0.6,
                format!("Deployed web-app to staging successfully (build {})", 1000 + i),
            );
            e.outcome = Outcome::Success;
            e
        })
        .collect();
    let mut lesson = rel(ev(
        90.0,
        "Deploy of web-app to staging failed: migrations ran before the database backup finished",
    ));
    lesson.outcome = Outcome::Failure;
    lesson.verdict = "wait for the backup job before running migrations";
    events.push(lesson);
    Case {
        name: "buried lesson (1 failure in 300 successes)",
        events,
        query: "deploy web-app to staging",
        k: 5,
        need: 1.0,
    }
}

fn next_to_remix() -> Case {
    let old = [
        "Pages fetch their data in getServerSideProps (Next.js)",
        "Added a Next.js API route for the dashboard data",
        "Next.js page loads data with getStaticProps at build time",
        "Fixed a hydration error in a Next.js page",
    ];
    let mut events: Vec<Event> = (0..16)
        .map(|i| ev(300.0 - i as f64 * 10.0, format!("{} #{}", old[i % old.len()], i + 1)))
        .collect();
    events.push(rel(ev(
        110.0,
        "Migrated the frontend from Next.js to Remix; page data now comes from Remix loaders",
    )));
    for (d, t) in [
        (90.0, "Dashboard page loads its data in a Remix loader"),
        (60.0, "Moved the settings form to a Remix action"),
        (30.0, "Pages fetch their data in Remix loaders with defer for slow parts"),
    ] {
        events.push(rel(ev(d, t)));
    }
    Case {
        name: "Next.js -> Remix migration",
        events,
        query: "how should a page load its data?",
        k: 5,
        need: 0.6,
    }
}

fn exact_terms(query: &'static str, target: &str, days: f64) -> Case {
    let names = [
        "Rossi", "Bianchi", "Ferrari", "Esposito", "Romano", "Colombo", "Ricci", "Marino", "Greco",
        "Bruno",
    ];
    let mut events: Vec<Event> = (0..200)
        .map(|i| {
            ev(
                300.0 - i as f64 * 1.4,
                format!(
                    "Invoice INV-2024-{:04} for €{},{:03} sent to {} Srl",
                    100 + i,
                    1 + i % 9,
                    (i * 37) % 1000,
                    names[i % names.len()]
                ),
            )
        })
        .collect();
    events.extend((0..50).map(|i| {
        ev(i as f64 * 0.5, format!("Sent the weekly billing summary to the finance team ({i})"))
    }));
    events.push(rel(ev(days, target.to_string())));
    Case { name: query, events, query, k: 1, need: 1.0 }
}

fn old_but_relevant() -> Case {
    let mut events: Vec<Event> = (0..100)
        .map(|i| {
            ev(
                i as f64 * 0.3,
                format!("Restarted the staging web server after a config change ({i})"),
            )
        })
        .collect();
    events.push(rel(ev(250.0, "To rotate the staging database password run rotate-secrets.sh in the ops repo, then restart the API")));
    Case {
        name: "old but relevant (250 days)",
        events,
        query: "how do we rotate the staging database password?",
        k: 3,
        need: 1.0,
    }
}

fn formulas() -> Vec<(String, Scoring)> {
    let d = Scoring::default();
    if std::env::var_os("MNEMO_QUALITY_GRID").is_some() {
        let mut out = Vec::new();
        // Floor × shadowing threshold × shadowing penalty.
        for floor in [0.75, 0.9] {
            for sc in [0.9, 0.92, 0.95] {
                for sp in [0.3, 0.5] {
                    let s = Scoring {
                        recency_floor: floor,
                        shadow_cosine: sc,
                        shadow_penalty: sp,
                        ..d.clone()
                    };
                    out.push((format!("f{floor} s{sc} p{sp}"), s));
                }
            }
        }
        return out;
    }
    vec![
        ("balanced (default)", d.clone()),
        ("plain decay: fused x exp decay", Scoring { formula: Formula::PlainDecay, ..d.clone() }),
        ("weighted 0.55/0.25/0.20", Scoring { formula: Formula::Weighted, ..d.clone() }),
        (
            "cosine only",
            Scoring {
                formula: Formula::Balanced,
                lexical_weight: 0.0,
                recency_floor: 1.0,
                tier_importance: [1.0; 3],
                ..d.clone()
            },
        ),
        ("bm25+cosine, no decay", Scoring { recency_floor: 1.0, ..d.clone() }),
        ("balanced, no shadowing", Scoring { shadow_cosine: 1.0, ..d }),
    ]
    .into_iter()
    .map(|(n, s)| (n.to_string(), s))
    .collect()
}

fn run_case(embedder: &mut BertEmbedder, case: &Case, now: i64) -> Vec<(String, f64)> {
    let texts: Vec<&str> = case.events.iter().map(|e| e.text.as_str()).collect();
    let vecs = embedder.embed(&texts, Role::Passage).unwrap();
    let qv = embedder.embed(&[case.query], Role::Query).unwrap().remove(0).vector;
    let config = Config {
        vector_model: embedder.model_id().into(),
        dim: embedder.dim(),
        ..Config::default()
    };
    let mut engine = Engine::new(MemoryStore::new(), config);
    let mut relevant = Vec::new();
    for (e, v) in case.events.iter().zip(&vecs) {
        let mut ep = Episode::new(e.text.clone(), now - (e.days_ago * DAY as f64) as i64);
        ep.outcome = e.outcome;
        ep.verdict = e.verdict.into();
        let Remembered::Stored { id, .. } = engine.remember("q", ep, Some(&v.vector)).unwrap()
        else {
            panic!("discarded")
        };
        if e.relevant {
            relevant.push(id);
        }
    }
    let mut out: Vec<(String, f64)> = formulas()
        .into_iter()
        .map(|(name, scoring): (String, Scoring)| {
            let mut q = Query::new(case.query, case.k);
            q.vector = Some(qv.clone());
            q.touch = false;
            q.scoring = Some(scoring);
            let hits = engine.recall("q", &q, now).unwrap().hits;
            if std::env::var_os("MNEMO_QUALITY_DEBUG").is_some() && name.contains("default") {
                for h in &hits {
                    let x = &h.explanation;
                    println!(
                        "  {:<60} cos {:.3} bm25 {:.2} rel {:.2} rec {:.2} fin {:.3} sh {:?}",
                        h.episode.text,
                        x.cosine,
                        x.bm25,
                        x.relevance,
                        x.recency,
                        x.final_score,
                        x.shadowed_by
                    );
                }
            }
            let found = hits.iter().filter(|h| relevant.contains(&h.episode.id)).count();
            (name.to_string(), found as f64 / relevant.len().min(case.k) as f64)
        })
        .collect();
    // The same store after the nightly job compacted it, default scoring: a summary hit finds
    // the relevant episodes it stands for (its evidence index, through monthly overviews).
    engine.nightly("q", now, None).unwrap();
    let mut q = Query::new(case.query, case.k);
    q.vector = Some(qv.clone());
    q.touch = false;
    let mut found = std::collections::BTreeSet::new();
    for h in engine.recall("q", &q, now).unwrap().hits {
        if std::env::var_os("MNEMO_QUALITY_DEBUG").is_some() {
            let x = &h.explanation;
            println!(
                "  compacted top: {:?} rel {:.2} fin {:.3}",
                h.episode.text, x.relevance, x.final_score
            );
        }
        let mut stack = vec![h.episode];
        while let Some(e) = stack.pop() {
            if relevant.contains(&e.id) {
                found.insert(e.id);
            }
            for id in &e.evidence {
                stack.push(engine.episode("q", *id).unwrap());
            }
        }
    }
    out.push(("default, compacted".into(), found.len() as f64 / relevant.len().min(case.k) as f64));
    out
}

#[test]
fn the_default_scoring_holds_every_failure_mode() {
    let dir = common::model_dir();
    let mut embedder =
        BertEmbedder::from_dir(&dir, BertConfig::e5("multilingual-e5-small-latin")).unwrap();
    let now = parse_iso8601("2024-11-20T12:00:00Z").unwrap();
    let cases = vec![
        stale_stack(),
        buried_lesson(),
        next_to_remix(),
        exact_terms(
            "INV-2024-0042",
            "Invoice INV-2024-0042 for €1,250 sent to Bertelli Srl",
            260.0,
        ),
        exact_terms(
            "payment of €1,250",
            "Received payment of €1,250 from Bertelli Srl for the March invoice",
            240.0,
        ),
        exact_terms("Bertelli", "Call with Marco Bertelli about the renewal", 200.0),
        exact_terms(
            "outage on 2024-03-05",
            "Billing outage on 2024-03-05: the payment gateway timed out",
            260.0,
        ),
        old_but_relevant(),
    ];
    let mut failures = Vec::new();
    println!(
        "{:<46} {:>4}  {}",
        "case",
        "k",
        formulas().iter().map(|f| format!("{:>24}", f.0)).collect::<String>()
            + &format!("{:>24}", "default, compacted")
    );
    for case in &cases {
        let scores = run_case(&mut embedder, case, now);
        println!(
            "{:<46} {:>4}  {}",
            case.name,
            case.k,
            scores.iter().map(|s| format!("{:>24.2}", s.1)).collect::<String>()
        );
        let compacted = scores.last().expect("the compacted column").1;
        if compacted < scores[0].1 {
            failures.push(format!(
                "{}: recall@{} after compaction {compacted:.2} < {:.2} before",
                case.name, case.k, scores[0].1
            ));
        }
        if scores[0].1 < case.need {
            failures.push(format!(
                "{}: recall@{} {:.2} < {:.2}",
                case.name, case.k, scores[0].1, case.need
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn contradictory_facts_resolve_by_source_then_recency() {
    let mut engine = Engine::new(MemoryStore::new(), Config::default());
    let set = |e: &mut Engine<MemoryStore>, v: &str, s: Source, t: i64| {
        e.set_fact("q", "indent", v, s, 0.9, Policy::AutoInject, None, t).unwrap()
    };
    set(&mut engine, "tabs", Source::Implicit, 1);
    set(&mut engine, "spaces", Source::Explicit, 2);
    set(&mut engine, "tabs", Source::Implicit, 3);
    assert_eq!(engine.fact("q", "indent", 4, false).unwrap().unwrap().value, "spaces");
    set(&mut engine, "2 spaces", Source::Explicit, 5);
    assert_eq!(engine.fact("q", "indent", 6, false).unwrap().unwrap().value, "2 spaces");
    engine.assert_triple("q", "api", "runs_on", "node 18", 0.9, Source::Implicit, 1).unwrap();
    engine.assert_triple("q", "api", "runs_on", "node 22", 0.9, Source::Implicit, 2).unwrap();
    let now: Vec<_> = engine.triples("q", "api", false).unwrap();
    assert_eq!((now.len(), now[0].object.as_str()), (1, "node 22"));
}
