//! Retrieval by kind of question: on every class of `tests/fixtures/query-classes.json` (exact
//! identifiers, paraphrase, cross-lingual in six languages, stale vs fresh, a buried lesson,
//! negation, temporal expressions, multi-hop), the default scoring must reach at least the
//! recall@10 and nDCG@10 of the best of its own retrievers alone — BM25 alone
//! ([`Formula::Lexical`]) and the E5 cosine alone ([`Formula::Dense`]) — with the real default
//! model. Fusion must never lose what a component found.
//!
//! `cargo test --profile ci --test query_classes -- --nocapture` prints the table;
//! `MNEMO_QUALITY_GRID=1` adds a grid of parameter variants, and
//! `MNEMO_QUALITY_GRID="recency_floor=1,importance_weight=0.4;sharpness=2"` the variants given;
//! `MNEMO_QUALITY_SHOW=paraphrase` prints each query of that class with its top three and their
//! score parts, per formula.

mod common;

use mnemo::engine::{Formula, Scoring};
use mnemo::record::Episode;
use mnemo::store::MemoryStore;
use mnemo::time::{parse_iso8601, DAY};
use mnemo::{Config, Embedder, Engine, Query, Remembered, Role};
use mnemo_embed::{BertConfig, BertEmbedder};

/// Metrics are means over a class's queries; this much is noise (one query in a class of 16
/// moving one rank), not a loss.
const SLACK: f64 = 0.005;

/// Classes where the default is still below its best component, with the nDCG@10 it must not
/// fall under (today's figure). A paraphrase shares few words with its answer but often some
/// with a distractor, and BM25 (weighted by how much of the query it matches) still pulls the
/// distractor up: 0.812 against 0.910 for E5 alone (0.767 before the cosine floor moved from
/// 0.70 to 0.76). The buried lesson lost 0.005 (0.905 against 0.910) when BM25 began indexing
/// stems, which match the routine successes' words in more forms. Closing them is open work;
/// the test fails if either gets worse.
const KNOWN_GAPS: &[(&str, f64)] = &[("paraphrase", 0.80), ("buried-lesson", 0.90)];

#[derive(serde::Deserialize)]
struct Set {
    classes: Vec<Class>,
}

#[derive(serde::Deserialize)]
struct Class {
    class: String,
    memories: Vec<Memory>,
    queries: Vec<Question>,
}

#[derive(serde::Deserialize)]
struct Memory {
    id: String,
    days_ago: f64,
    text: String,
}

#[derive(serde::Deserialize)]
struct Question {
    text: String,
    relevant: Vec<String>,
}

/// recall@10 and nDCG@10 of one ranking.
fn metrics(ranked: &[String], relevant: &[String]) -> (f64, f64) {
    let hit = |r: &String| relevant.contains(r);
    let found = ranked.iter().take(10).filter(|r| hit(r)).count();
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, r)| hit(r))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(10)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
    (found as f64 / relevant.len() as f64, dcg / ideal)
}

#[test]
fn the_default_is_never_below_its_best_component_on_any_kind_of_question() {
    let set: Set = serde_json::from_str(
        &std::fs::read_to_string("tests/fixtures/query-classes.json").unwrap(),
    )
    .unwrap();
    let mut embedder =
        BertEmbedder::from_dir(&common::model_dir(), BertConfig::e5("multilingual-e5-small-latin"))
            .unwrap();
    let now = parse_iso8601("2024-11-20T12:00:00Z").unwrap();
    let d = Scoring::default();
    let mut formulas = vec![
        ("balanced (default)".to_string(), d.clone()),
        ("BM25 alone".to_string(), Scoring { formula: Formula::Lexical, ..d.clone() }),
        ("E5 alone".to_string(), Scoring { formula: Formula::Dense, ..d.clone() }),
    ];
    // MNEMO_QUALITY_GRID=1: the default's parameters varied one at a time, to choose them.
    if std::env::var_os("MNEMO_QUALITY_GRID").is_some() {
        let grid: &[&[(&str, f64)]] = &[
            &[("context_weight", 0.0)],
            &[("recency_floor", 1.0)],
            &[("full_coverage", 0.0)],
            &[("coverage_power", 2.0)],
            &[("coverage_power", 2.0), ("full_coverage", 0.8)],
            &[("coverage_power", 3.0), ("full_coverage", 0.8)],
            &[("full_coverage", 0.8)],
            &[("coverage_power", 2.0), ("lexical_weight", 0.4)],
            &[("recency_floor", 0.85)],
            &[("context_weight", 0.2)],
            &[("lexical_weight", 0.0), ("recency_floor", 1.0), ("context_weight", 0.0)],
        ];
        // Or variants of one's own: MNEMO_QUALITY_GRID="recency_floor=1,shadow_cosine=0.9;…".
        let asked = std::env::var("MNEMO_QUALITY_GRID").unwrap_or_default();
        let own: Vec<Vec<(&str, f64)>> = asked
            .split(';')
            .filter(|v| v.contains('='))
            .map(|v| {
                v.split(',')
                    .filter_map(|p| p.split_once('='))
                    .map(|(n, x)| (n.trim(), x.trim().parse().expect("NAME=NUMBER")))
                    .collect()
            })
            .collect();
        let grid: Vec<&[(&str, f64)]> =
            if own.is_empty() { grid.to_vec() } else { own.iter().map(Vec::as_slice).collect() };
        for pairs in grid {
            let mut s = d.clone();
            for (name, value) in pairs.iter() {
                s.set(name, *value).unwrap();
            }
            let name: Vec<String> = pairs.iter().map(|(n, v)| format!("{n}={v}")).collect();
            formulas.push((name.join(","), s));
        }
    }
    println!(
        "{:<20}{}",
        "recall@10 / nDCG@10",
        formulas
            .iter()
            .map(|f| format!("{:>22}", &f.0[f.0.len().saturating_sub(21)..]))
            .collect::<String>()
    );
    let mut losses = Vec::new();
    for class in &set.classes {
        let texts: Vec<&str> = class.memories.iter().map(|m| m.text.as_str()).collect();
        let vectors = embedder.embed(&texts, Role::Passage).unwrap();
        let config = Config {
            vector_model: embedder.model_id().into(),
            dim: embedder.dim(),
            ..Config::default()
        };
        let mut engine = Engine::new(MemoryStore::new(), config);
        let mut ids = std::collections::HashMap::new();
        for (m, v) in class.memories.iter().zip(&vectors) {
            let at = now - (m.days_ago * DAY as f64) as i64;
            match engine.remember("q", Episode::new(m.text.clone(), at), Some(&v.vector)).unwrap() {
                Remembered::Stored { id, .. } => ids.insert(id, m.id.clone()),
                Remembered::Discarded { reason } => panic!("{} discarded: {reason}", m.id),
            };
        }
        let mut means = Vec::new();
        for (_, scoring) in &formulas {
            let (mut recall, mut ndcg) = (0.0, 0.0);
            for q in &class.queries {
                let mut query = Query::new(q.text.clone(), 10);
                query.vector =
                    Some(embedder.embed(&[q.text.as_str()], Role::Query).unwrap().remove(0).vector);
                query.touch = false;
                query.scoring = Some(scoring.clone());
                let answer = engine.recall("q", &query, now).unwrap();
                let ranked: Vec<String> =
                    answer.hits.iter().map(|h| ids[&h.episode.id].clone()).collect();
                let (r, n) = metrics(&ranked, &q.relevant);
                // MNEMO_QUALITY_SHOW=CLASS: each query's top three with their scores.
                if std::env::var("MNEMO_QUALITY_SHOW").is_ok_and(|c| c == class.class) {
                    println!(
                        "  [{:?}] {:?} wants {:?} (nDCG {n:.2})",
                        scoring.formula, q.text, q.relevant
                    );
                    for h in answer.hits.iter().take(3) {
                        let x = &h.explanation;
                        println!(
                            "    {:<6} final {:.3} rel {:.3} fused {:.3} sim {:.3} lex {:.3} w {:.3} ctx {:.3} rec {:.3}",
                            ids[&h.episode.id], x.final_score, x.relevance, x.fused, x.sim, x.lex,
                            x.lexical_weight, x.context, x.recency
                        );
                    }
                }
                recall += r;
                ndcg += n;
            }
            let n = class.queries.len() as f64;
            means.push((recall / n, ndcg / n));
        }
        println!(
            "{:<20}{}",
            class.class,
            means
                .iter()
                .map(|(r, n)| format!("{:>22}", format!("{r:.3} / {n:.3}")))
                .collect::<String>()
        );
        let best_recall = means[1..3].iter().map(|m| m.0).fold(0.0, f64::max);
        let best_ndcg = means[1..3].iter().map(|m| m.1).fold(0.0, f64::max);
        if let Some((_, floor)) = KNOWN_GAPS.iter().find(|g| g.0 == class.class) {
            if means[0].1 < *floor {
                losses
                    .push(format!("{}: nDCG@10 {:.3} fell under {floor}", class.class, means[0].1));
            }
        } else if means[0].0 + SLACK < best_recall || means[0].1 + SLACK < best_ndcg {
            losses.push(format!(
                "{}: default {:.3}/{:.3} < best component {best_recall:.3}/{best_ndcg:.3}",
                class.class, means[0].0, means[0].1
            ));
        }
    }
    assert!(losses.is_empty(), "{losses:#?}");
}
