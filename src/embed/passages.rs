//! Long texts as overlapping passages.
//!
//! A model reads at most [`Embedder::max_tokens`] tokens (512 for E5) and cuts the rest: a
//! 2,000-word message embedded whole is searched by its first ~380 words only. A text the model
//! would truncate is therefore cut into windows of words that each fit, overlapping by an
//! eighth so a sentence across a cut is whole in one of them, and every window is embedded.
//! The episode is then found by its best passage (the cosine of a query is the maximum over
//! them, and the explanation names the passage), while its one "whole" vector — the normalised
//! mean of the passages', as a summary's is the mean of its sources' — serves comparisons
//! between episodes (shadowing, consolidation, observations).
//!
//! Windows are `max_tokens / 4` words (E5: 128 words, ~170 tokens of English, ~230 of the
//! wordiest languages: a window that size holds one topic, so a sentence in it still moves its
//! vector; 256-word windows found a one-sentence note at the end of a 900-word log only behind a
//! short memory sharing two of its words). A window still cut by the model is halved again, at
//! most [`MAX_SPLITS`] times. A window ends at a sentence end ("." "!" "?" or a line break) in its
//! last quarter when there is one. At most [`MAX_PASSAGES`] passages are embedded (~7,000 words):
//! words past them are found by BM25 only. Words are cut at whitespace, so a text without spaces
//! (Chinese or Japanese, base64, minified JSON) is one word and stays whole, truncated by the
//! model as before. Everything here is a pure function of the text and the
//! embedder's answers, so the same text always gives the same passages.

use super::{Embedder, Role};
use crate::error::Result;

/// Most passages one text is embedded as (64 windows of 128 words, overlapping: ~7,000 words).
pub const MAX_PASSAGES: usize = 64;
/// How many times a window the model still truncates is halved.
pub const MAX_SPLITS: usize = 3;

/// One embedded window of a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// Byte offset of the window's first character in the text.
    pub start: u32,
    /// Byte offset just past the window's last character.
    pub end: u32,
    /// Its unit vector.
    pub vector: Vec<f32>,
}

/// A text's vectors: the one that stands for it, and its passages when it was too long for the
/// model to read at once (empty otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct TextVectors {
    /// The text's vector (the normalised mean of the passages' when there are passages).
    pub whole: Vec<f32>,
    /// The windows it was embedded as, in text order.
    pub passages: Vec<Passage>,
}

impl TextVectors {
    /// One vector, no passages.
    pub fn single(v: Vec<f32>) -> Self {
        Self { whole: v, passages: Vec::new() }
    }
}

/// The byte ranges of the word windows of `text`: `words` words each (the last may be shorter),
/// each starting `overlap` words before the previous one ended, ending at a sentence end in its
/// last quarter when there is one. A text of at most `words` words is one window.
pub fn windows(text: &str, words: usize, overlap: usize) -> Vec<(usize, usize)> {
    let words = words.max(1);
    let overlap = overlap.min(words / 2);
    let spans = word_spans(text);
    let mut out = Vec::new();
    let mut first = 0;
    while first < spans.len() {
        let mut last = (first + words).min(spans.len()) - 1;
        if last + 1 < spans.len() {
            // Prefer a sentence end in the window's last quarter.
            let from = first + words - words / 4;
            if let Some(s) = (from..=last).rev().find(|&i| ends_sentence(text, spans[i])) {
                last = s;
            }
        }
        out.push((spans[first].0, spans[last].1));
        if last + 1 >= spans.len() {
            break;
        }
        // Step back `overlap` words, but always move forward.
        first = (last + 1).saturating_sub(overlap).max(first + 1);
    }
    out
}

/// Byte ranges of the whitespace-separated words of `text`.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

/// True when the word at `span` ends a sentence: it ends in . ! ? (or their CJK forms), or a
/// line break follows it.
fn ends_sentence(text: &str, span: (usize, usize)) -> bool {
    let word = &text[span.0..span.1];
    word.ends_with(['.', '!', '?', '。', '！', '？'])
        || text[span.1..].chars().take_while(|c| c.is_whitespace()).any(|c| c == '\n')
}

/// Embeds each text as a passage ([`Role::Passage`]): whole when the model reads it whole,
/// otherwise as its windows ([`windows`]), each window the model still cuts halved again.
pub fn embed_texts(e: &mut dyn Embedder, texts: &[&str]) -> Result<Vec<TextVectors>> {
    let mut out: Vec<Option<TextVectors>> = vec![None; texts.len()];
    // Texts the embedder can tell are too long are split before any model run; the others are
    // embedded whole first, and split when the model reports it cut them.
    let mut whole = Vec::new();
    let mut long = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        match e.truncates(t, Role::Passage) {
            Some(true) => long.push(i),
            _ => whole.push(i),
        }
    }
    if !whole.is_empty() {
        let batch: Vec<&str> = whole.iter().map(|&i| texts[i]).collect();
        for (&i, emb) in whole.iter().zip(embedded(e, &batch)?) {
            if emb.truncated {
                long.push(i);
            } else {
                out[i] = Some(TextVectors::single(emb.vector));
            }
        }
    }
    let words = (e.max_tokens() / 4).max(8);
    for i in long {
        let text = texts[i];
        let mut spans = windows(text, words, words / 8);
        spans.truncate(MAX_PASSAGES);
        let passages = embed_windows(e, text, spans, words, 0)?;
        out[i] = Some(match passages.as_slice() {
            [] => return Err(inference("a long text gave no passage".into())),
            // One window (a text of few but very long words): nothing to add to it.
            [one] => TextVectors::single(one.vector.clone()),
            _ => TextVectors { whole: mean(&passages), passages },
        });
    }
    // Every text went through one branch above; an empty slot is a bug, reported not panicked.
    out.into_iter()
        .map(|v| v.ok_or_else(|| inference("a text was left without a vector".into())))
        .collect()
}

/// `e.embed` of `texts` as passages, with one embedding per text or an error.
fn embedded(e: &mut dyn Embedder, texts: &[&str]) -> Result<Vec<super::Embedding>> {
    let out = e.embed(texts, Role::Passage)?;
    if out.len() != texts.len() {
        return Err(inference(format!("{} embeddings for {} texts", out.len(), texts.len())));
    }
    Ok(out)
}

fn inference(detail: String) -> crate::Error {
    crate::Error::Inference { stage: "passages", detail }
}

/// Embeds the windows `spans` of `text`; a window the model cut is split into windows of half
/// as many words, down to [`MAX_SPLITS`] levels, keeping at most [`MAX_PASSAGES`] in all.
fn embed_windows(
    e: &mut dyn Embedder,
    text: &str,
    spans: Vec<(usize, usize)>,
    words: usize,
    depth: usize,
) -> Result<Vec<Passage>> {
    let parts: Vec<&str> = spans.iter().map(|&(a, b)| &text[a..b]).collect();
    let embedded = embedded(e, &parts)?;
    let mut out = Vec::with_capacity(spans.len());
    for (&(a, b), emb) in spans.iter().zip(embedded) {
        if out.len() >= MAX_PASSAGES {
            break;
        }
        let half = words / 2;
        if emb.truncated && depth < MAX_SPLITS && half >= 4 {
            let inner: Vec<(usize, usize)> = windows(&text[a..b], half, half / 8)
                .into_iter()
                .map(|(x, y)| (a + x, a + y))
                .collect();
            if inner.len() > 1 {
                let room = MAX_PASSAGES - out.len();
                let mut more = embed_windows(e, text, inner, half, depth + 1)?;
                more.truncate(room);
                out.extend(more);
                continue;
            }
        }
        let offset = |x: usize| {
            u32::try_from(x).map_err(|_| {
                crate::Error::InvalidInput(format!(
                    "a text of {} bytes is past the 4 GiB a passage offset holds: store it in parts",
                    text.len()
                ))
            })
        };
        out.push(Passage { start: offset(a)?, end: offset(b)?, vector: emb.vector });
    }
    Ok(out)
}

/// The normalised mean of the passages' vectors.
fn mean(passages: &[Passage]) -> Vec<f32> {
    let dim = passages[0].vector.len();
    let mut m = vec![0f32; dim];
    for p in passages {
        for (x, y) in m.iter_mut().zip(&p.vector) {
            *x += y;
        }
    }
    let norm = m.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        m.iter_mut().for_each(|x| *x /= norm);
    } else {
        // Passages that cancel out (never seen with a real model): the first stands for all.
        m.clone_from(&passages[0].vector);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{Embedding, Polarity};

    /// A model that reads `limit` words: its vector counts words of a few kinds.
    struct WordModel {
        limit: usize,
        runs: usize,
    }

    impl Embedder for WordModel {
        fn model_id(&self) -> &str {
            "words@1"
        }
        fn dim(&self) -> usize {
            3
        }
        fn max_tokens(&self) -> usize {
            2 * self.limit
        }
        fn embed(&mut self, texts: &[&str], _: Role) -> Result<Vec<Embedding>> {
            self.runs += texts.len();
            Ok(texts
                .iter()
                .map(|t| {
                    let words: Vec<&str> = t.split_whitespace().collect();
                    let seen = &words[..words.len().min(self.limit)];
                    let mut v = [0.1f32, 0.0, 0.0];
                    for w in seen {
                        match *w {
                            "red" => v[1] += 1.0,
                            "blue" => v[2] += 1.0,
                            _ => v[0] += 0.01,
                        }
                    }
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    Embedding {
                        vector: v.iter().map(|x| x / n).collect(),
                        polarity: Polarity::Affirmative,
                        tokens: seen.len(),
                        truncated: words.len() > self.limit,
                    }
                })
                .collect())
        }
    }

    #[test]
    fn windows_cover_the_text_overlap_and_prefer_sentence_ends() {
        let text = (0..100).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        let w = windows(&text, 40, 5);
        assert_eq!(w.first().unwrap().0, 0);
        assert_eq!(w.last().unwrap().1, text.len());
        for pair in w.windows(2) {
            assert!(pair[1].0 < pair[0].1, "windows overlap: {pair:?}");
            assert!(pair[1].0 > pair[0].0, "windows move forward: {pair:?}");
        }
        // A sentence end in the last quarter of a window is where it stops.
        let text = format!("{} end. {}", vec!["a"; 33].join(" "), vec!["b"; 60].join(" "));
        let w = windows(&text, 40, 5);
        assert!(text[..w[0].1].ends_with("end."), "{:?}", &text[..w[0].1]);
        assert_eq!(windows("one two", 40, 5), vec![(0, 7)]);
        assert_eq!(windows("  ", 40, 5), vec![]);
        // Overlap wider than half a window is held to half; it still moves forward.
        assert!(windows(&vec!["x"; 30].join(" "), 4, 100).len() < 30);
    }

    #[test]
    fn a_long_text_is_found_by_its_tail() {
        // The colour is 300 words in: the model reading 100 words never sees it whole.
        let text = format!("{} red red red", vec!["filler"; 300].join(" "));
        let mut m = WordModel { limit: 100, runs: 0 };
        let short = embed_texts(&mut m, &["red blue"]).unwrap().remove(0);
        assert!(short.passages.is_empty());
        let v = embed_texts(&mut m, &[&text]).unwrap().remove(0);
        assert!(v.passages.len() > 1, "{} passages", v.passages.len());
        let last = v.passages.last().unwrap();
        assert!(text[last.start as usize..last.end as usize].ends_with("red red red"));
        assert!(last.vector[1] > 0.5, "the tail's passage is red: {:?}", last.vector);
        let cut = m.embed(&[&text], Role::Passage).unwrap().remove(0);
        assert!(cut.vector[1] == 0.0, "truncated whole, the colour is lost");
        let n = v.whole.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((n - 1.0).abs() < 1e-5);
    }

    #[test]
    fn windows_the_model_still_cuts_are_halved() {
        // max_tokens 20 gives windows of 8 words (the least), which a model reading 4 cuts.
        struct Narrow(WordModel);
        impl Embedder for Narrow {
            fn model_id(&self) -> &str {
                "narrow@1"
            }
            fn dim(&self) -> usize {
                3
            }
            fn max_tokens(&self) -> usize {
                20
            }
            fn embed(&mut self, t: &[&str], r: Role) -> Result<Vec<Embedding>> {
                self.0.embed(t, r)
            }
        }
        let text = vec!["x"; 40].join(" ");
        let mut m = Narrow(WordModel { limit: 4, runs: 0 });
        let v = embed_texts(&mut m, &[&text]).unwrap().remove(0);
        assert!(v.passages.len() > 4);
        assert!(v
            .passages
            .iter()
            .all(|p| text[p.start as usize..p.end as usize].split_whitespace().count() <= 5));
        let huge = vec!["y"; 20_000].join(" ");
        let v = embed_texts(&mut m, &[&huge]).unwrap().remove(0);
        assert_eq!(v.passages.len(), MAX_PASSAGES);
    }
}
