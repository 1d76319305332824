//! The learning loop end to end: signals → observations → rules, feedback, outcome tracking,
//! the resumable nightly job. The mail agent runs with the real model (near-duplicate checks
//! embed quotes); the seed sweep and the mechanics use the bag-of-words test embedder.

mod common;

use std::collections::BTreeSet;

use common::hash_embed::HashEmbedder;
use mnemo::demo::trace::{expected, trace};
use mnemo::learn::pattern::Pattern;
use mnemo::record::{Episode, Outcome, RuleStatus, Status};
use mnemo::store::{KvStore, MemoryStore};
use mnemo::time::{parse_iso8601, DAY};
use mnemo::{Config, Engine, Query};
use mnemo_embed::{BertConfig, BertEmbedder};

const NS: &str = "maria";

fn engine_with(embedder: Box<dyn mnemo::Embedder>) -> Engine<MemoryStore> {
    Engine::new(MemoryStore::new(), Config::default()).with_embedder(embedder)
}

fn hash_engine() -> Engine<MemoryStore> {
    engine_with(Box::new(HashEmbedder))
}

/// Feeds the trace day by day and runs the nightly job every night at 02:00 UTC; returns
/// the time of the last run.
fn run_trace<S: KvStore>(e: &mut Engine<S>, seed: u64, days: u32) -> i64 {
    let signals = trace(seed, days, 8);
    let start = parse_iso8601("2024-03-04T00:00:00Z").unwrap();
    let mut next = 0;
    let mut last = 0;
    for day in 1..=i64::from(days) {
        let night = start + day * DAY + 2 * 3_600_000;
        while next < signals.len() {
            let ts = parse_iso8601(signals[next]["ts"].as_str().unwrap()).unwrap();
            if ts >= night {
                break;
            }
            e.signal_json(NS, &signals[next].to_string()).unwrap();
            next += 1;
        }
        let r = e.nightly(NS, night, None).unwrap();
        assert!(r.done);
        assert!(r.inserted.len() <= 3, "at most 3 new observations a night: {r:?}");
        last = night;
    }
    last
}

fn active_patterns<S: KvStore>(e: &Engine<S>) -> Vec<Pattern> {
    e.rules(NS, &[RuleStatus::Active])
        .unwrap()
        .iter()
        .map(|r| {
            Pattern::parse(&r.pattern).unwrap_or_else(|| panic!("rule without pattern: {r:?}"))
        })
        .collect()
}

#[test]
fn the_mail_agent_learns_exactly_its_four_habits() {
    let model =
        BertEmbedder::from_dir(&common::model_dir(), BertConfig::e5("multilingual-e5-small-latin"))
            .unwrap();
    let mut e = engine_with(Box::new(model));
    run_trace(&mut e, 1, 60);
    let rules = e.rules(NS, &[RuleStatus::Active]).unwrap();
    let found: Vec<Option<u8>> = active_patterns(&e).iter().map(expected).collect();
    let texts: Vec<&str> = rules.iter().map(|r| r.text.as_str()).collect();
    assert!(
        found.iter().all(Option::is_some),
        "a promoted rule is not a planted habit: {texts:#?}"
    );
    let habits: BTreeSet<u8> = found.into_iter().flatten().collect();
    assert_eq!(habits, BTreeSet::from([1, 2, 3, 4]), "rules: {texts:#?}");
    assert_eq!(rules.len(), 4, "one rule per habit: {texts:#?}");
    let observations = e.observations(NS, &[]).unwrap();
    for r in &rules {
        let o = observations.iter().find(|o| o.rule == Some(r.id)).expect("source observation");
        assert!(r.created_at - o.created_at >= 48 * 3_600_000, "promoted before 48 h: {r:?}");
        let distinct: BTreeSet<u64> = o.support.iter().copied().collect();
        assert!(o.occurrences >= 3 && distinct.len() >= 3, "{o:?}");
        assert!(!r.evidence.is_empty() && r.observation == o.id.to_string());
        assert!(r.text.split_whitespace().count() <= 25);
        assert!(o.evidence.split_whitespace().count() <= 40);
    }
}

#[test]
fn twenty_seeds_promote_nothing_false_and_nearly_everything_true() {
    let (mut true_rules, mut false_rules, mut planted) = (0, 0, 0);
    for seed in 1..=20 {
        let mut e = hash_engine();
        run_trace(&mut e, seed, 60);
        let found: Vec<Option<u8>> = active_patterns(&e).iter().map(expected).collect();
        let habits: BTreeSet<u8> = found.iter().flatten().copied().collect();
        true_rules += habits.len();
        false_rules += found.iter().filter(|f| f.is_none()).count();
        planted += 4;
        if found.iter().any(Option::is_none) {
            let rules = e.rules(NS, &[RuleStatus::Active]).unwrap();
            eprintln!(
                "seed {seed}: false rules {:#?}",
                rules.iter().map(|r| &r.pattern).collect::<Vec<_>>()
            );
        }
    }
    let recall = true_rules as f64 / planted as f64;
    eprintln!("learning over 20 seeds: recall {recall:.3}, false rules {false_rules}");
    assert_eq!(false_rules, 0, "precision must be 1.0");
    assert!(recall >= 0.9, "recall {recall}");
}

fn semicolon_signal(day: i64, n: i64) -> String {
    let ts = format!("2024-03-{:02}T{:02}:{:02}:00+01:00", 4 + day, 9 + n / 60, n % 60);
    serde_json::json!({"ts": ts, "kind": "edited", "agent": "email",
        "situation": {"contact": "Marco"},
        "before": format!("Dear Marco,\nThe order {n} is confirmed; it ships soon.\nMaria"),
        "after": format!("Dear Marco,\nThe order {n} is confirmed, it ships soon.\nMaria")})
    .to_string()
}

#[test]
fn wrong_feedback_demotes_the_rule_and_the_pattern_never_returns() {
    let mut e = hash_engine();
    let mut ep_ids = Vec::new();
    for i in 0..6 {
        let r = e
            .remember(
                NS,
                Episode::new(format!("drafted order mail {i}"), 1_709_000_000_000 + i),
                None,
            )
            .unwrap();
        if let mnemo::Remembered::Stored { id, .. } = r {
            ep_ids.push(id);
        }
    }
    for i in 0..6 {
        let mut v: serde_json::Value = serde_json::from_str(&semicolon_signal(0, i)).unwrap();
        v["episode"] = serde_json::json!(ep_ids[i as usize]);
        e.signal_json(NS, &v.to_string()).unwrap();
    }
    let day = parse_iso8601("2024-03-05T02:00:00Z").unwrap();
    let n = e.nightly(NS, day, None).unwrap();
    assert_eq!(n.inserted.len(), 1, "{n:?}");
    let id = n.inserted[0];
    assert!(n.promoted.is_empty(), "nothing before 48 hours");
    let n = e.nightly(NS, day + 3 * DAY, None).unwrap();
    assert_eq!(n.promoted.len(), 1, "{n:?}");
    assert_eq!(n.inserted.len(), 0, "a second run updates instead of inserting: {n:?}");
    assert!(n.updated.contains(&id));
    assert!(e.recall_observations(NS, "semicolons", None, 5, day).unwrap().len() == 1);

    let fb = e.feedback(NS, id, false, day + 3 * DAY).unwrap();
    assert_eq!(fb.demoted_rules.len(), 1);
    assert_eq!(fb.rejected_episodes.len(), 6);
    assert!(fb.reverse_signal.is_some());
    assert!(e.rules(NS, &[RuleStatus::Active]).unwrap().is_empty());
    assert!(
        e.recall_observations(NS, "semicolons", None, 5, day).unwrap().is_empty(),
        "embedding gone"
    );
    assert_eq!(e.episode(NS, ep_ids[0]).unwrap().status, Status::Rejected);
    let q = Query::new("drafted order mail", 10);
    assert!(
        e.recall(NS, &q, day + 4 * DAY).unwrap().hits.is_empty(),
        "rejected episodes are not recalled"
    );

    // Ten more matching signals: the pattern never comes back.
    for i in 0..10 {
        e.signal_json(NS, &semicolon_signal(5, 100 + i)).unwrap();
    }
    let n = e.nightly(NS, day + 6 * DAY, None).unwrap();
    assert!(n.inserted.is_empty() && n.promoted.is_empty(), "{n:?}");
    assert!(e.rules(NS, &[RuleStatus::Active]).unwrap().is_empty());
    assert!(e.feedback(NS, id, true, day).is_err(), "wrong is final");
}

#[test]
fn right_feedback_raises_confidence_and_waives_the_wait() {
    let mut e = hash_engine();
    // 4 of 5 drafts: medium.
    for i in 0..5 {
        let mut v: serde_json::Value = serde_json::from_str(&semicolon_signal(0, i)).unwrap();
        if i == 4 {
            v["after"] = v["before"].clone();
            v["kind"] = "approved".into();
        }
        e.signal_json(NS, &v.to_string()).unwrap();
    }
    let day = parse_iso8601("2024-03-05T02:00:00Z").unwrap();
    let id = e.nightly(NS, day, None).unwrap().inserted[0];
    let o = e.observation(NS, id).unwrap();
    assert_eq!(o.confidence().name(), "medium", "{o:?}");
    let fb = e.feedback(NS, id, true, day).unwrap();
    assert_eq!(fb.observation.confidence().name(), "high");
    let p = e.promote(NS, day + 1).unwrap();
    assert_eq!(p.len(), 1, "confirmed observations skip the 48-hour wait");
}

/// 31 minutes: notes of separate tasks, not turns of one conversation (episodes within 30
/// minutes lend each other context in recall, and would always be recalled together).
const APART: i64 = 31 * 60_000;

#[test]
fn outcome_tracking_flags_a_planted_harmful_episode_and_nothing_in_a_control() {
    let mut e = hash_engine();
    let t0 = 1_709_000_000_000;
    let topics = ["deploy pipeline", "invoice export", "database backup", "email sync"];
    for i in 0..40 {
        let text = format!("{} note {i}", topics[i % 4]);
        e.remember(NS, Episode::new(text, t0 + i as i64 * APART), None).unwrap();
    }
    let poison = match e
        .remember(
            NS,
            Episode::new("deploy pipeline: skip the tests to go faster", t0 + 41 * APART),
            None,
        )
        .unwrap()
    {
        mnemo::Remembered::Stored { id, .. } => id,
        _ => unreachable!(),
    };
    let mut rng = mnemo::demo::trace::Rng::new(7);
    let mut failures_with_poison = 0;
    for i in 0..60 {
        let topic = topics[rng.below(4) as usize];
        let now = t0 + DAY + i * 60_000;
        // Half the deploy questions bring the poisoned lesson up, half only the plain notes.
        let q = if topic == "deploy pipeline" && rng.chance(0.5) {
            "deploy pipeline: skip the tests?"
        } else {
            topic
        };
        let r = e.recall(NS, &Query::new(q, 3), now).unwrap();
        let id = r.retrieval_id.expect("a touching recall is logged");
        let has_poison = r.hits.iter().any(|h| h.episode.id == poison);
        let failed = if has_poison { rng.chance(0.9) } else { rng.chance(0.1) };
        failures_with_poison += usize::from(failed && has_poison);
        let o = if failed { Outcome::Failure } else { Outcome::Success };
        e.outcome(NS, id, o, now + 1).unwrap();
    }
    assert!(
        failures_with_poison >= 5,
        "the trace must retrieve the poison: {failures_with_poison}"
    );
    let report = e.outcome_report(NS).unwrap();
    let harmful: Vec<u64> = report
        .entries
        .iter()
        .filter(|x| x.verdict == mnemo::engine::Verdict::Harmful)
        .map(|x| x.id)
        .collect();
    assert_eq!(harmful, vec![poison], "{report:#?}");
    let (down, _) = e.apply_outcomes(NS, t0 + 2 * DAY).unwrap();
    assert_eq!(down, vec![poison]);
    let r = e.recall(NS, &Query::new("deploy pipeline skip tests", 5), t0 + 2 * DAY).unwrap();
    let h = r.hits.iter().find(|h| h.episode.id == poison).expect("still recalled, down-weighted");
    assert_eq!(h.explanation.outcome_weight, 0.5);

    // Control: the same recalls, outcomes at one rate whatever was returned.
    let mut c = hash_engine();
    for i in 0..41 {
        let text = format!("{} note {i}", topics[i % 4]);
        c.remember(NS, Episode::new(text, t0 + i as i64 * APART), None).unwrap();
    }
    for i in 0..60 {
        let now = t0 + DAY + i * 60_000;
        let r = c.recall(NS, &Query::new(topics[rng.below(4) as usize], 3), now).unwrap();
        let o = if rng.chance(0.3) { Outcome::Failure } else { Outcome::Success };
        c.outcome(NS, r.retrieval_id.unwrap(), o, now + 1).unwrap();
    }
    let report = c.outcome_report(NS).unwrap();
    assert!(
        report.entries.iter().all(|x| x.verdict != mnemo::engine::Verdict::Harmful),
        "{report:#?}"
    );
    assert!(c.outcome(NS, 12345, Outcome::Failure, t0).is_err(), "unknown retrieval");
}

/// Failures reported while a rule was active demote it when the host reports them, and never
/// when an agent does (`Reporter::Agent`, the MCP server's outcomes): a prompt-injected agent
/// cannot get what the user taught demoted, though its outcomes still count for episodes.
#[test]
fn an_agents_outcomes_never_demote_a_rule() {
    use mnemo::record::outcome::Reporter;
    use mnemo::record::Origin;
    let run = |reporter: Reporter| {
        let mut e = hash_engine();
        let t0 = 1_709_000_000_000;
        for i in 0..8 {
            let text = format!("invoice export note {i}");
            e.remember(NS, Episode::new(text, t0 + i as i64 * APART), None).unwrap();
        }
        let mut rule = None;
        for i in 0..60 {
            let now = t0 + DAY + i * 60_000;
            if i == 30 {
                let text = "Always export invoices as PDF";
                let id = e.add_rule(NS, text, "", RuleStatus::Active, Origin::User, now).unwrap();
                rule = Some(id);
            }
            let r = e.recall(NS, &Query::new("invoice export", 3), now).unwrap();
            // Every task went well before the rule, and badly after it.
            let o = if rule.is_some() { Outcome::Failure } else { Outcome::Success };
            e.outcome_from(NS, r.retrieval_id.unwrap(), o, now + 1, reporter).unwrap();
        }
        let (_, demoted) = e.apply_outcomes(NS, t0 + 2 * DAY).unwrap();
        let rule = rule.unwrap();
        let status = e.rules(NS, &[]).unwrap().iter().find(|r| r.id == rule).unwrap().status;
        (demoted, rule, status)
    };
    let (demoted, rule, status) = run(Reporter::Host);
    assert_eq!((demoted, status), (vec![rule], RuleStatus::Candidate), "the host's failures");
    let (demoted, _, status) = run(Reporter::Agent);
    assert_eq!((demoted, status), (vec![], RuleStatus::Active), "an agent's failures");

    // Nor do an agent's successes elsewhere lower the bar a rule is judged against: 2 host
    // failures in 10 with the rule, against 200 agent successes without it.
    let mut e = hash_engine();
    let t0 = 1_709_000_000_000;
    e.remember(NS, Episode::new("invoice export note", t0), None).unwrap();
    let recall = |e: &mut Engine<MemoryStore>, at: i64| {
        e.recall(NS, &Query::new("invoice export", 3), at).unwrap().retrieval_id.unwrap()
    };
    for i in 0..200 {
        let at = t0 + DAY + i * 60_000;
        let id = recall(&mut e, at);
        e.outcome_from(NS, id, Outcome::Success, at + 1, Reporter::Agent).unwrap();
    }
    let user = Origin::User;
    let rule = e.add_rule(NS, "Export invoices as PDF", "", RuleStatus::Active, user, t0 + 2 * DAY);
    let rule = rule.unwrap();
    for i in 0..10 {
        let at = t0 + 3 * DAY + i * 60_000;
        let id = recall(&mut e, at);
        let o = if i < 2 { Outcome::Failure } else { Outcome::Success };
        e.outcome(NS, id, o, at + 1).unwrap();
        // An agent cannot replace what the host reported.
        let err = e.outcome_from(NS, id, Outcome::Success, at + 2, Reporter::Agent).unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
    }
    let (_, demoted) = e.apply_outcomes(NS, t0 + 4 * DAY).unwrap();
    assert!(!demoted.contains(&rule), "judged against the host's outcomes only");
}

#[test]
fn a_budgeted_nightly_resumes_to_the_same_store() {
    let mut whole = hash_engine();
    let mut pieces = hash_engine();
    let signals = trace(3, 30, 30);
    let night = parse_iso8601("2024-04-03T02:00:00Z").unwrap();
    for s in &signals {
        whole.signal_json(NS, &s.to_string()).unwrap();
        pieces.signal_json(NS, &s.to_string()).unwrap();
    }
    let a = whole.nightly(NS, night, None).unwrap();
    assert!(a.done);
    let mut calls = 0;
    let mut at = 0;
    loop {
        // The clock moves on between calls: a resumed run keeps its first `now`.
        let r = pieces.nightly(NS, night + calls * 1000, Some(97)).unwrap();
        calls += 1;
        assert!(calls < 1000);
        // The CLI's progress bar is the position of `next` in the run's step order.
        let pos = mnemo::engine::NIGHTLY_STEPS.iter().position(|s| s.name() == r.next);
        let pos = pos.unwrap_or_else(|| panic!("{} is not in the step order", r.next));
        assert!(pos >= at, "{} ran after a later step", r.next);
        at = pos;
        if r.done {
            break;
        }
    }
    assert_eq!(at, mnemo::engine::NIGHTLY_STEPS.len() - 1);
    assert!(calls > 5, "the budget split the run ({calls} calls)");
    let dump = |e: &Engine<MemoryStore>| e.store().scan(b"u/", None, usize::MAX).unwrap();
    assert_eq!(dump(&whole), dump(&pieces), "a resumed run writes what an uninterrupted one does");
}

#[test]
fn bad_signals_change_nothing() {
    let mut e = hash_engine();
    let good = semicolon_signal(0, 1);
    let bad = r#"{"ts":"2024-03-04T09:00:00Z","kind":"frobbed","agent":"email"}"#;
    let err = e.signals_jsonl(NS, &format!("{good}\n{bad}")).unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
    assert!(e.store().scan(b"u/", None, 10).unwrap().is_empty(), "nothing stored");
    let huge = serde_json::json!({"ts":"2024-03-04T09:00:00Z","kind":"edited","agent":"email",
        "before": "x".repeat(30_000), "after": "y"});
    assert_eq!(e.signal_json(NS, &huge.to_string()).unwrap_err().code(), "INVALID_INPUT");
    assert!(e.store().scan(b"u/", None, 10).unwrap().is_empty());
    assert!(e.feedback(NS, 99, true, 0).is_err());
}

/// The nightly workload natively, twice: the same store bit for bit. Its digest is written
/// to the target directory, where the JS tests (`tests/js/engine.test.mjs`) compare the wasm
/// build's against it.
#[test]
fn the_nightly_job_is_deterministic_and_its_digest_is_kept_for_wasm() {
    let mut clock = || 0.0;
    let a = mnemo_bench::nightly(12, 40, &mut clock);
    let b = mnemo_bench::nightly(12, 40, &mut clock);
    assert_eq!(a.digest, b.digest);
    assert!(a.observations > 0 && a.signals > 300, "{a:?}");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"),
        Into::into,
    );
    std::fs::create_dir_all(&target).unwrap();
    let json = serde_json::json!({"days": 12, "perDay": 40, "digest": a.digest, "observations": a.observations});
    std::fs::write(target.join("learn-digest-native.json"), json.to_string()).unwrap();
}

#[test]
fn a_promotion_never_contradicts_a_rule_a_person_wrote_but_unrelated_rules_do_not_block_it() {
    let model =
        BertEmbedder::from_dir(&common::model_dir(), BertConfig::e5("multilingual-e5-small-latin"))
            .unwrap();
    let mut e = engine_with(Box::new(model));
    let day = parse_iso8601("2024-03-05T02:00:00Z").unwrap();
    e.add_rule(
        NS,
        "Always delete the lockfile and the npm cache before reinstalling",
        "",
        RuleStatus::Active,
        mnemo::record::Origin::User,
        0,
    )
    .unwrap();
    for i in 0..8 {
        e.signal_json(NS, &semicolon_signal(0, i)).unwrap();
    }
    let id = e.nightly(NS, day, None).unwrap().inserted[0];
    e.feedback(NS, id, true, day).unwrap();
    assert_eq!(e.promote(NS, day).unwrap().len(), 1, "an unrelated rule does not block it");

    let mut e2 = engine_with(Box::new(
        BertEmbedder::from_dir(&common::model_dir(), BertConfig::e5("multilingual-e5-small-latin"))
            .unwrap(),
    ));
    e2.add_rule(
        NS,
        "Use semicolons in every draft",
        "",
        RuleStatus::Active,
        mnemo::record::Origin::User,
        0,
    )
    .unwrap();
    for i in 0..8 {
        e2.signal_json(NS, &semicolon_signal(0, i)).unwrap();
    }
    let id = e2.nightly(NS, day, None).unwrap().inserted[0];
    e2.feedback(NS, id, true, day).unwrap();
    assert!(e2.promote(NS, day).unwrap().is_empty(), "the person's opposite rule stays, alone");
    assert_eq!(e2.rules(NS, &[RuleStatus::Active]).unwrap().len(), 1);
}

/// Writes an open, strong observation of `pattern` straight into the store, as the detector
/// would after weeks of signals (the detector's own choice of condition is tested above).
fn plant_observation<S: KvStore>(e: &mut Engine<S>, id: u64, pattern: &str, now: i64) {
    use mnemo::record::{Category, Observation};
    use mnemo::store::{Namespace, Table};
    let p = Pattern::parse(pattern).unwrap();
    let mut o = Observation::open(id, pattern.into(), Category::WritingStyle, p.agent.clone(), now);
    o.quote = p.quote();
    o.evidence = format!("seen in 18 of 20 drafts ({pattern})");
    (o.occurrences, o.opportunities, o.consistency) = (18, 20, 0.9);
    o.counted = mnemo::learn::confidence::Confidence::High;
    o.promotion_candidate = true;
    o.confirmed_at = Some(now);
    let ns = Namespace::new(NS).unwrap();
    let mut b = mnemo::store::Batch::new();
    b.put(ns.key(Table::Observation, &id.to_be_bytes()), o.encode());
    e.store_mut().write(&b).unwrap();
}

fn status_of<S: KvStore>(e: &Engine<S>, id: u64) -> (RuleStatus, Option<u64>) {
    let r = e.rules(NS, &[]).unwrap().into_iter().find(|r| r.id == id).unwrap();
    (r.status, r.superseded_by)
}

#[test]
fn a_wider_rule_absorbs_the_narrower_ones_and_gives_them_back_when_it_goes() {
    let mut e = hash_engine();
    let day = parse_iso8601("2024-04-01T02:00:00Z").unwrap();
    plant_observation(&mut e, 1, "email|removed:semicolon|segment=technical", day);
    plant_observation(&mut e, 2, "email|rewrite|words>=300", day);
    plant_observation(&mut e, 3, "email|removed:exclamation|weekday=fri&time>=16:00", day);
    let first = e.promote(NS, day).unwrap();
    assert_eq!(first.len(), 3, "{first:?}");
    assert!(first.iter().all(|p| p.absorbed.is_empty() && p.merged_into.is_none()));
    let rule_of = |ps: &[mnemo::engine::Promoted], obs: u64| {
        ps.iter().find(|p| p.observation == obs).unwrap().rule
    };
    let (technical, long, friday) = (rule_of(&first, 1), rule_of(&first, 2), rule_of(&first, 3));

    // A week later the same habits show up without the narrow conditions.
    let later = day + 7 * DAY;
    plant_observation(&mut e, 4, "email|removed:semicolon|", later);
    plant_observation(&mut e, 5, "email|rewrite|words>=100", later);
    plant_observation(&mut e, 6, "email|removed:exclamation|weekday=thu", later);
    let second = e.promote(NS, later).unwrap();
    let (always, hundred) = (rule_of(&second, 4), rule_of(&second, 5));
    assert_eq!(second.iter().find(|p| p.rule == always).unwrap().absorbed, vec![technical]);
    assert_eq!(second.iter().find(|p| p.rule == hundred).unwrap().absorbed, vec![long]);
    assert!(
        second.iter().find(|p| p.observation == 6).unwrap().absorbed.is_empty(),
        "Thursdays say nothing about Fridays"
    );
    assert_eq!(status_of(&e, technical), (RuleStatus::Superseded, Some(always)));
    assert_eq!(status_of(&e, long), (RuleStatus::Superseded, Some(hundred)));
    assert_eq!(status_of(&e, friday), (RuleStatus::Active, None));
    let active: Vec<u64> =
        e.rules(NS, &[RuleStatus::Active]).unwrap().iter().map(|r| r.id).collect();
    assert!(!active.contains(&technical) && !active.contains(&long), "one statement remains");

    // A narrower habit found after the wide rule adds nothing: written superseded, not injected.
    plant_observation(&mut e, 7, "email|removed:semicolon|contact=Marco", later + DAY);
    let third = e.promote(NS, later + DAY).unwrap();
    assert_eq!(third.len(), 1);
    assert_eq!(third[0].merged_into, Some(always));
    assert_eq!(status_of(&e, third[0].rule), (RuleStatus::Superseded, Some(always)));
    assert!(e.promote(NS, later + 2 * DAY).unwrap().is_empty(), "its observation is settled");

    // The user says the wide rule is wrong: it goes, and what it covered is active again.
    e.feedback(NS, 4, false, later + 3 * DAY).unwrap();
    assert_eq!(status_of(&e, always).0, RuleStatus::Demoted);
    assert_eq!(status_of(&e, technical), (RuleStatus::Active, None));
    assert_eq!(status_of(&e, third[0].rule), (RuleStatus::Active, None));
    // Setting a status by hand does the same, and superseded is not a status to set.
    e.set_rule_status(NS, hundred, RuleStatus::Demoted, later + 3 * DAY).unwrap();
    assert_eq!(status_of(&e, long), (RuleStatus::Active, None));
    let err = e.set_rule_status(NS, long, RuleStatus::Superseded, later).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    // The JSON surface shows who absorbed whom.
    let rules = mnemo_json::Json(&e).rules(NS, &[]).unwrap();
    let json: serde_json::Value = serde_json::from_str(&rules).unwrap();
    assert!(json.as_array().unwrap().iter().all(|r| r.get("supersededBy").is_some()));
}

#[test]
fn a_promoted_rule_a_person_already_wrote_is_merged_into_theirs() {
    let model =
        BertEmbedder::from_dir(&common::model_dir(), BertConfig::e5("multilingual-e5-small-latin"))
            .unwrap();
    let mut e = engine_with(Box::new(model));
    let day = parse_iso8601("2024-04-01T02:00:00Z").unwrap();
    let pattern = "email|removed:semicolon|";
    let quote = Pattern::parse(pattern).unwrap().quote();
    // The person's rule says everything the promoted one would, and more.
    let written = e
        .add_rule(
            NS,
            &format!("{quote}; in every email and every reply"),
            "",
            RuleStatus::Active,
            mnemo::record::Origin::User,
            0,
        )
        .unwrap();
    let other = e
        .add_rule(
            NS,
            "Sign every email with Maria",
            "",
            RuleStatus::Active,
            mnemo::record::Origin::User,
            0,
        )
        .unwrap();
    plant_observation(&mut e, 1, pattern, day);
    let p = e.promote(NS, day).unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].merged_into, Some(written), "{p:?}; quote {quote:?}");
    let active: Vec<u64> =
        e.rules(NS, &[RuleStatus::Active]).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(active, vec![written, other]);
}

/// Twelve signals an agent sends through MCP claiming to be the user's make an observation
/// but no rule by the wait alone; the host's confirmation makes it one. The same twelve from
/// the host make a rule after the wait (the control).
#[test]
fn an_agents_signals_make_no_rule_without_the_users_confirmation() {
    use mnemo::record::outcome::Reporter;
    let day = parse_iso8601("2024-03-05T02:00:00Z").unwrap();
    for reporter in [Reporter::Agent, Reporter::Host] {
        let mut e = hash_engine();
        for i in 0..12 {
            let mut v: serde_json::Value = serde_json::from_str(&semicolon_signal(0, i)).unwrap();
            v["source"] = "user".into();
            e.signal_json_from(NS, &v.to_string(), reporter).unwrap();
        }
        let stored = e.signals(NS, 0, i64::MAX).unwrap();
        assert_eq!(stored.len(), 12);
        if reporter == Reporter::Agent {
            assert!(stored.iter().all(|s| s.source == "agent" && s.reporter == Reporter::Agent));
        }
        let first = e.nightly(NS, day, None).unwrap();
        assert_eq!(first.inserted.len(), 1, "{reporter:?}: an observation either way");
        let later = e.nightly(NS, day + 3 * DAY, None).unwrap();
        let active = e.rules(NS, &[RuleStatus::Active]).unwrap();
        match reporter {
            Reporter::Agent => {
                assert!(later.promoted.is_empty() && active.is_empty(), "{later:?}");
                e.feedback(NS, first.inserted[0], true, day + 3 * DAY).unwrap();
                assert_eq!(e.promote(NS, day + 3 * DAY + 1).unwrap().len(), 1, "confirmed");
            }
            Reporter::Host => assert_eq!(active.len(), 1, "the host's signals: {later:?}"),
        }
    }
}
