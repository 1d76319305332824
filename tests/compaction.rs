//! Compaction and consolidation through the public API: tiers and their storage ratios,
//! no-delete, cold records, tier-aware ranking, the buried lesson at scale, the stale stack,
//! verification of a model-written summary, erasure of compacted records, resumability, and
//! lessons consolidated into rules.

mod common;

use common::hash_embed::HashEmbedder;
use mnemo::engine::{Erasure, Query};
use mnemo::learn::phrasing::Llm;
use mnemo::record::{Episode, Outcome, Status};
use mnemo::store::{KvStore, MemoryStore};
use mnemo::time::{days_from_civil, DAY};
use mnemo::{Config, Engine, Remembered};

const NS: &str = "u";
const HOUR: i64 = 3_600_000;

fn t0() -> i64 {
    days_from_civil(2025, 12, 1) * DAY
}

fn engine() -> Engine<MemoryStore> {
    Engine::new(MemoryStore::new(), Config::default()).with_embedder(Box::new(HashEmbedder))
}

fn ep(text: &str, at: i64) -> Episode {
    let mut e = Episode::new(text, at);
    e.agent = "ops".into();
    e.kind = "tool_call".into();
    e
}

fn store(e: &mut Engine<MemoryStore>, episode: Episode) -> u64 {
    match e.remember(NS, episode, None).unwrap() {
        Remembered::Stored { id, .. } => id,
        Remembered::Discarded { reason } => panic!("discarded: {reason}"),
    }
}

fn rank(e: &mut Engine<MemoryStore>, q: &str, id: u64, now: i64) -> Option<usize> {
    let mut query = Query::new(q, 50);
    query.touch = false;
    let r = e.recall(NS, &query, now).unwrap();
    r.hits
        .iter()
        .position(|h| h.episode.id == id || h.episode.evidence.contains(&id))
        .map(|p| p + 1)
}

const CONTACTS: [&str; 4] = ["Acme", "Globex", "Initech", "Umbrella"];
const ROUTINE: [&str; 6] = [
    "sent the weekly status report",
    "synced the calendar with the shared drive",
    "filed the support ticket update",
    "archived the processed emails",
    "renewed the subscription reminder",
    "updated the contact notes after the call",
];

/// A 12-month history: `per_day` episodes a day over 365 days, four contacts, routine work
/// with an identifier in each (INV-<n>).
fn history(e: &mut Engine<MemoryStore>, per_day: usize) -> Vec<u64> {
    let mut ids = Vec::new();
    for day in 0..365 {
        for i in 0..per_day {
            let n = day * per_day + i;
            let at = t0() + day as i64 * DAY + (9 + i as i64) * HOUR;
            let mut x = ep(&format!("{} for invoice INV-{n}", ROUTINE[n % ROUTINE.len()]), at);
            x.entities = vec![CONTACTS[n % CONTACTS.len()].into()];
            x.outcome = Outcome::Success;
            x.situation.tool = "mail".into();
            ids.push(store(e, x));
        }
    }
    ids
}

fn now_after_year() -> i64 {
    t0() + 366 * DAY
}

#[test]
fn tiers_compact_a_year_without_deleting_anything() {
    let mut e = engine();
    let ids = history(&mut e, 4);
    let now = now_after_year();
    let before = e.stats(NS, now).unwrap();
    assert_eq!(before.episodes, ids.len() as u64);
    let r = e.nightly(NS, now, None).unwrap();
    assert!(r.done);
    let s = e.stats(NS, now).unwrap();
    let weekly: Vec<_> = r.compacted.iter().filter(|c| c.tier == 1).collect();
    let monthly: Vec<_> = r.compacted.iter().filter(|c| c.tier == 2).collect();
    let raw_compacted: usize = weekly.iter().map(|c| c.sources.len()).sum();
    let tier1_ratio = raw_compacted as f64 / weekly.len() as f64;
    let tier2_ratio = monthly.iter().map(|c| c.sources.len()).sum::<usize>() as f64
        / monthly.len() as f64
        * tier1_ratio;
    println!(
        "12-month history: {} episodes → {} weekly ({tier1_ratio:.1}:1), {} monthly ({tier2_ratio:.1}:1); stats {s:?}",
        ids.len(),
        weekly.len(),
        monthly.len()
    );
    assert!((5.0..=15.0).contains(&tier1_ratio), "tier 1 ratio {tier1_ratio}");
    assert!(tier2_ratio >= 20.0, "tier 2 ratio {tier2_ratio}");
    // Nothing deleted: every source is still readable, superseded and in its group.
    assert_eq!(s.episodes, ids.len() as u64 + weekly.len() as u64 + monthly.len() as u64);
    for c in &weekly {
        for &src in &c.sources {
            let x = e.episode(NS, src).unwrap();
            assert_eq!((x.status, x.group), (Status::Superseded, c.summary));
        }
        let summary = e.episode(NS, c.summary).unwrap();
        assert_eq!(summary.evidence, c.sources, "the evidence index lists the sources");
        assert!(!summary.compact_summary.is_empty());
    }
    assert_eq!(s.tiers.raw, ids.len() as u64);
    assert_eq!(s.cold, s.statuses.superseded);
    assert_eq!(s.retrievable, s.statuses.raw + s.statuses.active, "{s:?}");
    assert!(s.retrievable * 5 < ids.len() as u64, "{s:?}");
    // The last 30 days stay raw and recallable.
    let recent = e.episode(NS, *ids.last().unwrap()).unwrap();
    assert_eq!(recent.status, Status::Raw);
    // A second run finds nothing more to do (idempotent).
    let again = e.nightly(NS, now, None).unwrap();
    assert!(again.compacted.is_empty(), "{:?}", again.compacted);
}

#[test]
fn an_identifier_finds_its_summary_and_with_include_cold_its_source() {
    let mut e = engine();
    let ids = history(&mut e, 4);
    let now = now_after_year();
    e.nightly(NS, now, None).unwrap();
    // An episode from month 2: compacted weekly, then monthly.
    let src = ids[4 * 40 + 1];
    let text = e.episode(NS, src).unwrap().text;
    let ident = text.split_whitespace().last().unwrap().to_string();
    let mut q = Query::new(format!("invoice {ident}"), 5);
    q.touch = false;
    let hits = e.recall(NS, &q, now).unwrap().hits;
    assert!(hits.iter().all(|h| h.episode.status != Status::Superseded), "no cold record");
    let top = &hits[0].episode;
    assert!(top.tier >= 1 && top.text.contains(&ident), "the summary names {ident}: {}", top.text);
    q.include_cold = true;
    let hits = e.recall(NS, &q, now).unwrap().hits;
    assert_eq!(hits[0].episode.id, src, "full history search reaches the source");
    assert!(hits[0].explanation.sources.contains(&"cold"));
}

#[test]
fn a_confirmed_weekly_pattern_outranks_a_single_recent_event() {
    let mut e = engine();
    let start = t0();
    for i in 0..8 {
        let mut x =
            ep("Acme asked for a copy of the monthly invoice by email", start + i * HOUR * 20);
        x.entities = vec!["Acme".into()];
        store(&mut e, x);
    }
    let now = start + 40 * DAY;
    let mut recent = ep("Acme asked for the invoice copy to be posted by mail", now - HOUR);
    recent.entities = vec!["Acme".into()];
    let recent = store(&mut e, recent);
    let r = e.nightly(NS, now, None).unwrap();
    let summary = r.compacted[0].summary;
    let q = "Acme invoice copy request";
    let (s, x) = (rank(&mut e, q, summary, now).unwrap(), rank(&mut e, q, recent, now).unwrap());
    assert!(s < x, "the weekly pattern (rank {s}) outranks the single recent event (rank {x})");
}

/// The buried lesson: 10,000 episodes over a year, 400 routine date-parsing successes
/// and the one failure that holds the pitfall.
#[test]
fn the_buried_lesson_surfaces_after_compaction() {
    let mut e = engine();
    let start = t0();
    let mut lesson = 0;
    let topics = [
        "deployed the billing service to staging",
        "answered the customer email about shipping",
        "rotated the api keys for the crm",
        "reviewed the pull request for the search page",
        "exported the sales report to the spreadsheet",
    ];
    for n in 0..10_000u64 {
        let at = start + (n as i64 * 365 * DAY) / 10_000;
        let mut x = if n % 25 == 7 {
            let mut x = ep(&format!("parsed the date field of order {n} with the date parser"), at);
            x.situation.tool = "dateparse".into();
            x
        } else {
            ep(&format!("{} batch {n}", topics[n as usize % topics.len()]), at)
        };
        x.outcome = Outcome::Success;
        if n == 2_000 {
            x = ep("parsing the date field of order 2000 failed with the date parser", at);
            x.situation.tool = "dateparse".into();
            x.situation.error_class = "ambiguous-date".into();
            x.outcome = Outcome::Failure;
            x.verdict = "supplier dates are day-first (03/04 is 3 April): always pass the \
                         supplier locale to the date parser"
                .into();
        }
        let id = store(&mut e, x);
        if n == 2_000 {
            lesson = id;
        }
    }
    let now = start + 366 * DAY;
    let task = "parse the date field of an order with the date parser";
    let before = rank(&mut e, task, lesson, now);
    let r = e.nightly(NS, now, None).unwrap();
    let after = rank(&mut e, task, lesson, now);
    let stats = e.stats(NS, now).unwrap();
    println!(
        "buried lesson: rank {before:?} before compaction, {after:?} after ({} summaries; {} retrievable of {})",
        r.compacted.len(),
        stats.retrievable,
        stats.episodes
    );
    assert_eq!(after, Some(1), "the lesson is first after compaction");
    let top = &e.recall(NS, &Query::new(task, 1), now).unwrap().hits[0].episode;
    assert_eq!(top.id, lesson, "the lesson itself, not a summary holding it");
    assert!(r.clustered.is_empty(), "one failure is never generalised into a rule");
}

#[test]
fn the_stale_stack_gives_way_to_the_new_one() {
    let mut e = engine();
    let start = t0();
    for i in 0..30 {
        let mut x = ep("the build runs on Node 18 with npm ci", start + i * DAY);
        x.situation.tool = "node".into();
        x.outcome = Outcome::Success;
        store(&mut e, x);
    }
    let mut moved = ep("moved the build from Node 18 to Node 22", start + 100 * DAY);
    moved.kind = "decision".into();
    moved.situation.tool = "node".into();
    let moved = store(&mut e, moved);
    for i in 0..5 {
        let mut x = ep("the build runs on Node 22 with npm ci", start + (101 + i) * DAY);
        x.situation.tool = "node".into();
        x.outcome = Outcome::Success;
        store(&mut e, x);
    }
    let now = start + 130 * DAY;
    e.nightly(NS, now, None).unwrap();
    let mut q = Query::new("which Node version does the build run on", 3);
    q.touch = false;
    let hits = e.recall(NS, &q, now).unwrap().hits;
    let top = &hits[0].episode;
    println!("stale stack top: {:?}", hits.iter().map(|h| &h.episode.text).collect::<Vec<_>>());
    assert!(
        top.text.contains("22") && (top.id == moved || top.created_at > start + 100 * DAY),
        "{}",
        top.text
    );
}

struct Planted(String);

impl Llm for Planted {
    fn complete(&mut self, _prompt: &str, _max: u32) -> Result<String, String> {
        Ok(self.0.clone())
    }
}

fn invoices(e: &mut Engine<MemoryStore>) -> Vec<u64> {
    (0..6)
        .map(|i| {
            let mut x = ep(
                &format!("sent invoice INV-{i} for 1,200 EUR to Dana Whitfield"),
                t0() + i * HOUR,
            );
            x.entities = vec!["Dana Whitfield".into()];
            store(e, x)
        })
        .collect()
}

#[test]
fn a_model_summary_that_invents_an_amount_or_a_name_is_refused() {
    for (answer, accepted) in [
        ("Six invoices INV-0 to INV-5 of 1,200 EUR each went to Dana Whitfield.", true),
        ("Six invoices of 1,500 EUR each went to Dana Whitfield.", false),
        ("Six invoices of 1,200 EUR each went to Dana Whitfield and Marco Rossi.", false),
    ] {
        let mut e = Engine::new(MemoryStore::new(), Config::default())
            .with_embedder(Box::new(HashEmbedder))
            .with_llm(Box::new(Planted(answer.into())));
        invoices(&mut e);
        let r = e.nightly(NS, t0() + 40 * DAY, None).unwrap();
        let c = &r.compacted[0];
        let text = e.episode(NS, c.summary).unwrap().text;
        if accepted {
            assert_eq!(c.written_by, "llm");
            assert!(text.starts_with(answer), "{text}");
        } else {
            assert_eq!(c.written_by, "extractive", "{answer}");
            assert!(!c.llm_refused.is_empty());
            assert!(
                text.starts_with("Notes: sent invoice INV-0"),
                "the fallback is written: {text}"
            );
            assert!(!text.contains("1,500") && !text.contains("Marco"));
        }
    }
}

#[test]
fn erasing_a_compacted_episode_dissolves_its_summary_and_recompacts_without_it() {
    let mut e = engine();
    let ids = invoices(&mut e);
    let now = t0() + 40 * DAY;
    let r = e.nightly(NS, now, None).unwrap();
    let summary = r.compacted[0].summary;
    assert!(e.episode(NS, summary).unwrap().text.contains("INV-3"));
    let receipt = e.erase(NS, &Erasure::Episode(ids[3]), now).unwrap();
    assert!(receipt.verification.occurrences == 0 && receipt.verification.leftover_keys == 0);
    assert!(receipt.layers.iter().any(|l| l.layer == "summaries" && l.deleted == 1), "{receipt:?}");
    assert!(e.episode(NS, summary).is_err(), "the summary is gone");
    for &id in ids.iter().filter(|&&i| i != ids[3]) {
        let x = e.episode(NS, id).unwrap();
        assert_eq!((x.status, x.group), (Status::Raw, 0), "source {id} restored");
    }
    let r = e.nightly(NS, now + DAY, None).unwrap();
    let text = e.episode(NS, r.compacted[0].summary).unwrap().text;
    assert!(!text.contains("INV-3") && text.contains("INV-4"), "{text}");
    // A subject erasure reaches the summary too.
    // She is in every episode: the safety catch is lifted on purpose.
    let force = mnemo::engine::EraseOptions { force: true, ..Default::default() };
    let dana = Erasure::Subject("Dana Whitfield".into());
    let receipt = e.erase_with(NS, &dana, &force, now + DAY).unwrap();
    assert_eq!(receipt.verification.occurrences, 0, "{receipt:?}");
    assert_eq!(e.stats(NS, now + DAY).unwrap().episodes, 0);
}

fn digest(store: &MemoryStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    store
        .scan(b"", None, usize::MAX)
        .unwrap()
        .into_iter()
        .filter(|(k, _)| !String::from_utf8_lossy(k).contains("/log/"))
        .collect()
}

#[test]
fn an_interrupted_nightly_run_gives_the_same_store() {
    let build = || {
        let mut e = engine();
        history(&mut e, 2);
        for i in 0..6 {
            let mut x = ep("npm ci failed on the lockfile", t0() + (200 + i) * DAY);
            x.outcome = Outcome::Failure;
            x.verdict = "the cache held a stale lockfile: clear it".into();
            x.situation.tool = "npm".into();
            x.situation.error_class = "lockfile".into();
            store(&mut e, x);
        }
        e
    };
    let now = now_after_year();
    let mut whole = build();
    let full = whole.nightly(NS, now, None).unwrap();
    assert!(full.compacted.len() > 20 && !full.clustered.is_empty(), "{full:?}");
    let reference = digest(whole.store());
    let mut seed = 7u64;
    for budget in [1u64, 2, 5, 17, 64, 250, 1000] {
        for jitter in [false, true] {
            let mut e = build();
            let mut calls = 0;
            loop {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let b = if jitter { 1 + seed % (budget * 2) } else { budget };
                // Later calls pass a later time: a resumed run keeps its first call's.
                let at = now + calls;
                calls += 1;
                if e.nightly(NS, at, Some(b)).unwrap().done {
                    break;
                }
                // A new engine over the same store: the run resumes from its stored cursor.
                let store = e.into_store();
                e = Engine::new(store, Config::default()).with_embedder(Box::new(HashEmbedder));
            }
            assert!(calls > 1 || budget >= 1000);
            let got: std::collections::BTreeMap<_, _> = digest(e.store()).into_iter().collect();
            let want: std::collections::BTreeMap<_, _> = reference.iter().cloned().collect();
            let differing: Vec<String> = want
                .keys()
                .chain(got.keys())
                .filter(|k| got.get(*k) != want.get(*k))
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect();
            assert!(
                differing.is_empty(),
                "budget {budget} (jitter {jitter}, {calls} calls): {differing:?}"
            );
        }
    }
}

fn lesson(e: &mut Engine<MemoryStore>, day: i64) -> u64 {
    let mut x = ep("npm ci failed on the lockfile in the build", t0() + day * DAY);
    x.outcome = Outcome::Failure;
    x.verdict = "the cache held a stale lockfile: clear the npm cache".into();
    x.situation.tool = "npm".into();
    x.situation.error_class = "lockfile".into();
    x.situation.stage = "build".into();
    store(e, x)
}

#[test]
fn recurring_lessons_become_a_rule_and_leave_recall() {
    let mut e = engine();
    let one = lesson(&mut e, 0);
    let r = e.nightly(NS, t0() + DAY, None).unwrap();
    assert!(r.clustered.is_empty(), "one lesson is never generalised");
    let same_day: Vec<u64> = (0..3).map(|_| lesson(&mut e, 2)).collect();
    let n = e.observations(NS, &[]).unwrap().len();
    assert_eq!(n, 0, "one incident logged thrice in a day is not independent support");
    // The recurrence trigger: the fifth lesson on this situation consolidates it at once.
    let more: Vec<u64> = (3..5).map(|d| lesson(&mut e, d)).collect();
    let obs = e.observations(NS, &[]).unwrap();
    assert_eq!(obs.len(), 1, "written on the write that crossed the threshold: {obs:?}");
    let o = &obs[0];
    assert_eq!(o.pattern, "ops|exception:lockfile|tool=npm");
    assert!(o.quote.contains("stale lockfile"), "{}", o.quote);
    let mut all = vec![one];
    all.extend(&same_day);
    all.extend(&more);
    assert_eq!(o.episodes, all);
    // The user confirms it; promotion makes it a rule; the next pass evicts its episodes.
    e.feedback(NS, o.id, true, t0() + 6 * DAY).unwrap();
    let r = e.nightly(NS, t0() + 6 * DAY, None).unwrap();
    assert_eq!(r.promoted.len(), 1, "{r:?} {:?}", e.observations(NS, &[]).unwrap());
    assert_eq!(r.evicted, all);
    let x = e.episode(NS, one).unwrap();
    assert_eq!((x.status, x.represented_by), (Status::Superseded, r.promoted[0]));
    let mut q = Query::new("npm ci lockfile failure", 10);
    q.touch = false;
    assert!(e.recall(NS, &q, t0() + 6 * DAY).unwrap().hits.is_empty(), "evicted from recall");
    q.include_cold = true;
    assert_eq!(e.recall(NS, &q, t0() + 6 * DAY).unwrap().hits.len(), all.len());
    assert_eq!(e.stats(NS, t0() + 6 * DAY).unwrap().cold, all.len() as u64);

    // Erasing one of its episodes takes the lesson and its rule with it; the episodes the rule
    // stood for return to recall, and the next pass learns the lesson again without it.
    let rule = r.promoted[0];
    let receipt = e.erase(NS, &mnemo::engine::Erasure::Episode(one), t0() + 7 * DAY).unwrap();
    let layer = |name: &str| receipt.layers.iter().find(|l| l.layer == name).map(|l| l.deleted);
    assert_eq!(layer("rules"), Some(1), "{receipt:?}");
    assert_eq!(layer("observations"), Some(1), "{receipt:?}");
    assert!(e.rules(NS, &[]).unwrap().iter().all(|x| x.id != rule));
    assert!(e.observations(NS, &[]).unwrap().is_empty());
    let back = e.episode(NS, more[0]).unwrap();
    assert_eq!((back.status, back.represented_by), (Status::Raw, 0));
    q.include_cold = false;
    let hits = e.recall(NS, &q, t0() + 7 * DAY).unwrap().hits;
    assert_eq!(hits.len(), all.len() - 1, "the other lessons are recallable again");
    let r = e.nightly(NS, t0() + 8 * DAY, None).unwrap();
    assert_eq!(r.clustered.len(), 1, "{r:?}");
    let o = e.observation(NS, r.clustered[0]).unwrap();
    assert!(!o.episodes.contains(&one) && o.episodes.len() == all.len() - 1, "{o:?}");
}

#[test]
fn a_task_memory_leaves_recall_when_it_expires() {
    let mut e = engine();
    let mut x = ep("temporary note: the staging password rotates tonight", t0());
    x.expires_at = t0() + DAY;
    let id = store(&mut e, x);
    let q = Query::new("staging password rotation", 5);
    assert_eq!(e.recall(NS, &q, t0() + HOUR).unwrap().hits[0].episode.id, id);
    let later = e.recall(NS, &q, t0() + 2 * DAY);
    assert!(later.map(|r| r.hits.is_empty()).unwrap_or(true), "expired");
    assert_eq!(e.stats(NS, t0() + 2 * DAY).unwrap().retrievable, 0);
    assert_eq!(e.episode(NS, id).unwrap().expires_at, t0() + DAY, "kept, not deleted");
}

/// The compaction workload is deterministic; its digest is kept for the wasm test
/// (`tests/js/engine.test.mjs`), which checks the wasm build writes the same store bit for bit.
#[test]
fn compaction_is_deterministic_and_its_digest_is_kept_for_wasm() {
    let mut clock = || 0.0;
    let a = mnemo_bench::compaction(3_000, &mut clock);
    let b = mnemo_bench::compaction(3_000, &mut clock);
    assert_eq!(a.digest, b.digest);
    assert!(a.weekly > 100 && a.monthly > 10, "{a:?}");
    assert!(a.retrievable_after * 4 < a.retrievable_before, "{a:?}");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"),
        Into::into,
    );
    std::fs::create_dir_all(&target).unwrap();
    let json = serde_json::json!({"n": 3000, "digest": a.digest, "weekly": a.weekly, "monthly": a.monthly});
    std::fs::write(target.join("compaction-digest-native.json"), json.to_string()).unwrap();
}

/// The ids a hit stands for: itself, and through a summary's evidence index (monthly →
/// weekly → raw) every record it summarises.
fn expand(e: &mut Engine<MemoryStore>, episode: Episode) -> Vec<u64> {
    let mut out = Vec::new();
    let mut stack = vec![episode];
    while let Some(x) = stack.pop() {
        out.push(x.id);
        for id in &x.evidence {
            stack.push(e.episode(NS, *id).unwrap());
        }
    }
    out
}

fn recall_at_10(e: &mut Engine<MemoryStore>, queries: &[(String, Vec<u64>)], now: i64) -> f64 {
    let mut total = 0.0;
    for (text, relevant) in queries {
        let mut q = Query::new(text.as_str(), 10);
        q.touch = false;
        let mut found = std::collections::BTreeSet::new();
        for h in e.recall(NS, &q, now).unwrap().hits {
            found.extend(expand(e, h.episode).into_iter().filter(|id| relevant.contains(id)));
        }
        let r = found.len() as f64 / relevant.len().min(10) as f64;
        if std::env::var_os("MNEMO_COMPACTION_DEBUG").is_some() {
            println!("{text:?}: {r:.2}");
        }
        total += r;
    }
    total / queries.len() as f64
}

#[test]
fn recall_on_a_year_of_history_does_not_drop_after_compaction() {
    let mut e = engine();
    let ids = history(&mut e, 4);
    let now = now_after_year();
    let mut queries = Vec::new();
    // Exact identifiers of 40 episodes spread over the year.
    for k in 0..40 {
        let id = ids[(k * 37) % ids.len()];
        let text = e.episode(NS, id).unwrap().text;
        let ident = text.split_whitespace().last().unwrap().to_string();
        queries.push((format!("invoice {ident}"), vec![id]));
    }
    // Topics: one routine task with one contact (many relevant records).
    for (r, routine) in ROUTINE.iter().enumerate() {
        for (c, contact) in CONTACTS.iter().enumerate() {
            let relevant: Vec<u64> = ids
                .iter()
                .enumerate()
                .filter(|(n, _)| n % ROUTINE.len() == r && n % CONTACTS.len() == c)
                .map(|(_, id)| *id)
                .collect();
            if !relevant.is_empty() {
                queries.push((format!("{contact} {routine}"), relevant));
            }
        }
    }
    let before = recall_at_10(&mut e, &queries, now);
    e.nightly(NS, now, None).unwrap();
    let after = recall_at_10(&mut e, &queries, now);
    println!(
        "12-month history, {} queries: recall@10 {before:.3} without compaction, {after:.3} with",
        queries.len()
    );
    assert!(after >= before, "recall@10 {after:.3} after compaction < {before:.3} before");
}
