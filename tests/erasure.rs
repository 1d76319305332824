//! Erasure that can be proven, and encrypted export: randomised workloads over several users and
//! subjects on the file store, raw byte scans of the log afterwards, other users' answers
//! byte-identical, receipts that pass their own scan; export round trips and tampered files.
//! `MNEMO_EXHAUSTIVE=1` flips 10,000 bits of the export instead of CI's 2,000.

mod common;
#[path = "common/spellings.rs"]
mod spellings;

use common::hash_embed::HashEmbedder;
use common::Rng;
use mnemo::engine::{Correction, Erasure, ExportOptions, FactInput, Receipt};
use mnemo::record::{Episode, Origin, RuleStatus, Source};
use mnemo::store::file::FileStore;
use mnemo::store::{KvStore, MemoryStore};
use mnemo::{Config, Engine, Query};

const DAY: i64 = 86_400_000;
const T0: i64 = 1_717_200_000_000; // 2024-06-01

fn engine<S: KvStore>(store: S) -> Engine<S> {
    Engine::new(store, Config::default()).with_embedder(Box::new(HashEmbedder))
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("mnemo-erasure-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A small deterministic generator (xorshift), so every run is the same workload.
/// Subjects unlikely to occur by chance in any byte of the store (vectors included).
fn subjects(ns: &str) -> Vec<String> {
    ["Zephyrine Okonkwo", "Bartholomew Quist", "Ingrid Vasquez-Lindqvist"]
        .iter()
        .map(|s| format!("{s} {ns}"))
        .collect()
}

const TOPICS: &[&str] = &[
    "asked for the quarterly invoice",
    "prefers calls after lunch",
    "reported a failed deploy of the billing service",
    "approved the budget for the offsite",
    "sent the signed contract",
];

/// Fills namespace `ns` with episodes, facts, triples, rules, signals and retrievals, some
/// naming the subjects and some not.
fn fill<S: KvStore>(e: &mut Engine<S>, ns: &str, rng: &mut Rng) {
    let subs = subjects(ns);
    for i in 0..60 {
        let at = T0 + i * DAY / 4;
        let topic = rng.pick(TOPICS);
        let mut ep = match i % 3 {
            0 => Episode::new(format!("{} {topic} (note {i})", subs[(i as usize / 3) % 3]), at),
            1 => {
                let mut ep = Episode::new(format!("the contact {topic} (note {i})"), at);
                ep.entities.push(subs[(i as usize / 3) % 3].clone()); // tagged, not in the text
                ep
            }
            _ => Episode::new(format!("routine: {topic} for the team (note {i})"), at),
        };
        ep.source = "agent".into();
        e.remember(ns, ep, None).unwrap();
    }
    for (i, s) in subs.iter().enumerate() {
        let key = format!("contact.{i}.name");
        let f =
            FactInput { source: Source::Explicit, origin: Origin::User, ..FactInput::new(&key, s) };
        e.write_fact(ns, &f, T0).unwrap();
        let f2 = FactInput {
            origin: Origin::User,
            ..FactInput::new(format!("contact.{i}.city"), "Turin")
        };
        e.write_fact(ns, &f2, T0).unwrap();
        e.assert_triple(ns, s, "works_at", "Acme", 0.9, Source::Explicit, T0).unwrap();
        e.add_rule(
            ns,
            &format!("Always copy {s} on invoices"),
            "",
            RuleStatus::Active,
            Origin::User,
            T0,
        )
        .unwrap();
        for n in 0..4 {
            let ts = format!("2024-06-01T10:{n:02}:00Z");
            let sig = serde_json::json!({"ts": ts, "kind": "edited", "agent": "email",
                "situation": {"contact": s},
                "before": format!("Dear {s}, the order {n} is confirmed; see you."),
                "after": format!("Dear {s}, the order {n} is confirmed, see you."),
                "episode": (n as u64) + 1});
            e.signal_json(ns, &sig.to_string()).unwrap();
        }
    }
    e.write_fact(
        ns,
        &FactInput { origin: Origin::User, ..FactInput::new("language", "Italian") },
        T0,
    )
    .unwrap();
    e.add_rule(ns, "Answer in Italian", "", RuleStatus::Active, Origin::User, T0).unwrap();
    for q in ["invoice", "deploy", "budget"] {
        e.recall(ns, &Query::new(q, 5), T0 + 30 * DAY).unwrap();
    }
}

/// Recall answers of `ns` as text (no access updates), to compare before and after.
fn answers<S: KvStore>(e: &mut Engine<S>, ns: &str) -> String {
    let mut out = String::new();
    for q in ["invoice", "deploy", "budget", "lunch", "contract"] {
        let mut query = Query::new(q, 8);
        query.touch = false;
        for h in e.recall(ns, &query, T0 + 40 * DAY).unwrap().hits {
            out.push_str(&format!(
                "{} {} {:.6}\n",
                h.episode.id, h.episode.text, h.explanation.final_score
            ));
        }
    }
    out.push_str(&format!("{:?}\n", e.facts(ns, T0 + 40 * DAY, &[], true).unwrap()));
    out.push_str(&format!("{:?}\n", e.rules(ns, &[]).unwrap()));
    out
}

fn raw_count(bytes: &[u8], needle: &str) -> usize {
    let n = needle.to_ascii_lowercase().into_bytes();
    bytes.windows(n.len()).filter(|w| w.eq_ignore_ascii_case(&n)).count()
}

fn assert_verified(r: &Receipt) {
    assert!(r.verified(), "{r:#?}");
    assert!(r.vacuumed);
    let json = serde_json::to_string(r).unwrap();
    assert!(!json.contains("Zephyrine") && !json.contains("Bartholomew"), "{json}");
}

#[test]
fn a_subject_leaves_every_layer_and_every_byte_of_the_file_and_others_are_untouched() {
    let dir = tempdir("subject");
    let mut e = engine(FileStore::open(&dir).unwrap());
    let mut rng = Rng(0x5eed_1234);
    for ns in ["ana", "bo", "cy"] {
        fill(&mut e, ns, &mut rng);
    }
    e.nightly("ana", T0 + 31 * DAY, None).unwrap();
    e.snapshot("ana").unwrap();
    let before_bo = answers(&mut e, "bo");
    let before_cy = answers(&mut e, "cy");
    let [zeph, bart, ingrid]: [String; 3] = subjects("ana").try_into().unwrap();
    let log = dir.join("mnemo.log");
    assert!(raw_count(&std::fs::read(&log).unwrap(), &zeph) > 0);

    let r = e.erase("ana", &Erasure::Subject(zeph.clone()), T0 + 41 * DAY).unwrap();
    assert_verified(&r);
    // Notes 0, 9, 18… name her in the text, notes 1, 10, 19… tag her: 7 of each.
    assert_eq!(r.episode_ids.len(), 14, "{r:#?}");
    let layer = |name: &str| r.layers.iter().find(|l| l.layer == name).map_or(0, |l| l.deleted);
    assert!(layer("episodes") > 0 && layer("episode vectors") > 0 && layer("facts") == 1);
    assert!(layer("triples") == 1 && layer("rules") == 1 && layer("signals") >= 4, "{r:#?}");
    assert!(layer("snapshot") > 0, "the snapshot held her episodes: {r:#?}");
    let raw = std::fs::read(&log).unwrap();
    assert_eq!(raw_count(&raw, &zeph), 0, "no byte of the subject left in the file");
    assert!(raw_count(&raw, &bart) > 0 && raw_count(&raw, &ingrid) > 0, "other subjects stay");

    // The rest of the namespace works, other namespaces answer byte for byte as before.
    let hits = e.recall("ana", &Query::new("invoice", 50), T0 + 41 * DAY).unwrap().hits;
    assert!(!hits.is_empty() && hits.iter().all(|h| !h.episode.text.contains("Zephyrine")));
    assert!(e.fact("ana", "language", T0 + 41 * DAY, true).unwrap().is_some());
    assert_eq!(answers(&mut e, "bo"), before_bo);
    assert_eq!(answers(&mut e, "cy"), before_cy);

    // Reopened from the file: still gone, still verified by a fresh scan.
    drop(e);
    let mut e = engine(FileStore::open(&dir).unwrap());
    let again = e.erase("ana", &Erasure::Subject(zeph), T0 + 42 * DAY).unwrap();
    assert_verified(&again);
    assert!(again.episode_ids.is_empty(), "nothing left to erase");
    assert_eq!(answers(&mut e, "bo"), before_bo);
}

#[test]
fn one_memory_by_id_takes_what_derives_from_it() {
    let mut e = engine(MemoryStore::new());
    let mut rng = Rng(7);
    fill(&mut e, "ana", &mut rng);
    let target = 2u64; // signals of every subject point at episodes 1–4
    let text = e.episode("ana", target).unwrap().text;
    let r = e.erase("ana", &Erasure::Episode(target), T0 + 41 * DAY).unwrap();
    assert_verified(&r);
    assert_eq!(r.episode_ids, vec![target]);
    let signals = r.layers.iter().find(|l| l.layer == "signals").map_or(0, |l| l.deleted);
    assert_eq!(signals, 3, "the signal of each subject tied to it: {r:#?}");
    assert_eq!(e.episode("ana", target).unwrap_err().code(), "NOT_FOUND");
    let dump = e.export_json("ana", T0).unwrap();
    assert!(!dump.contains(&text), "gone from the readable export too");
    assert_eq!(e.erase("ana", &Erasure::Episode(target), T0).unwrap_err().code(), "NOT_FOUND");
}

#[test]
fn a_corrected_memory_keeps_its_id_and_no_byte_of_the_wrong_text_survives() {
    let dir = tempdir("correct");
    let mut e = engine(FileStore::open(&dir).unwrap());
    fill(&mut e, "ana", &mut Rng(5));
    fill(&mut e, "bo", &mut Rng(6));
    let before_bo = answers(&mut e, "bo");
    let target = 3u64; // signals of every subject point at episodes 1–4
    let old = e.episode("ana", target).unwrap();
    let wrong = "Zephyrine moved the offsite to the Quattrocento hotel in Genoa";
    let right = "Zephyrine moved the offsite to the Bellavista hotel in Turin";
    let correction = Correction { text: wrong.into(), verdict: None };
    let first = e.correct("ana", target, &correction, None, T0 + 41 * DAY).unwrap();
    let signals = first.layers.iter().find(|l| l.layer == "signals").map_or(0, |l| l.deleted);
    assert_eq!(signals, 3, "each subject's signal tied to the wrong version goes: {first:#?}");
    let raw = std::fs::read(dir.join("mnemo.log")).unwrap();
    assert!(raw_count(&raw, "Quattrocento") > 0, "the first correction is stored");

    let correction = Correction { text: right.into(), verdict: Some("confirmed".into()) };
    let r = e.correct("ana", target, &correction, None, T0 + 42 * DAY).unwrap();
    assert_eq!(r.scope, "correction");
    assert_verified(&r);
    assert_eq!(r.episode_ids, vec![target]);
    assert!(r.verification.needles >= 1, "the wrong text was searched for: {r:#?}");
    let episodes = r.layers.iter().find(|l| l.layer == "episodes").unwrap();
    assert_eq!((episodes.deleted, episodes.rewritten), (0, 1), "{r:#?}");

    let now = e.episode("ana", target).unwrap();
    assert_eq!((now.text.as_str(), now.verdict.as_str()), (right, "confirmed"));
    assert_eq!(
        (now.created_at, &now.entities, now.status),
        (old.created_at, &old.entities, old.status)
    );
    let mut q = Query::new("Bellavista hotel Turin offsite", 3);
    q.touch = false;
    let hits = e.recall("ana", &q, T0 + 43 * DAY).unwrap().hits;
    assert_eq!(hits[0].episode.id, target, "found by its new words (index and vector rebuilt)");
    let mut q = Query::new("Quattrocento Genoa", 3);
    q.touch = false;
    assert!(e
        .recall("ana", &q, T0 + 43 * DAY)
        .unwrap()
        .hits
        .iter()
        .all(|h| h.episode.id != target || h.explanation.bm25 == 0.0));
    let raw = std::fs::read(dir.join("mnemo.log")).unwrap();
    assert_eq!(raw_count(&raw, "Quattrocento"), 0, "no byte of the wrong version in the file");
    if old.text.len() >= 24 {
        assert_eq!(raw_count(&raw, &old.text), 0, "nor of the original");
    }
    assert_eq!(answers(&mut e, "bo"), before_bo, "another user is untouched");
    drop(e);
    let mut e = engine(FileStore::open(&dir).unwrap());
    assert_eq!(e.episode("ana", target).unwrap().text, right, "survives a reopen");

    let empty = Correction { text: "  ".into(), verdict: None };
    assert_eq!(e.correct("ana", target, &empty, None, T0).unwrap_err().code(), "INVALID_INPUT");
    let c = Correction { text: "x".into(), verdict: None };
    assert_eq!(e.correct("ana", 9_999, &c, None, T0).unwrap_err().code(), "NOT_FOUND");
    assert_eq!(
        e.episode("ana", target).unwrap().text,
        right,
        "a refused correction changes nothing"
    );
}

#[test]
fn a_whole_user_goes_and_queued_requests_run_at_night() {
    let dir = tempdir("namespace");
    let mut e = engine(FileStore::open(&dir).unwrap());
    let mut rng = Rng(99);
    fill(&mut e, "ana", &mut rng);
    fill(&mut e, "bo", &mut rng);
    let before_bo = answers(&mut e, "bo");
    let bart = subjects("bo")[1].clone();
    let id = e.request_erasure("bo", &Erasure::Subject(bart.clone()), T0).unwrap();
    assert_eq!(e.erasure_requests("bo").unwrap(), vec![(id, Erasure::Subject(bart.clone()))]);
    let r = e.erase("ana", &Erasure::Namespace, T0 + DAY).unwrap();
    assert_verified(&r);
    assert!(r.layers.iter().map(|l| l.deleted).sum::<usize>() > 100, "{r:#?}");
    let raw = std::fs::read(dir.join("mnemo.log")).unwrap();
    for s in subjects("ana") {
        assert_eq!(raw_count(&raw, &s), 0, "{s}");
    }
    assert_eq!(raw_count(&raw, "u/ana/"), 0, "not one key of the user is left");
    assert_eq!(answers(&mut e, "bo"), before_bo);

    let night = e.nightly("bo", T0 + 2 * DAY, None).unwrap();
    assert_eq!(night.erasures.len(), 1, "{night:?}");
    let receipt: serde_json::Value = serde_json::from_str(&night.erasures[0]).unwrap();
    assert_eq!(receipt["verification"]["occurrences"], 0);
    assert!(e.erasure_requests("bo").unwrap().is_empty());
    let raw = std::fs::read(dir.join("mnemo.log")).unwrap();
    assert_eq!(raw_count(&raw, &bart), 0);
}

#[test]
fn the_readable_export_lists_every_layer() {
    let mut e = engine(MemoryStore::new());
    fill(&mut e, "ana", &mut Rng(3));
    let doc: serde_json::Value = serde_json::from_str(&e.export_json("ana", T0).unwrap()).unwrap();
    assert_eq!(doc["format"], "mnemo-access/1");
    assert_eq!(doc["episodes"].as_array().unwrap().len(), 60);
    for (section, n) in
        [("facts", 7), ("triples", 3), ("rules", 4), ("signals", 12), ("retrievals", 3)]
    {
        assert_eq!(doc[section].as_array().unwrap().len(), n, "{section}");
    }
    assert_eq!(doc["derived"]["episodeVectors"], 60);
    assert!(doc["unreadable"].as_array().unwrap().is_empty());
}

fn options(seed: u8) -> ExportOptions {
    ExportOptions { log_n: 10, ..ExportOptions::new([seed; 16], [seed ^ 0x5a; 7], T0) }
}

#[test]
fn an_export_round_trips_into_another_namespace_and_engine() {
    let mut a = engine(MemoryStore::new());
    fill(&mut a, "ana", &mut Rng(11));
    let file = a.export_encrypted_bytes("ana", "correct horse battery", &options(1)).unwrap();
    assert!(raw_count(&file, "Zephyrine") == 0 && raw_count(&file, "invoice") == 0, "encrypted");
    let mut b = engine(MemoryStore::new());
    let moved = b.import_encrypted("ana-restored", "correct horse battery", &file).unwrap();
    assert_eq!(moved.bytes, file.len());
    assert_eq!(answers(&mut a, "ana"), answers(&mut b, "ana-restored"));
    let err = b.import_encrypted("ana-restored", "correct horse battery", &file).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT", "{err}: only into an empty namespace");
}

#[test]
fn a_wrong_passphrase_a_flipped_bit_a_cut_or_a_newer_version_imports_nothing() {
    let mut a = engine(MemoryStore::new());
    fill(&mut a, "ana", &mut Rng(5));
    // Make the export about 1 MB.
    for i in 0..700 {
        let text = format!("bulk note {i}: {}", "lorem ipsum dolor sit amet ".repeat(50));
        a.remember("ana", Episode::new(text, T0 + i), None).unwrap();
    }
    let file = a.export_encrypted_bytes("ana", "pass phrase", &options(2)).unwrap();
    assert!(file.len() > 1_000_000, "{} bytes", file.len());
    let mut b = engine(MemoryStore::new());
    let empty = |b: &Engine<MemoryStore>| b.store().is_empty();

    assert_eq!(b.import_encrypted("x", "wrong phrase", &file).unwrap_err().code(), "DECRYPT");
    let mut newer = file.clone();
    newer[6] = 2;
    assert_eq!(b.import_encrypted("x", "pass phrase", &newer).unwrap_err().code(), "FORMAT");
    // A crafted cost (32 GiB: log_n 22, r 64) is refused before any key is derived; so is one
    // step over 4 times the default (log_n 18 with r 8).
    for (log_n, r) in [(22u8, 64u32), (18, 8)] {
        let mut costly = file.clone();
        costly[7] = log_n;
        costly[8..12].copy_from_slice(&r.to_le_bytes());
        let err = b.import_encrypted("x", "pass phrase", &costly).unwrap_err();
        assert_eq!(err.code(), "FORMAT", "{err}");
    }
    for cut in [0, 5, 40, 71, 75, 1000, file.len() / 2, file.len() - 1] {
        let err = b.import_encrypted("x", "pass phrase", &file[..cut]).unwrap_err();
        assert!(["CORRUPT", "FORMAT"].contains(&err.code()), "cut at {cut}: {err}");
    }
    // Every bit of the header, then bits spread over the whole file: 10,000 in all with
    // MNEMO_EXHAUSTIVE=1, a seeded 2,000 otherwise (CI's time budget).
    let bits = file.len() * 8;
    let total = if std::env::var_os("MNEMO_EXHAUSTIVE").is_some() { 10_000 } else { 2_000 };
    let mut rng = Rng(0xb175);
    let mut flips: Vec<usize> = (0..71 * 8).collect();
    while flips.len() < total {
        flips.push((rng.next() % bits as u64) as usize);
    }
    for bit in flips {
        let mut bad = file.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let err = b.import_encrypted("x", "pass phrase", &bad).unwrap_err();
        assert!(["CORRUPT", "DECRYPT", "FORMAT"].contains(&err.code()), "bit {bit}: {err}");
    }
    assert!(empty(&b), "nothing was imported");
    b.import_encrypted("x", "pass phrase", &file).expect("the untouched file imports");
}

/// The file store, with a vacuum that fails once (a crash between the delete batch and it).
/// The file store, whose next `.1` vacuums fail (a read-only directory, a full disk).
struct VacuumFails(FileStore, u32);

impl KvStore for VacuumFails {
    fn get(&self, key: &[u8]) -> mnemo::Result<Option<Vec<u8>>> {
        self.0.get(key)
    }
    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> mnemo::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.0.scan(prefix, after, limit)
    }
    fn write(&mut self, batch: &mnemo::store::Batch) -> mnemo::Result<()> {
        self.0.write(batch)
    }
    fn vacuum(&mut self) -> mnemo::Result<()> {
        if self.1 > 0 {
            self.1 -= 1;
            return Err(mnemo::Error::Io { path: "vacuum".into(), detail: "crash".into() });
        }
        self.0.vacuum()
    }
}

#[test]
fn a_failed_vacuum_leaves_the_store_usable_and_is_retried_at_each_open() {
    let dir = tempdir("vacuum-crash");
    let mut store = FileStore::open(&dir).unwrap();
    store.set_auto_compact(false);
    let mut e = engine(VacuumFails(store, 2));
    fill(&mut e, "ana", &mut Rng(21));
    let zeph = subjects("ana")[0].clone();
    let r = e.erase("ana", &Erasure::Subject(zeph.clone()), T0).unwrap();
    assert!(!r.vacuumed && r.vacuum_error.is_some() && !r.verified(), "{r:#?}");
    assert!(!r.episode_ids.is_empty() && r.verification.occurrences == 0, "committed: {r:#?}");
    let log = dir.join("mnemo.log");
    assert!(raw_count(&std::fs::read(&log).unwrap(), &zeph) > 0, "deleted, not yet vacuumed");
    // Usable meanwhile: the next load retries (and fails again), and says so.
    e.remember("ana", Episode::new("a later note about the budget", T0 + DAY), None).unwrap();
    let pending = e.quarantined("ana").unwrap();
    assert!(pending.iter().any(|q| q.reason.contains("vacuum is pending")), "{pending:?}");
    let hits = e.recall("ana", &Query::new(&zeph, 10), T0 + DAY).unwrap().hits;
    assert!(hits.iter().all(|h| !h.episode.text.contains(&zeph)), "erased stays erased");
    drop(e);
    // Once the disk is fixed, any namespace's next load finishes it.
    let mut e = engine(FileStore::open(&dir).unwrap());
    e.load("bo").unwrap();
    assert_eq!(raw_count(&std::fs::read(&log).unwrap(), &zeph), 0);
    assert!(e.quarantined("bo").unwrap().is_empty());
    let again = e.erase("ana", &Erasure::Subject(zeph), T0).unwrap();
    assert!(again.verified() && again.episode_ids.is_empty(), "{again:#?}");
}

/// The subject written every way a person or a program writes it (`common::spellings`). One
/// episode per spelling (each with its own marker), one control episode; a subject erasure on
/// the file store leaves no byte of any spelling's marker in the log, and the control's marker
/// stays.
#[test]
fn a_subject_is_erased_however_it_is_spelled() {
    let spellings = spellings::spellings("René", "Müller");
    let dir = tempdir("spellings");
    let mut e = engine(FileStore::open(&dir).unwrap());
    for (i, s) in spellings.iter().enumerate() {
        e.remember(
            "ana",
            Episode::new(format!("Marker{i:04}x: call {s} today"), T0 + i as i64),
            None,
        )
        .unwrap();
    }
    e.remember("ana", Episode::new("Marker9999x: call Rene Mullerova today", T0), None).unwrap();
    // The subject is in nearly every episode here: the safety catch is lifted on purpose.
    let force = mnemo::engine::EraseOptions { force: true, ..Default::default() };
    let r = e.erase_with("ana", &Erasure::Subject("René Müller".into()), &force, T0 + DAY).unwrap();
    assert!(r.verified(), "{r:?}");
    assert_eq!(r.episode_ids.len(), spellings.len(), "every spelling found");
    drop(e);
    let log = std::fs::read(dir.join("mnemo.log")).unwrap();
    for (i, spelling) in spellings.iter().enumerate() {
        let marker = format!("Marker{i:04}x");
        assert!(
            !log.windows(marker.len()).any(|w| w == marker.as_bytes()),
            "{spelling:?} is still in the log"
        );
    }
    assert!(log.windows(11).any(|w| w == b"Marker9999x"), "another person is not erased");
}

/// The safety catch and the preview: short or common subjects refused, a subject in more
/// than half of the episodes refused unless forced, a dry run that changes nothing, and
/// linked identifiers erased with the subject.
#[test]
fn erasure_has_a_safety_catch_a_preview_and_linked_identifiers() {
    use mnemo::engine::EraseOptions;
    let mut e = engine(MemoryStore::new());
    for i in 0..52 {
        let text = match i {
            0 => "Zebulon Quartz asked to move the meeting".to_string(),
            1 => "Write to zq@quartz.example about the invoice".to_string(),
            2 => "Quartz billing: the refund goes to the account on file".to_string(),
            _ => format!("Sent episode {i} to the team"),
        };
        e.remember("ana", Episode::new(text, T0 + i), None).unwrap();
    }
    // An identifier kept unmasked as a sensitive fact.
    let iban = FactInput {
        policy: mnemo::record::Policy::Sensitive,
        ..FactInput::new("billing.iban", "IT60X0542811101000000123456")
    };
    e.write_fact("ana", &iban, T0).unwrap();
    let before = e.store().scan(b"", None, usize::MAX).unwrap();
    let subject = |s: &str| Erasure::Subject(s.into());
    let refused = |e: &mut Engine<MemoryStore>, s: &str, o: &EraseOptions| {
        e.erase_with("ana", &subject(s), o, T0 + DAY).unwrap_err()
    };
    let none = EraseOptions::default();
    for s in ["to", "Al", "the", "Della"] {
        assert_eq!(refused(&mut e, s, &none).code(), "INVALID_INPUT", "{s}");
    }
    let err = refused(&mut e, "episode", &none);
    assert!(err.to_string().contains("49 of the namespace's 52"), "{err}");
    let also_short = EraseOptions { also: vec!["zq".into()], ..none.clone() };
    assert_eq!(refused(&mut e, "Zebulon Quartz", &also_short).code(), "INVALID_INPUT");
    assert_eq!(e.store().scan(b"", None, usize::MAX).unwrap(), before, "refusals change nothing");

    let preview = EraseOptions { dry_run: true, ..none.clone() };
    let r = e.erase_with("ana", &subject("episode"), &preview, T0 + DAY).unwrap();
    assert!(r.dry_run && !r.vacuumed);
    assert_eq!(r.episode_ids.len(), 49);
    assert!(r.layers.iter().any(|l| l.layer == "episodes" && l.deleted == 49), "{r:?}");
    assert_eq!(e.store().scan(b"", None, usize::MAX).unwrap(), before, "a dry run changes nothing");

    let linked = EraseOptions {
        also: vec!["zq@quartz.example".into(), "IT60X0542811101000000123456".into()],
        ..none.clone()
    };
    let r = e.erase_with("ana", &subject("Zebulon Quartz"), &linked, T0 + DAY).unwrap();
    assert!(r.verified() && !r.dry_run, "{r:?}");
    assert_eq!(r.episode_ids.len(), 2, "the subject's and its address's episodes");
    assert!(r.layers.iter().any(|l| l.layer == "facts" && l.deleted >= 1), "the IBAN: {r:?}");
    assert!(e.fact("ana", "billing.iban", T0 + DAY, true).unwrap().is_none());
    let forced = EraseOptions { force: true, ..none };
    let r = e.erase_with("ana", &subject("episode"), &forced, T0 + DAY).unwrap();
    assert_eq!(r.episode_ids.len(), 49);
}
