//! Long memories, with the real default model: a text past the model's 512 tokens is embedded
//! as overlapping passages, found by what its tail says, explained by the passage that
//! matched, and its passages are kept, reopened (from the records and from a snapshot),
//! replaced on correction and erased with it.

mod common;

use mnemo::engine::{Correction, Erasure, Formula, Scoring};
use mnemo::record::Episode;
use mnemo::store::MemoryStore;
use mnemo::{Config, Embedder, Engine, Query, Remembered, Role};
use mnemo_embed::{BertConfig, BertEmbedder};

const NOW: i64 = 1_733_000_000_000;

fn model() -> BertEmbedder {
    BertEmbedder::from_dir(&common::model_dir(), BertConfig::e5("multilingual-e5-small-latin"))
        .unwrap()
}

/// A project log of ~900 words about a kitchen renovation whose last lines, past anything the
/// model reads at once, say how the staging database's certificate is renewed.
fn long_log() -> String {
    let days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
    let mut s = String::new();
    for week in 1..=6 {
        for day in days {
            s.push_str(&format!(
                "Week {week}, {day}: the carpenter measured the kitchen cabinets again, the \
                 tiler brought samples of terracotta and grey ceramic for the floor, and we \
                 argued about where the oven and the fridge should stand. "
            ));
        }
    }
    s.push_str(
        "Unrelated note kept at the end of the log: the TLS certificate of the staging database \
         is now renewed automatically every ninety days, and the new one is stored in Vault.",
    );
    s
}

fn engine(store: MemoryStore) -> Engine<MemoryStore> {
    let m = model();
    let config = Config { vector_model: m.model_id().into(), dim: m.dim(), ..Config::default() };
    Engine::new(store, config).with_embedder(Box::new(m))
}

const SHORT: &[&str] = &[
    "The production database runs Postgres 16 on two replicas.",
    "Backups of the staging server are taken every night at 2 am.",
    "We rotate the on-call pager every week between four engineers.",
    "The kitchen in the office got a new coffee machine.",
    "Vault is upgraded to 1.15 next sprint.",
];

const QUESTION: &str = "How often is the staging database certificate renewed?";

fn dense(k: usize) -> Query {
    let mut q = Query::new(QUESTION, k);
    q.touch = false;
    q.scoring = Some(Scoring { formula: Formula::Dense, ..Scoring::default() });
    q
}

fn stored(r: Remembered) -> u64 {
    match r {
        Remembered::Stored { id, .. } => id,
        Remembered::Discarded { reason } => panic!("discarded: {reason}"),
    }
}

#[test]
fn a_long_memory_is_found_by_its_tail_and_keeps_its_passages() {
    let log = long_log();
    let mut m = model();
    let whole = m.embed(&[log.as_str()], Role::Passage).unwrap().remove(0);
    assert!(
        whole.truncated,
        "the log must be longer than the model reads ({} tokens)",
        whole.tokens
    );

    let mut e = engine(MemoryStore::new());
    for s in SHORT {
        stored(e.remember("u", Episode::new(*s, NOW - 86_400_000), None).unwrap());
    }
    let id = stored(e.remember("u", Episode::new(log.clone(), NOW - 3_600_000), None).unwrap());

    // Read whole, the log's vector is the kitchen's: the same text stored with its truncated
    // vector sits far below, under the short memories that share the question's words.
    let mut cut = engine(MemoryStore::new());
    for s in SHORT {
        stored(
            cut.remember("u", Episode::new(*s, NOW - 86_400_000), Some(&m_vec(&mut m, s))).unwrap(),
        );
    }
    let cut_id = stored(
        cut.remember("u", Episode::new(log.clone(), NOW - 3_600_000), Some(&whole.vector)).unwrap(),
    );
    let cut_hits = cut.recall("u", &dense(10), NOW).unwrap().hits;
    let cut_rank = cut_hits.iter().position(|h| h.episode.id == cut_id).unwrap();
    let cut_cosine = cut_hits[cut_rank].explanation.cosine;
    assert!(cut_rank > 0, "the truncated vector should not find the tail");

    let check = |e: &mut Engine<MemoryStore>, what: &str| {
        let hits = e.recall("u", &dense(10), NOW).unwrap().hits;
        assert_eq!(hits[0].episode.id, id, "{what}: the log is first by its passage");
        let x = &hits[0].explanation;
        assert!(
            x.cosine > cut_cosine + 0.02,
            "{what}: cosine {} vs truncated {cut_cosine}",
            x.cosine
        );
        let p = x.passage.unwrap_or_else(|| panic!("{what}: the matching passage is named"));
        let window = &log[p.start as usize..p.end as usize];
        assert!(window.contains("renewed automatically every ninety days"), "{what}: {window:?}");
        assert!(p.index > 0, "{what}: the tail is not the first passage");
        // The default scoring finds it first too: BM25 scores its best window of 128 words,
        // where the note is not diluted by the 900 words around it; the same passage is named.
        let mut q = Query::new(QUESTION, 3);
        q.touch = false;
        let hits = e.recall("u", &q, NOW).unwrap().hits;
        assert_eq!(hits[0].episode.id, id, "{what}: default scoring");
        let x = &hits[0].explanation;
        assert_eq!(x.passage.map(|p| p.index), Some(p.index));
        let terms: Vec<&str> = x.terms.iter().map(|t| t.0.as_str()).collect();
        assert!(terms.contains(&"certificate"), "{what}: the window's terms explain it: {terms:?}");
        // A short memory has no passages.
        assert!(hits[1..].iter().all(|h| h.explanation.passage.is_none()));
        p
    };
    let first = check(&mut e, "as stored");

    // Reopened from the records, then from a snapshot: the same passages.
    let mut e = engine(e.into_store());
    assert_eq!(check(&mut e, "replayed from the records"), first);
    assert_eq!(e.snapshot("u").map(|b| b > 0).ok(), Some(true));
    let mut e = engine(e.into_store());
    e.load("u").unwrap();
    let opened = mnemo_json::Json(&e).opened("u").unwrap();
    assert!(opened.contains("\"snapshot\""), "{opened}");
    assert_eq!(check(&mut e, "restored from the snapshot"), first);

    // Corrected to a short text: read whole again, no passage.
    let fix = Correction {
        text: "The staging certificate is renewed every ninety days.".into(),
        verdict: None,
    };
    e.correct("u", id, &fix, None, NOW).unwrap();
    let hits = e.recall("u", &dense(3), NOW).unwrap().hits;
    assert_eq!(hits[0].episode.id, id);
    assert!(hits[0].explanation.passage.is_none(), "a short text is read whole");

    // A long text again, then erased: gone from every path, passages included.
    let id2 = stored(e.remember("u", Episode::new(log.clone(), NOW - 1_000), None).unwrap());
    e.erase("u", &Erasure::Episode(id), NOW).unwrap();
    e.erase("u", &Erasure::Episode(id2), NOW).unwrap();
    let gone = |e: &mut Engine<MemoryStore>| {
        let hits = e.recall("u", &dense(50), NOW).unwrap().hits;
        assert!(hits.iter().all(|h| h.episode.id != id && h.episode.id != id2));
        assert_eq!(hits.len(), SHORT.len());
        // Nor do its BM25 windows answer: the words only the log had find nothing.
        let mut q = Query::new("carpenter terracotta certificate renewed", 50);
        q.touch = false;
        q.scoring = Some(Scoring { formula: Formula::Lexical, ..Scoring::default() });
        let hits = e.recall("u", &q, NOW).unwrap().hits;
        assert!(hits
            .iter()
            .all(|h| h.episode.id != id && h.episode.id != id2 && h.explanation.bm25 == 0.0));
    };
    gone(&mut e);
    let mut e = engine(e.into_store());
    gone(&mut e);
}

fn m_vec(m: &mut BertEmbedder, s: &str) -> Vec<f32> {
    m.embed(&[s], Role::Passage).unwrap().remove(0).vector
}

/// A host that embeds itself hands the passages over in the episode JSON (the JS and WIT
/// `remember`); bad ones are refused with nothing stored.
#[test]
fn host_made_passages_go_through_the_json_surface() {
    let config = Config { vector_model: "host@1".into(), dim: 3, ..Config::default() };
    let mut e = Engine::new(MemoryStore::new(), config);
    let text = "first part about ovens. second part about certificates.";
    let good = serde_json::json!({
        "text": text, "createdAt": NOW - 1000,
        "passages": [
            {"start": 0, "end": 23, "vector": [1.0, 0.0, 0.0]},
            {"start": 24, "end": text.len(), "vector": [0.0, 1.0, 0.0]},
        ],
    });
    let out =
        mnemo_json::Json(&mut e).remember("u", &good.to_string(), Some(&[0.7, 0.7, 0.1])).unwrap();
    assert!(out.contains("\"stored\":true"), "{out}");
    let q = serde_json::json!({"text": "certificates", "k": 1, "touch": false, "formula": "dense"});
    let r: serde_json::Value = serde_json::from_str(
        &mnemo_json::Json(&mut e)
            .recall("u", &q.to_string(), NOW, Some(vec![0.0, 1.0, 0.0]))
            .unwrap(),
    )
    .unwrap();
    let x = &r["hits"][0]["explanation"];
    assert_eq!(
        x["passage"],
        serde_json::json!({"index": 1, "start": 24, "end": text.len()}),
        "{r}"
    );
    assert!((x["cosine"].as_f64().unwrap() - 1.0).abs() < 0.02, "{x}");

    let bad = [
        (serde_json::json!([{"start": 30, "end": 10, "vector": [0.0, 1.0, 0.0]}]), "not a range"),
        (serde_json::json!([{"start": 0, "end": 999, "vector": [0.0, 1.0, 0.0]}]), "not a range"),
        (serde_json::json!([{"start": 0, "end": 5, "vector": [0.0, 1.0]}]), "dimensions"),
        (serde_json::json!([{"start": 0, "end": 5}]), "needs \"vector\""),
        (serde_json::json!({"start": 0}), "must be a list"),
    ];
    for (passages, why) in bad {
        let ep = serde_json::json!({"text": text, "createdAt": NOW, "passages": passages});
        let err = mnemo_json::Json(&mut e)
            .remember("u", &ep.to_string(), Some(&[0.7, 0.7, 0.1]))
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert!(err.to_string().contains(why), "{err} lacks {why:?}");
    }
    let ep = serde_json::json!({"text": text, "createdAt": NOW, "passages": []});
    assert!(
        mnemo_json::Json(&mut e).remember("u", &ep.to_string(), None).is_err(),
        "passages need the whole vector"
    );
    let all = serde_json::json!({"text": "x", "k": 10, "touch": false, "formula": "dense"});
    let r = mnemo_json::Json(&mut e)
        .recall("u", &all.to_string(), NOW, Some(vec![1.0, 0.0, 0.0]))
        .unwrap();
    let r: serde_json::Value = serde_json::from_str(&r).unwrap();
    assert_eq!(r["hits"].as_array().unwrap().len(), 1, "nothing refused was stored");
}
