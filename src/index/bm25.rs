//! BM25 over documents identified by `u64`, with explained scores.
//!
//! `score(d, q) = Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))`,
//! `idf(t) = ln(1 + (N − n_t + 0.5)/(n_t + 0.5))` (the Lucene form, never negative).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::id_map::IdMap;
use super::postings::Postings;
use super::stem::index_terms as terms;
use super::FastMap as HashMap;

/// A term as the index keys it: up to 12 bytes in wasm32 (24 natively) held inline.
pub(super) type Term = compact_str::CompactString;

/// True for a stem term ("~research", `index::stem`) rather than a word.
pub fn is_stem(term: &str) -> bool {
    term.starts_with(super::stem::STEM_MARK)
}

/// A document's length for BM25: its words and whole tokens, not the stem terms added beside
/// them (a stem is another way to match a word, not more text).
fn words_len(terms: &[String]) -> usize {
    terms.iter().filter(|t| !is_stem(t)).count()
}

/// A query's distinct terms, sorted, without function words (`stopwords`) unless the query
/// has nothing else.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut t = all_query_terms(query);
    if t.iter().any(|w| !super::stopwords::is_stopword(w)) {
        t.retain(|w| !super::stopwords::is_stopword(w));
    }
    t
}

/// A query's distinct terms, sorted, function words included.
pub fn all_query_terms(query: &str) -> Vec<String> {
    let mut t = terms(query);
    t.sort();
    t.dedup();
    t
}

/// One query term's part of a score.
#[derive(Debug, Clone, PartialEq)]
pub struct TermScore {
    /// The folded term.
    pub term: String,
    /// Its frequency in the document.
    pub tf: u32,
    /// Its inverse document frequency.
    pub idf: f32,
    /// What it added to the score.
    pub score: f32,
}

/// A hit with its explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document.
    pub id: u64,
    /// The BM25 score (the sum of `terms[..].score`).
    pub score: f32,
    /// Per matched term.
    pub terms: Vec<TermScore>,
}

/// A term's documents as scoring reads them: the index's own [`Postings`] (a lookup decodes
/// a block of at most `postings::SKIP`), or a list decoded once for a query that scores many
/// documents ([`Bm25::decoded_lists`]; a lookup is then a binary search).
pub trait TermDocs {
    /// Documents holding the term.
    fn df(&self) -> usize;
    /// The term's frequency in document `id`.
    fn tf(&self, id: u64) -> Option<u32>;
}

impl TermDocs for Postings {
    fn df(&self) -> usize {
        self.len()
    }
    fn tf(&self, id: u64) -> Option<u32> {
        Postings::tf(self, id)
    }
}

impl TermDocs for Vec<(u64, u32)> {
    fn df(&self) -> usize {
        self.len()
    }
    fn tf(&self, id: u64) -> Option<u32> {
        self.binary_search_by_key(&id, |p| p.0).ok().map(|i| self[i].1)
    }
}

/// An in-memory BM25 index.
#[derive(Debug, Clone)]
pub struct Bm25 {
    pub(super) k1: f32,
    pub(super) b: f32,
    pub(super) doc_len: IdMap<u32>,
    /// Per term, (document, term frequency) sorted by document, in the byte form of
    /// [`Postings`].
    pub(super) postings: HashMap<Term, Postings>,
    pub(super) total_len: u64,
}

/// Inverse document frequency of a term found in `df` of `n` documents:
/// ln(1 + (n − df + 0.5) / (df + 0.5)).
fn idf_of(df: usize, n: f32) -> f32 {
    let df = df as f32;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

impl Default for Bm25 {
    fn default() -> Self {
        Self::new(1.2, 0.75)
    }
}

impl Bm25 {
    /// An empty index with the given `k1` and `b`.
    pub fn new(k1: f32, b: f32) -> Self {
        Self { k1, b, doc_len: IdMap::default(), postings: HashMap::default(), total_len: 0 }
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// True when document `id` is indexed.
    pub fn has(&self, id: u64) -> bool {
        self.doc_len.contains_key(id)
    }

    /// True when no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// Approximate bytes held (postings, term table, document lengths).
    pub fn memory(&self) -> usize {
        let postings: usize = self
            .postings
            .iter()
            .map(|(t, d)| {
                let text = if t.is_heap_allocated() { t.capacity() } else { 0 };
                d.memory() + text + std::mem::size_of::<(Term, Postings)>() + 1
            })
            .sum();
        postings + self.doc_len.memory()
    }

    /// Indexes `text` as document `id`, replacing a previous version of it.
    pub fn insert(&mut self, id: u64, text: &str) {
        self.remove(id);
        let terms = terms(text);
        let len = words_len(&terms);
        self.total_len = self.total_len.saturating_add(len as u64);
        self.doc_len.insert(id, len as u32);
        let mut counts: HashMap<String, u32> = HashMap::default();
        for t in terms {
            *counts.entry(t).or_default() += 1;
        }
        for (t, tf) in counts {
            self.postings.entry(Term::from(t)).or_default().push(id, tf);
        }
    }

    /// Removes document `id`, indexed from `text`: only that text's terms are visited. When
    /// the text is not the one indexed (its terms do not add up to the document's length), every
    /// posting list is scanned as [`Bm25::remove`] does.
    pub fn remove_text(&mut self, id: u64, text: &str) {
        let Some(&len) = self.doc_len.get(id) else { return };
        let mut counts: HashMap<String, u32> = HashMap::default();
        for t in terms(text) {
            *counts.entry(t).or_default() += 1;
        }
        let holds = counts
            .iter()
            .all(|(t, tf)| self.postings.get(t.as_str()).and_then(|docs| docs.tf(id)) == Some(*tf));
        let words: u32 = counts.iter().filter(|(t, _)| !is_stem(t)).map(|(_, tf)| *tf).sum();
        if !holds || words != len {
            return self.remove(id);
        }
        self.doc_len.remove(id);
        self.total_len = self.total_len.saturating_sub(u64::from(len));
        for t in counts.keys() {
            if let Some(docs) = self.postings.get_mut(t.as_str()) {
                docs.remove(id);
                if docs.is_empty() {
                    self.postings.remove(t.as_str());
                }
            }
        }
    }

    /// Removes document `id` (nothing happens when it is absent), scanning every posting list.
    pub fn remove(&mut self, id: u64) {
        let Some(len) = self.doc_len.remove(id) else { return };
        self.total_len = self.total_len.saturating_sub(u64::from(len));
        self.postings.retain(|_, docs| {
            docs.remove(id);
            !docs.is_empty()
        });
    }

    /// (idf, score) of a term with frequency `tf` in a document of length `dl`, found in `df`
    /// of `n` documents.
    fn term_score(&self, tf: u32, df: usize, dl: f32, n: f32, avgdl: f32) -> (f32, f32) {
        let idf = idf_of(df, n);
        (idf, self.weigh(idf, tf, dl, avgdl))
    }

    /// A term's score in a document, from its `idf` (the same arithmetic as [`Bm25::term_score`],
    /// for callers that compute the idf once per term).
    fn weigh(&self, idf: f32, tf: u32, dl: f32, avgdl: f32) -> f32 {
        let tf = tf as f32;
        idf * tf * (self.k1 + 1.0) / (tf + self.k1 * (1.0 - self.b + self.b * dl / avgdl))
    }

    /// Each query term's posting list (`None`: no document holds it), looked up once, so
    /// scoring many documents for one query hashes no term again ([`Bm25::score_lists`]).
    pub fn lists<'a>(&'a self, query_terms: &[String]) -> Vec<Option<&'a Postings>> {
        query_terms.iter().map(|t| self.postings.get(t.as_str())).collect()
    }

    /// Each query term's posting list decoded (`None`: no document holds it), for a query that
    /// scores more documents than its lists are long: a lookup in a decoded list is a binary
    /// search, where one in the index's [`Postings`] decodes a block.
    pub fn decoded_lists(&self, query_terms: &[String]) -> Vec<Option<Vec<(u64, u32)>>> {
        let decode = |p: &Postings| {
            let mut list = Vec::with_capacity(p.len());
            list.extend(p.iter());
            list
        };
        query_terms.iter().map(|t| self.postings.get(t.as_str()).map(decode)).collect()
    }

    /// [`Bm25::score_terms`] over the query's [`Bm25::lists`]; `held[i]` is set to whether the
    /// document holds query term `i` (`held` has one entry per list).
    pub fn score_lists<L: TermDocs>(
        &self,
        lists: &[Option<&L>],
        id: u64,
        held: &mut [bool],
    ) -> f32 {
        held.fill(false);
        let Some(&dl) = self.doc_len.get(id) else { return 0.0 };
        let n = self.doc_len.len() as f32;
        let avgdl = self.total_len as f32 / n;
        lists
            .iter()
            .zip(held.iter_mut())
            .filter_map(|(docs, held)| {
                let docs = (*docs)?;
                let tf = docs.tf(id)?;
                *held = true;
                Some(self.term_score(tf, docs.df(), dl as f32, n, avgdl).1)
            })
            .sum()
    }

    /// Scores `text`, a document that is not in the index (a cold record), against
    /// `query_terms` with the index's statistics (document count, frequencies, mean length);
    /// returns the score and, per query term, whether the text holds it.
    pub fn score_unindexed(&self, query_terms: &[String], text: &str) -> (f32, Vec<bool>) {
        let doc = terms(text);
        let dl = words_len(&doc) as f32;
        let n = self.doc_len.len().max(1) as f32;
        let avgdl = if self.doc_len.is_empty() {
            dl.max(1.0)
        } else {
            self.total_len as f32 / self.doc_len.len() as f32
        };
        let mut score = 0.0;
        let mut found = Vec::with_capacity(query_terms.len());
        for t in query_terms {
            let tf = doc.iter().filter(|d| *d == t).count() as u32;
            found.push(tf > 0);
            if tf > 0 {
                let df = self.postings.get(t.as_str()).map_or(0, Postings::len);
                score += self.term_score(tf, df, dl, n, avgdl.max(1.0)).1;
            }
        }
        (score, found)
    }

    /// A term's inverse document frequency (a term in no document gets the highest).
    pub fn idf(&self, term: &str) -> f32 {
        idf_of(self.postings.get(term).map_or(0, Postings::len), self.doc_len.len() as f32)
    }

    /// True when document `id` holds `term`.
    pub fn contains(&self, term: &str, id: u64) -> bool {
        self.postings.get(term).is_some_and(|d| d.tf(id).is_some())
    }

    /// The score of one document for `query`, explained (`None` when it is not indexed).
    pub fn explain(&self, query: &str, id: u64) -> Option<Hit> {
        self.explain_terms(&query_terms(query), id)
    }

    /// The BM25 score alone (0 when unindexed), query already split by [`query_terms`].
    pub fn score_terms(&self, query_terms: &[String], id: u64) -> f32 {
        self.score_lists(&self.lists(query_terms), id, &mut vec![false; query_terms.len()])
    }

    /// [`Bm25::explain`] with the query already split by [`query_terms`].
    pub fn explain_terms(&self, query_terms: &[String], id: u64) -> Option<Hit> {
        let dl = *self.doc_len.get(id)? as f32;
        let n = self.doc_len.len() as f32;
        let avgdl = self.total_len as f32 / n;
        let mut hit = Hit { id, score: 0.0, terms: Vec::new() };
        for term in query_terms {
            let Some(docs) = self.postings.get(term.as_str()) else { continue };
            let Some(tf) = docs.tf(id) else { continue };
            let (idf, score) = self.term_score(tf, docs.len(), dl, n, avgdl);
            hit.score += score;
            hit.terms.push(TermScore { term: term.clone(), tf, idf, score });
        }
        Some(hit)
    }

    /// The best `k` documents for `query` among those `keep` accepts, best first (ties by id).
    ///
    /// Scores are accumulated first and `keep` is asked only in score order, until `k`
    /// documents pass, so a filter costs per candidate rather than per posting.
    pub fn search(&self, query: &str, k: usize, keep: impl Fn(u64) -> bool) -> Vec<Hit> {
        self.search_terms(&query_terms(query), k, keep)
    }

    /// [`Bm25::search`] with the query already split (by [`query_terms`] or
    /// [`all_query_terms`]).
    pub fn search_terms(
        &self,
        query_terms: &[String],
        k: usize,
        keep: impl Fn(u64) -> bool,
    ) -> Vec<Hit> {
        let ids = self.search_ids(query_terms, k, keep);
        ids.into_iter().filter_map(|id| self.explain_terms(query_terms, id)).collect()
    }

    /// The documents [`Bm25::search_terms`] returns, without their explanations.
    pub fn search_ids(
        &self,
        query_terms: &[String],
        k: usize,
        keep: impl Fn(u64) -> bool,
    ) -> Vec<u64> {
        let n = self.doc_len.len() as f32;
        if n == 0.0 || k == 0 {
            return Vec::new();
        }
        let avgdl = self.total_len as f32 / n;
        let lists = self.lists(query_terms);
        // Sized once: at most every posting, at most every document.
        let most = lists.iter().flatten().map(|d| d.len()).sum::<usize>().min(self.doc_len.len());
        // The lists merged in id order, each document's score summed over its terms in query
        // order: no table of every matching document beside the ranking. The lists holding
        // the next document are found by a scan of their heads for a short query, through a
        // heap of them for a long one (O(log terms) a posting however long the query).
        let mut heads: Vec<_> = lists
            .into_iter()
            .flatten()
            .map(|docs| {
                let mut it = docs.iter();
                (idf_of(docs.len(), n), it.next(), it)
            })
            .collect();
        let mut heap: Option<BinaryHeap<Reverse<(u64, usize)>>> = (heads.len() > 8).then(|| {
            heads.iter().enumerate().filter_map(|(i, h)| Some(Reverse((h.1?.0, i)))).collect()
        });
        let mut ranked: Vec<(u64, f32)> = Vec::with_capacity(most);
        let mut here: Vec<usize> = Vec::with_capacity(heads.len());
        loop {
            here.clear();
            let id = match heap.as_mut() {
                Some(heap) => {
                    let Some(&Reverse((id, _))) = heap.peek() else { break };
                    while let Some(&Reverse((_, i))) = heap.peek().filter(|r| r.0 .0 == id) {
                        heap.pop();
                        here.push(i);
                    }
                    here.sort_unstable();
                    id
                }
                None => {
                    let Some(id) = heads.iter().filter_map(|h| h.1.map(|p| p.0)).min() else {
                        break;
                    };
                    let at =
                        heads.iter().enumerate().filter(|(_, h)| h.1.is_some_and(|p| p.0 == id));
                    here.extend(at.map(|(i, _)| i));
                    id
                }
            };
            let dl = self.doc_len.get(id).copied().unwrap_or(0) as f32;
            let mut score = 0.0f32;
            for &i in &here {
                let (idf, head, it) = &mut heads[i];
                if let Some((_, tf)) = *head {
                    score += self.weigh(*idf, tf, dl, avgdl);
                }
                *head = it.next();
                if let (Some(heap), Some((at, _))) = (heap.as_mut(), *head) {
                    heap.push(Reverse((at, i)));
                }
            }
            ranked.push((id, score));
        }
        let order = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        // `k` comes from callers (a host may ask for any number): never reserve more than exists.
        let mut out = Vec::with_capacity(k.min(ranked.len()));
        // Partial selection: sort only a prefix at a time, widening while the filter rejects.
        let mut start = 0;
        let mut width = k.saturating_mul(2).max(64);
        while out.len() < k && start < ranked.len() {
            let end = (start + width).min(ranked.len());
            if end < ranked.len() {
                ranked[start..].select_nth_unstable_by(end - start - 1, order);
            }
            ranked[start..end].sort_by(order);
            for &(id, _) in &ranked[start..end] {
                if out.len() == k {
                    break;
                }
                if keep(id) {
                    out.push(id);
                }
            }
            start = end;
            width = width.saturating_mul(4);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_match_other_forms_and_exact_forms_score_higher() {
        let mut b = Bm25::default();
        b.insert(1, "the deploy of the web app failed");
        b.insert(2, "we deployed the web app fine");
        b.insert(3, "lunch with the team at noon");
        let q = query_terms("did the deploy work?");
        assert!(q.contains(&"~deploy".to_string()), "{q:?}");
        let (exact, inflected) = (b.score_terms(&q, 1), b.score_terms(&q, 2));
        assert!(inflected > 0.0, "the stem finds \"deployed\"");
        assert!(exact > inflected, "the exact form scores on two terms: {exact} vs {inflected}");
        // A document's length counts its words, not the stems beside them.
        assert_eq!(b.doc_len.get(1), Some(&7));
        b.remove_text(2, "we deployed the web app fine");
        assert_eq!(b.score_terms(&q, 2), 0.0);
        assert!(!b.postings.contains_key("deployed"), "removed by its own text");
    }

    #[test]
    fn removing_by_text_equals_removing_by_scan() {
        let docs =
            [(1, "npm ci failed on the lockfile"), (2, "the lockfile is stale"), (3, "deploy ok")];
        let (mut a, mut b) = (Bm25::default(), Bm25::default());
        for (id, t) in docs {
            a.insert(id, t);
            b.insert(id, t);
        }
        a.remove_text(2, "the lockfile is stale");
        b.remove(2);
        // A text that is not the one indexed falls back to the scan.
        a.remove_text(1, "something else entirely");
        b.remove(1);
        assert_eq!((a.doc_len.len(), a.total_len), (b.doc_len.len(), b.total_len));
        let pairs = |i: &Bm25| {
            let mut p: Vec<(String, Vec<(u64, u32)>)> =
                i.postings.iter().map(|(t, d)| (t.to_string(), d.iter().collect())).collect();
            p.sort();
            p
        };
        let (mut pa, mut pb) = (pairs(&a), pairs(&b));
        pa.sort();
        pb.sort();
        assert_eq!(pa, pb);
    }

    fn index() -> Bm25 {
        let mut i = Bm25::default();
        i.insert(1, "Invoice INV-2024-0042 for €1,250 sent to Marco Bertelli in March");
        i.insert(2, "The deploy failed because the cache held a stale lockfile");
        i.insert(3, "The deploy succeeded after the cache was cleared");
        i.insert(4, "Café meeting with the design team about the deploy pipeline");
        i
    }

    #[test]
    fn exact_identifiers_names_and_amounts_hit() {
        let i = index();
        assert_eq!(i.search("INV-2024-0042", 3, |_| true)[0].id, 1);
        assert_eq!(i.search("€1,250", 3, |_| true)[0].id, 1);
        assert_eq!(i.search("bertelli", 3, |_| true)[0].id, 1);
        assert_eq!(i.search("cafe", 3, |_| true)[0].id, 4, "diacritics fold");
    }

    #[test]
    fn rarer_terms_weigh_more_and_scores_explain_themselves() {
        let i = index();
        let hits = i.search("deploy lockfile", 4, |_| true);
        assert_eq!(hits[0].id, 2, "the only doc with the rare term wins");
        let h = &hits[0];
        let sum: f32 = h.terms.iter().map(|t| t.score).sum();
        assert!((sum - h.score).abs() < 1e-5);
        let lock = h.terms.iter().find(|t| t.term == "lockfile").unwrap();
        let deploy = h.terms.iter().find(|t| t.term == "deploy").unwrap();
        assert!(lock.idf > deploy.idf);
    }

    #[test]
    fn filters_removal_and_replacement() {
        let mut i = index();
        assert!(i.search("deploy", 4, |id| id != 2).iter().all(|h| h.id != 2));
        i.remove(2);
        assert!(i.search("lockfile", 4, |_| true).is_empty());
        i.insert(3, "nothing about builds");
        assert!(i.search("cleared", 4, |_| true).is_empty(), "re-insert replaces the old text");
        assert_eq!(i.len(), 3);
        assert!(Bm25::default().search("x", 3, |_| true).is_empty());
    }

    /// Property: top-k equals a brute-force ranking computed straight from the texts.
    #[test]
    fn top_k_matches_brute_force() {
        let words = ["alpha", "beta", "gamma", "delta", "node", "deploy", "cache", "x1.2"];
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            (state >> 33) as usize
        };
        let mut i = Bm25::default();
        let mut docs: Vec<Vec<String>> = Vec::new();
        for id in 0..300u64 {
            let text: Vec<&str> =
                (0..1 + next() % 12).map(|_| words[next() % words.len()]).collect();
            i.insert(id, &text.join(" "));
            docs.push(terms(&text.join(" ")));
        }
        let n = docs.len() as f32;
        let avgdl = docs.iter().map(Vec::len).sum::<usize>() as f32 / n;
        // The last query has more than 8 terms: its lists are merged through a heap.
        let long = "alpha beta gamma delta node deploy cache x1.2";
        for q in ["alpha beta", "deploy", "x1.2 cache node", "gamma gamma delta", long] {
            let mut qt = terms(q);
            qt.sort();
            qt.dedup();
            let mut brute: Vec<(u64, f32)> = docs
                .iter()
                .enumerate()
                .map(|(id, d)| {
                    let s: f32 = qt
                        .iter()
                        .map(|t| {
                            let df = docs.iter().filter(|d| d.contains(t)).count() as f32;
                            let tf = d.iter().filter(|w| *w == t).count() as f32;
                            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                            idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * d.len() as f32 / avgdl))
                        })
                        .sum();
                    (id as u64, s)
                })
                .filter(|(_, s)| *s > 0.0)
                .collect();
            brute.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let top = i.search(q, 10, |_| true);
            assert_eq!(top.len(), 10.min(brute.len()), "query {q:?}");
            for (h, (id, s)) in top.iter().zip(&brute) {
                assert!((h.score - s).abs() < 1e-4, "query {q:?}: {} vs {s}", h.score);
                // equal scores may order differently only by float noise; ids must match otherwise
                if (h.score - s).abs() < 1e-6 {
                    assert_eq!(h.id, *id, "query {q:?}");
                }
            }
        }
    }
}
