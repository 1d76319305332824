//! Scoring: how similarity, recency and importance combine, with an explanation per hit.
//!
//! The default, [`Formula::Balanced`], exists because the plain decay formula
//! `cosine × exp(−λ·days)` lets a 100-day-old exact match (factor 0.018) lose to anything fresh,
//! and because a fusion that trusts one retriever's scale loses what the other found.
//! Balanced
//!
//! 0. weighs BM25 by how much of the query it can see: `w = 0.5 × min(1, coverage / 0.8)`,
//!    where coverage is the best candidate's share of the query's IDF mass (the summed IDF of
//!    its terms) — a paraphrase or a question in another language, whose words mostly occur
//!    nowhere, leans on the cosine;
//! 1. calibrates the cosine against the model's floor of unrelated text
//!    (`sim = (cos − floor)/(1 − floor)`, E5 floor 0.76: about the median cosine of a query
//!    and an unrelated memory, 0.78 on LoCoMo's conversations), and BM25 against the best BM25 score
//!    among the candidates (`lex = bm25 / max bm25`);
//! 2. fuses them by weight (`fused = (1 − w)·sim + w·lex`, `w` from step 0, 0 when no candidate
//!    matched lexically) — scores, not ranks: reciprocal-rank fusion lost to the better single retriever
//!    on the quality sets;
//! 3. adds the conversation around it (`context = 0.4 × fused of the better neighbour`, the
//!    episode just before or after it within 30 minutes): in a dialogue the answer often sits
//!    in the turn after the one that names the topic;
//! 4. normalises by the best candidate (`relevance = (fused + context) / max`), so decay acts
//!    on relevance relative to this query;
//! 5. floors the decay: `recency = floor + (1 − floor)·exp(−λ·days)` with floor 0.75, so recency
//!    reorders candidates of similar relevance (Node 22 over Node 18) but cannot bury an
//!    exactly relevant old memory (the March invoice) under a weaker fresh one; a query that
//!    names its time ("in March", "last week") is answered inside that window with no decay,
//!    and a question about a past event ("When did…", "… ago": [`asks_about_the_past`]) with
//!    floor 0.9;
//! 6. shadows what a newer memory restates: among the best candidates, one that a newer
//!    (from a later conversation), at least as important and similarly relevant candidate
//!    repeats (episode cosine ≥ 0.94) is likely stale and its score is multiplied by 0.3.
//!
//! `final = relevance × recency × importance`, where importance is the tier's weight times the
//! episode's write-time importance. Query terms that are function words in English, Italian,
//! Spanish, French, German or Portuguese ("the", "did", "di", "les") are not scored by BM25
//! (`index::stopwords`), and BM25 indexes each word's Snowball stem beside the word
//! (`index::stem`: "researching" meets "research"). On LoCoMo (`tools/bench-retrieval`), each step was measured against
//! BM25 alone and the cosine alone; figures in BENCHMARKS.md.

/// How a hit's final score is computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Formula {
    /// Calibrated score fusion × floored decay × importance (the default; see module docs).
    Balanced,
    /// Plain decay: `fused × exp(−λ·days) × importance`, no floor.
    PlainDecay,
    /// Weighted sum: `0.55·sim + 0.25·recency + 0.20·log-frequency`.
    Weighted,
    /// BM25 alone (no cosine, recency or importance): the lexical retriever by itself, the
    /// baseline fusion must never fall below.
    Lexical,
    /// Cosine alone (no BM25, recency or importance): the dense retriever by itself.
    Dense,
}

impl Formula {
    /// Reads a formula's name: `balanced`, `plain-decay` (also read as `seed`, its former name),
    /// `weighted`, `lexical` or `dense`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "balanced" => Formula::Balanced,
            "plain-decay" | "seed" => Formula::PlainDecay,
            "weighted" => Formula::Weighted,
            "lexical" | "bm25" => Formula::Lexical,
            "dense" | "cosine" => Formula::Dense,
            _ => return None,
        })
    }
}

/// The shape of the decay curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decay {
    /// `exp(−λ·days)`.
    Exponential,
    /// `max(0, 1 − λ·days/2)` (reaches 0 where the exponential is ~0.14).
    Linear,
    /// `exp(−(λ·days)²/2)`.
    Gaussian,
    /// `1/(1 + λ·days)`: heavy-tailed, so months-old memories still differ by age.
    Hyperbolic,
}

/// Scoring parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoring {
    /// The formula.
    pub formula: Formula,
    /// The decay curve.
    pub decay: Decay,
    /// λ per compaction tier (0 raw, 1 weekly, 2 monthly), per day.
    pub lambda: [f32; 3],
    /// Importance per tier.
    pub tier_importance: [f32; 3],
    /// Where the calibrated cosine starts: about the median cosine of a query and an unrelated
    /// text for the model in use (multilingual E5 small: 0.76; the median on LoCoMo is 0.78).
    /// Below it a candidate gets no similarity at all.
    pub cosine_floor: f32,
    /// Weight of BM25 in the fused similarity when any candidate matched lexically.
    pub lexical_weight: f32,
    /// Lowest recency factor under [`Formula::Balanced`].
    pub recency_floor: f32,
    /// Exponent on relevance under [`Formula::Balanced`]: higher keeps clearly better matches
    /// ahead of fresher, weaker ones.
    pub sharpness: f32,
    /// Two episodes at least this similar (cosine) are about the same thing; the older one is
    /// shadowed by the newer (`≥ 1` turns shadowing off).
    pub shadow_cosine: f32,
    /// Factor applied to a shadowed episode's score.
    pub shadow_penalty: f32,
    /// Weight of the conversation around a candidate under [`Formula::Balanced`]: its score
    /// gains this times the best positive fused score of its neighbours (0 turns it off).
    pub context_weight: f32,
    /// Two episodes created at most this far apart (ms) with nothing between them are
    /// neighbours: turns of one conversation, steps of one task.
    pub context_gap_ms: i64,
    /// The share of the query's IDF mass a candidate must match for BM25 to get its full
    /// `lexical_weight` (less scales it down; 0 always gives it the full weight).
    pub full_coverage: f32,
    /// Exponent on `coverage / full_coverage`: above 1, a partial match counts for less.
    pub coverage_power: f32,
    /// Drop function words ("the", "did", "della": `index::stopwords`) from the query before
    /// BM25 scores it.
    pub skip_function_words: bool,
    /// How much write-time importance may move a score under [`Formula::Balanced`]: the factor
    /// is `1 − weight + weight × importance`, so with 0.4 a routine success (importance 0.5)
    /// keeps 0.8 of its score — a prior that orders comparably relevant memories (a lesson
    /// before routine work), not one that lets an unrelated lesson beat an exact match. 1 is
    /// the plain product.
    pub importance_weight: f32,
    /// The recency floor for a question in the past tense ("When did Caroline go to the
    /// support group?", [`asks_about_the_past`]) under [`Formula::Balanced`]: it asks what
    /// happened then, not what holds now, so how old a memory is says less (1 turns decay off
    /// for such questions; `recency_floor` or lower leaves them as any other).
    pub past_recency_floor: f32,
    /// Match query words by their stems too ("~research", `index::stem`); off, BM25 scores as
    /// it did before stems were indexed (document lengths count words only).
    pub stems: bool,
}

/// Words that make a question ask about an event in the past: "did" ("When did…", "What
/// did…"), "ago", "went", "happened", and "did" in Italian and Spanish (fece, hizo). Not "was"
/// or "were": "Was invoice INV-17 paid?" asks about a state, where the newer memory is the
/// answer. Languages that mark the past only in the verb's ending are not covered.
const PAST_MARKERS: &[&str] = &["ago", "did", "fece", "happened", "hizo", "went"];

/// True when `query` asks about an event in the past: one of its words is in `PAST_MARKERS`
/// ("did", "ago", "went", "happened", …).
pub fn asks_about_the_past(query: &str) -> bool {
    crate::index::terms::terms(query).iter().any(|w| PAST_MARKERS.contains(&w.as_str()))
}

/// Default [`Scoring::full_coverage`].
pub const FULL_COVERAGE: f32 = 0.8;

/// λ of procedural rules (they do not decay).
pub const LAMBDA_PROCEDURAL: f32 = 0.0;
/// λ of observations.
pub const LAMBDA_OBSERVATION: f32 = 0.02;

impl Default for Scoring {
    fn default() -> Self {
        Self {
            formula: Formula::Balanced,
            decay: Decay::Exponential,
            lambda: [0.04, 0.015, 0.005],
            tier_importance: [1.0, 1.2, 1.1],
            cosine_floor: 0.76,
            lexical_weight: 0.5,
            recency_floor: 0.75,
            sharpness: 1.0,
            shadow_cosine: 0.94,
            shadow_penalty: 0.3,
            context_weight: 0.4,
            context_gap_ms: 30 * 60 * 1000,
            skip_function_words: true,
            full_coverage: FULL_COVERAGE,
            coverage_power: 1.0,
            importance_weight: 1.0,
            past_recency_floor: 0.9,
            stems: true,
        }
    }
}

impl Scoring {
    /// The scoring of mnemo before query function words were dropped and conversation context
    /// added (releases up to the privacy work): BM25 over every query word at weight 0.3, no
    /// stems, no context, shadowing at cosine 0.92 with penalty 0.5. Stores written then answer with it
    /// exactly as they did, for texts of up to 128 words (a longer one is now scored by BM25's
    /// best window of it, whatever the scoring: `engine::namespace::LoadedNamespace::bm25_insert`).
    pub fn legacy() -> Self {
        Self {
            cosine_floor: 0.70,
            shadow_cosine: 0.92,
            shadow_penalty: 0.5,
            lexical_weight: 0.3,
            context_weight: 0.0,
            skip_function_words: false,
            full_coverage: 0.0,
            past_recency_floor: 0.0,
            stems: false,
            context_gap_ms: 0,
            ..Self::default()
        }
    }
}

/// Why a hit scored what it did. Every factor that went into `final_score` is here.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// BM25 score (0 when no query term matched).
    pub bm25: f32,
    /// Cosine of the query and episode vectors.
    pub cosine: f32,
    /// Calibrated cosine.
    pub sim: f32,
    /// BM25 relative to the best candidate's.
    pub lex: f32,
    /// `w`, BM25's weight for this query ([`Scoring::lexical_weight_for`]).
    pub lexical_weight: f32,
    /// The fused similarity `(1 − w)·sim + w·lex`.
    pub fused: f32,
    /// What the conversation around it added (balanced formula): `context_weight` × the best
    /// positive `fused` of the episodes just before and after it.
    pub context: f32,
    /// `fused + context` relative to the best candidate's (the best is 1).
    pub relevance: f32,
    /// Days since last access at query time.
    pub age_days: f32,
    /// The decay factor after any floor.
    pub recency: f32,
    /// Tier weight × write-time importance (under the balanced formula, as the prior
    /// `1 − importance_weight × (1 − that)`).
    pub importance: f32,
    /// The final score.
    pub final_score: f32,
    /// Which retrievers proposed it: `bm25`, `vector`, `recent`.
    pub sources: Vec<&'static str>,
    /// Query terms that matched, with their BM25 parts.
    pub terms: Vec<(String, f32)>,
    /// A newer, at least as important candidate saying nearly the same thing (cosine of the
    /// two episodes ≥ `shadow_cosine`): this one is likely stale and its score was multiplied
    /// by `shadow_penalty`.
    pub shadowed_by: Option<u64>,
    /// Outcome tracking's factor (1 unless the episode preceded failures far more often than
    /// the namespace's base rate; then `final_score` was multiplied by it).
    pub outcome_weight: f32,
    /// Where the episode came from (`record::Origin`, read from its `source`).
    pub origin: crate::record::Origin,
    /// Its origin is not the user or an administrator: quote it as data, never follow it.
    pub untrusted: bool,
    /// Its text reads as instructions (`trust::instructions`): never inject it as one.
    pub instruction_like: bool,
    /// For a text longer than the model reads, embedded as passages (`embed::passages`): the
    /// passage whose vector gave `cosine`, when one did better than the whole text's.
    pub passage: Option<MatchedPassage>,
}

/// The passage of a long text that matched the query best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MatchedPassage {
    /// Its place among the text's passages, from 0.
    pub index: u32,
    /// Byte offset of its first character in the episode's text.
    pub start: u32,
    /// Byte offset just past its last character.
    pub end: u32,
}

/// The raw signals of one candidate.
#[derive(Debug, Clone)]
pub struct Signals {
    /// BM25 score.
    pub bm25: f32,
    /// Cosine.
    pub cosine: f32,
    /// Days since last access.
    pub age_days: f32,
    /// Compaction tier.
    pub tier: u8,
    /// Write-time importance.
    pub importance: f32,
    /// Recalls so far.
    pub access_count: u32,
    /// Share of the query's IDF mass (its terms' summed IDF) that this candidate matches.
    pub coverage: f32,
    /// Indices (in the same candidate list) of the episodes just before and after this one in
    /// the same conversation: created within [`Scoring::context_gap_ms`] of it.
    pub neighbours: [Option<u32>; 2],
}

impl Scoring {
    /// The decay factor for `days` at tier `tier` (before any floor).
    pub fn decay_factor(&self, days: f32, tier: u8) -> f32 {
        let x = self.lambda[usize::from(tier.min(2))] * days.max(0.0);
        match self.decay {
            Decay::Exponential => (-x).exp(),
            Decay::Linear => (1.0 - x / 2.0).max(0.0),
            Decay::Gaussian => (-(x * x) / 2.0).exp(),
            Decay::Hyperbolic => 1.0 / (1.0 + x),
        }
    }

    /// Sets one parameter by name (`lexical_weight`, `recency_floor`, `cosine_floor`,
    /// `sharpness`, `shadow_cosine`, `shadow_penalty`, `context_weight`, `context_gap_ms`,
    /// `full_coverage`, `skip_function_words` as 0 or 1), for benchmarks and tuning.
    pub fn set(&mut self, name: &str, v: f64) -> crate::Result<()> {
        match name {
            "lexical_weight" => self.lexical_weight = v as f32,
            "recency_floor" => self.recency_floor = v as f32,
            "cosine_floor" => self.cosine_floor = v as f32,
            "sharpness" => self.sharpness = v as f32,
            "shadow_cosine" => self.shadow_cosine = v as f32,
            "shadow_penalty" => self.shadow_penalty = v as f32,
            "context_weight" => self.context_weight = v as f32,
            "context_gap_ms" => self.context_gap_ms = v as i64,
            "full_coverage" => self.full_coverage = v as f32,
            "coverage_power" => self.coverage_power = v as f32,
            "skip_function_words" => self.skip_function_words = v != 0.0,
            "importance_weight" => self.importance_weight = v as f32,
            "past_recency_floor" => self.past_recency_floor = v as f32,
            "stems" => self.stems = v != 0.0,
            other => {
                return Err(crate::Error::InvalidInput(format!(
                    "no scoring parameter {other:?}: use lexical_weight, recency_floor, \
                     cosine_floor, sharpness, shadow_cosine, shadow_penalty, context_weight, \
                     context_gap_ms, full_coverage, coverage_power, importance_weight, \
                     past_recency_floor, stems or skip_function_words"
                )))
            }
        }
        Ok(())
    }

    /// BM25's weight in the fused similarity: `lexical_weight × min(1, coverage / full_coverage)`
    /// where `coverage` is the best candidate's share of the query's IDF mass — a query whose
    /// words mostly occur nowhere (another language, a paraphrase) leans on the cosine; 0 when
    /// nothing matched lexically.
    pub fn lexical_weight_for(&self, max_bm25: f32, coverage: f32) -> f32 {
        if max_bm25 <= 0.0 {
            0.0
        } else if self.full_coverage > 0.0 {
            self.lexical_weight * (coverage / self.full_coverage).min(1.0).powf(self.coverage_power)
        } else {
            self.lexical_weight
        }
    }

    /// The balanced formula's recency for `days` at tier `tier`: `floor + (1 − floor) · decay`,
    /// so decay reorders relevant memories without burying old ones.
    pub fn floored_recency(&self, days: f32, tier: u8) -> f32 {
        self.recency_floor + (1.0 - self.recency_floor) * self.decay_factor(days, tier)
    }

    /// Scores every candidate; `signals` are all candidates of one query (normalisation is
    /// relative to them).
    pub fn explain(&self, signals: &[Signals]) -> Vec<Explanation> {
        let max_bm25 = signals.iter().map(|s| s.bm25).fold(0f32, f32::max);
        let coverage = signals.iter().map(|s| s.coverage).fold(0f32, f32::max);
        let w = self.lexical_weight_for(max_bm25, coverage);
        let floor = self.cosine_floor;
        let calibrated: Vec<(f32, f32)> = signals
            .iter()
            .map(|s| {
                let sim = ((s.cosine - floor) / (1.0 - floor)).clamp(0.0, 1.0);
                let lex = if max_bm25 > 0.0 { s.bm25 / max_bm25 } else { 0.0 };
                (sim, lex)
            })
            .collect();

        let fused: Vec<f32> =
            calibrated.iter().map(|(sim, lex)| (1.0 - w) * sim + w * lex).collect();
        // Conversation context: a neighbour's fused score, positive part, adds to a turn's.
        let context: Vec<f32> = signals
            .iter()
            .map(|s| {
                let best = s.neighbours.iter().flatten().map(|&n| fused[n as usize]);
                self.context_weight * best.fold(0f32, f32::max)
            })
            .collect();
        let total: Vec<f32> = fused.iter().zip(&context).map(|(f, c)| f + c).collect();
        let hi = total.iter().copied().fold(0f32, f32::max);
        signals
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (sim, lex) = calibrated[i];
                let relevance = if hi > 0.0 { total[i] / hi } else { 0.0 };
                let decay = self.decay_factor(s.age_days, s.tier);
                let mut importance =
                    self.tier_importance[usize::from(s.tier.min(2))] * s.importance;
                if self.formula == Formula::Balanced && self.importance_weight != 1.0 {
                    importance = 1.0 - self.importance_weight * (1.0 - importance);
                }
                let (recency, final_score) = match self.formula {
                    Formula::Balanced => {
                        let r = self.floored_recency(s.age_days, s.tier);
                        (r, relevance.powf(self.sharpness) * r * importance)
                    }
                    Formula::PlainDecay => (decay, fused[i] * decay * importance),
                    Formula::Weighted => {
                        let freq = (1.0 + s.access_count as f32).ln() / (1.0 + 100f32).ln();
                        (decay, 0.55 * fused[i] + 0.25 * decay + 0.20 * freq.min(1.0))
                    }
                    Formula::Lexical => (1.0, s.bm25),
                    Formula::Dense => (1.0, s.cosine),
                };
                Explanation {
                    lexical_weight: w,
                    bm25: s.bm25,
                    cosine: s.cosine,
                    sim,
                    lex,
                    fused: fused[i],
                    context: context[i],
                    relevance,
                    age_days: s.age_days,
                    recency,
                    importance,
                    final_score,
                    sources: Vec::new(),
                    terms: Vec::new(),
                    shadowed_by: None,
                    outcome_weight: 1.0,
                    origin: crate::record::Origin::Unknown,
                    untrusted: true,
                    instruction_like: false,
                    passage: None,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(bm25: f32, cosine: f32, age_days: f32) -> Signals {
        Signals {
            bm25,
            cosine,
            age_days,
            tier: 0,
            importance: 1.0,
            access_count: 0,
            coverage: if bm25 > 0.0 { 1.0 } else { 0.0 },
            neighbours: [None, None],
        }
    }

    #[test]
    fn balanced_lets_recency_reorder_close_candidates_but_not_bury_exact_old_ones() {
        let s = Scoring::default();
        // Two equally relevant memories, 200 days apart: the fresh one wins.
        let e = s.explain(&[sig(2.0, 0.86, 200.0), sig(2.0, 0.86, 1.0)]);
        assert!(e[1].final_score > e[0].final_score);
        // An exact old match (BM25 on an invoice number) against a weaker fresh one.
        let e = s.explain(&[sig(9.0, 0.88, 250.0), sig(0.0, 0.80, 0.0)]);
        assert!(e[0].final_score > e[1].final_score, "{e:?}");
        // Plain decay buries it: the warning the default exists for.
        let seed = Scoring { formula: Formula::PlainDecay, ..Scoring::default() };
        let e = seed.explain(&[sig(9.0, 0.88, 250.0), sig(0.0, 0.80, 0.0)]);
        assert!(e[0].final_score < e[1].final_score);
    }

    #[test]
    fn decay_curves_and_tiers() {
        let mut s = Scoring::default();
        assert!((s.decay_factor(10.0, 0) - (-0.4f32).exp()).abs() < 1e-6);
        assert!(s.decay_factor(100.0, 2) > s.decay_factor(100.0, 1));
        s.decay = Decay::Linear;
        assert_eq!(s.decay_factor(100.0, 0), 0.0);
        s.decay = Decay::Gaussian;
        assert!(s.decay_factor(10.0, 0) > (-0.4f32).exp());
        let e = Scoring::default().explain(&[sig(0.0, 0.9, 0.0)]);
        assert_eq!(e[0].final_score, e[0].relevance * e[0].recency * e[0].importance);
    }
}
