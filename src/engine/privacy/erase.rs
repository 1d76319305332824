//! Erasure (the right to be forgotten), provable: a user's whole namespace, one subject inside
//! it, or one memory by id — deleted in one atomic batch across every layer, the backend's
//! bytes vacuumed, then checked by a scan, with a receipt.
//!
//! **What a subject covers.** A subject is a name or an identifier (a contact, an entity, an
//! email address). A record mentions it when the subject's words occur, one after the other,
//! among the words of its key or its stored bytes, both read the way the poisoning detectors
//! read text (`trust::normalize::search_words`): invisible characters (zero-width spaces and
//! joiners, soft hyphens, bidirectional controls) removed, compatibility forms decomposed
//! (NFKC/NFKD: full-width letters, ligatures), diacritics dropped (René = Rene), case folded,
//! Cyrillic and Greek look-alikes read as the Latin letter they imitate, and the text cut into
//! words at every character that is not a letter or digit — so any run of spaces (NBSP
//! included), line breaks, quotes of any kind (« » „ “ ”), dashes and other punctuation
//! separates words alike, and a possessive or elided form ("Quartz’s", "l’Émile",
//! "d’Artagnan") holds the name as a word of its own. Every mentioning record is deleted: episodes (with
//! their vectors and snapshot markers), facts and fact versions, triples, rules, signals,
//! observations (with their vectors), retrievals (with their outcomes), the learning state.
//! What derives from a deleted record is rebuilt without it: a signal tied to an erased
//! episode goes too, observations drop erased signals from their support (the nightly recount
//! updates them), retrievals drop erased episode ids, outcome weights drop erased episodes, and
//! the snapshot (it holds episode texts and index terms) is deleted, so the next open rebuilds
//! it from the records that remain.
//!
//! **Compaction summaries** derived from an erased episode are dissolved: the summary record
//! (and its vector) is deleted, every other source returns to what it was before compaction
//! (raw, or an active weekly summary under a dissolved monthly one; `group` cleared), and the
//! next nightly run compacts them again without the erased record. Dissolving cascades: a
//! monthly overview of a dissolved weekly summary is dissolved too. The receipt counts them in
//! the layer `summaries`.
//!
//! **Lessons and rules** derived from an erased episode go too: a lesson observation of
//! consolidation built on it is deleted with the rule promoted from it, and the other episodes
//! that rule stood for return to recall (the next nightly run clusters them again without the
//! erased one). A deleted rule that had absorbed narrower rules (`engine::learning::rule_merge`) gives them
//! back: they are active again.
//!
//! **One memory by id** deletes that episode and what derives from it the same way.
//!
//! **Physically.** After the batch the engine calls [`KvStore::vacuum`] (the batch also writes
//! the store-wide key `g/vacuum-pending`, removed after the vacuum; if a crash comes in between,
//! the next load of any namespace vacuums first): the file store
//! rewrites its log, SQLite (the wasmtime host) runs with `secure_delete` and truncates its WAL,
//! the JS log adapters compact. IndexedDB, Durable Objects and Workers KV delete the keys;
//! when their media reuse the freed space is the platform's.
//!
//! **The receipt** ([`Receipt`]) says what went, per layer, and what the verification scan
//! found: every remaining key and value of the namespace searched for the subject and for the
//! texts of the erased episodes (0 occurrences expected), and every key an erased episode had
//! checked absent. Vector values and snapshot chunks are binary and derived: they are checked
//! by key (none left for an erased episode; no snapshot after an episode was erased), not by
//! content, where random bytes could spell a short name. The receipt names the subject only by
//! a SHA-256 hash, so a host can store it anywhere, even in the same namespace, and it still
//! passes its own scan.

use sha2::{Digest, Sha256};

use super::erase_options::{check_share, check_subject, EraseOptions};
use crate::engine::import::{EPISODE_LINE, SIGNAL_LINE};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::record::outcome::{decode_weights, encode_weights, Retrieval};
use crate::record::{Episode, Observation, Signal};
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};
use crate::trust::normalize::{has_invisible, search_words, search_words_spaced};

/// What to erase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Erasure {
    /// The whole namespace (one user).
    Namespace,
    /// Every record that mentions this name or identifier (module docs).
    Subject(String),
    /// One episode and what derives from it.
    Episode(u64),
}

/// What one layer lost.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layer {
    /// The layer (`episodes`, `facts`, `signals`…).
    pub layer: &'static str,
    /// Records deleted.
    pub deleted: usize,
    /// Records rewritten without the erased data.
    pub rewritten: usize,
}

/// What the verification scan after the erasure found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// Records of the namespace read back.
    pub records_scanned: usize,
    /// Their bytes (keys and values).
    pub bytes_scanned: u64,
    /// What was searched for: the subject (1, its words in order) and the erased episodes' texts.
    pub needles: usize,
    /// Occurrences of any of them found (0 when the erasure is complete).
    pub occurrences: usize,
    /// Keys of erased records still present (0 when the erasure is complete).
    pub leftover_keys: usize,
}

/// Proof of an erasure, for the caller to keep (module docs).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// `mnemo-erasure/1`.
    pub format: &'static str,
    /// The namespace.
    pub namespace: String,
    /// `namespace`, `subject` or `episode`.
    pub scope: &'static str,
    /// Hex SHA-256 of `mnemo-erasure/1`, NUL, the namespace, NUL, the subject (or the episode
    /// id in decimal): the subject can be confirmed by whoever knows it, and read by no one.
    pub subject_sha256: Option<String>,
    /// When (ms, as passed in).
    pub erased_at: i64,
    /// Per layer, what went.
    pub layers: Vec<Layer>,
    /// Ids of the episodes erased.
    pub episode_ids: Vec<u64>,
    /// The backend's vacuum ran (deleted bytes rewritten away where the backend can).
    pub vacuumed: bool,
    /// Why the vacuum failed (a read-only directory, a full disk): the erasure is committed
    /// and no command returns the erased records, but their bytes may stay in the backend's
    /// files until the vacuum, retried on every later open, succeeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vacuum_error: Option<String>,
    /// A dry run: what would go, nothing changed (`privacy::erase_options`).
    pub dry_run: bool,
    /// The scan after the erasure.
    pub verification: Verification,
}

impl Receipt {
    /// True when the scan found nothing left and the vacuum ran (a dry run verifies nothing).
    pub fn verified(&self) -> bool {
        self.vacuumed && self.verification.occurrences == 0 && self.verification.leftover_keys == 0
    }
}

/// A subject's words, and how often they occur in stored bytes (module docs).
#[derive(Default)]
pub(crate) struct SubjectWords(Vec<Vec<String>>);

impl SubjectWords {
    /// The subject and the linked identifiers erased with it.
    pub(crate) fn new<'a>(subjects: impl IntoIterator<Item = &'a str>) -> Self {
        SubjectWords(subjects.into_iter().map(search_words).filter(|w| !w.is_empty()).collect())
    }

    /// Occurrences of any subject among the words of `bytes`.
    pub(crate) fn occurrences(&self, bytes: &[u8]) -> usize {
        self.0.iter().map(|s| Self::count(s, bytes)).sum()
    }

    /// Occurrences of one subject's words, in order, among the words of `bytes` (read as
    /// UTF-8, lossily: the bytes of a record's other fields only separate words).
    fn count(subject: &[String], bytes: &[u8]) -> usize {
        let Some(first) = subject.first() else { return 0 };
        // Plain ASCII folds to its lower case alone: no occurrence without the first word's
        // bytes in it, whatever the case (the cheap test most records fail).
        if bytes.is_ascii()
            && (first.len() > bytes.len()
                || !bytes.windows(first.len()).any(|w| w.eq_ignore_ascii_case(first.as_bytes())))
        {
            return 0;
        }
        let text = String::from_utf8_lossy(bytes);
        let count =
            |words: Vec<String>| words.windows(subject.len()).filter(|w| *w == subject).count();
        let n = count(search_words(&text));
        if has_invisible(&text) {
            n.max(count(search_words_spaced(&text)))
        } else {
            n
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b >= 0x80
}

/// The erased episodes' texts, searched for all at once: every text is indexed by its first
/// eight bytes (ASCII-lowercased), so a scan looks up each position once instead of comparing
/// it with every text (an erasure of 1,000 episodes would otherwise compare 1,000 texts at
/// every byte of the namespace).
struct Texts {
    texts: Vec<Vec<u8>>,
    by_prefix: crate::index::FastMap<[u8; 8], Vec<usize>>,
}

impl Texts {
    fn new(mut texts: Vec<Vec<u8>>) -> Self {
        texts.sort();
        texts.dedup();
        let mut by_prefix: crate::index::FastMap<[u8; 8], Vec<usize>> = Default::default();
        for (i, t) in texts.iter().enumerate() {
            let key: [u8; 8] = t[..8].try_into().expect("texts are at least MIN_TEXT_NEEDLE long");
            by_prefix.entry(key).or_default().push(i);
        }
        Self { texts, by_prefix }
    }

    fn len(&self) -> usize {
        self.texts.len()
    }

    /// Occurrences of any text in `hay` (ASCII case ignored, whole words).
    fn occurrences(&self, hay: &[u8]) -> usize {
        if self.texts.is_empty() || hay.len() < 8 {
            return 0;
        }
        let mut count = 0;
        let mut window = [0u8; 8];
        for i in 0..=hay.len() - 8 {
            for (w, b) in window.iter_mut().zip(&hay[i..i + 8]) {
                *w = b.to_ascii_lowercase();
            }
            let Some(candidates) = self.by_prefix.get(&window) else { continue };
            for &c in candidates {
                let t = &self.texts[c];
                let end = i + t.len();
                let whole = end <= hay.len()
                    && hay[i..end].eq_ignore_ascii_case(t)
                    && (i == 0 || !word_byte(hay[i - 1]) || !word_byte(t[0]))
                    && (end == hay.len() || !word_byte(hay[end]) || !word_byte(t[t.len() - 1]));
                count += usize::from(whole);
            }
        }
        count
    }
}

fn mentions(subject: &SubjectWords, key: &[u8], value: &[u8]) -> bool {
    !subject.is_empty() && (subject.occurrences(key) > 0 || subject.occurrences(value) > 0)
}

fn hash(ns: &str, subject: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"mnemo-erasure/1\0");
    h.update(ns.as_bytes());
    h.update([0]);
    h.update(subject.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Tallies per layer, in table order.
#[derive(Default)]
pub(super) struct Tally(pub Vec<Layer>);

impl Tally {
    pub fn add(&mut self, table: Table, deleted: usize, rewritten: usize) {
        self.add_layer(table.name(), deleted, rewritten)
    }

    pub fn add_layer(&mut self, layer: &'static str, deleted: usize, rewritten: usize) {
        match self.0.iter_mut().find(|l| l.layer == layer) {
            Some(l) => {
                l.deleted += deleted;
                l.rewritten += rewritten;
            }
            None => self.0.push(Layer { layer, deleted, rewritten }),
        }
    }
}

/// The deletions and rewrites of one erasure, before they are written.
#[derive(Default)]
pub(super) struct Plan {
    pub batch: Batch,
    pub tally: Tally,
    pub episodes: Vec<u64>,
    signals: Vec<u64>,
    /// Compaction summaries dissolved (erased or derived from an erased record), with their
    /// evidence.
    pub dissolved: Vec<(u64, Vec<u64>)>,
    /// Texts of erased episodes, searched for by the verification scan.
    pub texts: Vec<Vec<u8>>,
    /// The episodes stay (rewritten by a correction): not checked absent by key.
    pub kept: bool,
    snapshot: bool,
    /// The nightly job's cursor names the subject: the whole cursor goes (a run restarts).
    learning: bool,
    /// Rules deleted: they mention the subject, or were promoted from a lesson observation
    /// built on an erased episode.
    pub rules_gone: Vec<u64>,
    /// Lesson observations deleted with their rule: (rule, the episodes it was built from).
    pub unrepresent: Vec<(u64, Vec<u64>)>,
    /// What the scans search for: the subject and the identifiers erased with it.
    words: SubjectWords,
    /// Episodes the namespace holds (erased or not).
    total_episodes: usize,
}

/// Erased texts shorter than this are not searched for afterwards: a short text ("ok",
/// "deploy failed") may rightly occur in another memory.
pub(super) const MIN_TEXT_NEEDLE: usize = 24;

impl Erasure {
    fn to_json(&self) -> serde_json::Value {
        match self {
            Erasure::Namespace => serde_json::json!({"scope": "namespace"}),
            Erasure::Subject(s) => serde_json::json!({"scope": "subject", "subject": s}),
            Erasure::Episode(id) => serde_json::json!({"scope": "episode", "id": id}),
        }
    }

    /// Reads `{scope: "namespace" | "subject" | "episode", subject?, id?}` (and the
    /// options `also`, `force`, `dryRun`: [`EraseOptions::from_json`]); other fields are
    /// refused.
    pub fn from_json(v: &serde_json::Value) -> Result<Self> {
        const FIELDS: &[&str] = &["scope", "subject", "id", "also", "force", "dryRun"];
        if let Some(o) = v.as_object() {
            if let Some(k) = o.keys().find(|k| !FIELDS.contains(&k.as_str())) {
                return Err(Error::InvalidInput(format!(
                    "an erasure has no field \"{k}\" (it takes {})",
                    FIELDS.join(", ")
                )));
            }
        }
        match v.get("scope").and_then(|s| s.as_str()) {
            Some("namespace") => Ok(Erasure::Namespace),
            Some("subject") => match v.get("subject").and_then(|s| s.as_str()) {
                Some(s) => Ok(Erasure::Subject(s.to_string())),
                None => Err(Error::InvalidInput("a subject erasure needs a \"subject\"".into())),
            },
            Some("episode") => match v.get("id").and_then(|s| s.as_u64()) {
                Some(id) => Ok(Erasure::Episode(id)),
                None => Err(Error::InvalidInput("an episode erasure needs an \"id\"".into())),
            },
            _ => Err(Error::InvalidInput(
                "an erasure's \"scope\" is one of namespace, subject, episode".into(),
            )),
        }
    }
}

/// Marker written in an erasure's delete batch and removed once the store was vacuumed: a
/// crash in between leaves it, and the next load of a namespace vacuums first. It is one key
/// for the whole store, outside every namespace, so that no key naming the erased namespace
/// is left behind (a namespace may be derived from an email address).
pub const VACUUM_PENDING: &[u8] = b"g/vacuum-pending";

/// Vacuums `store` when an erasure was cut short before its vacuum, or its vacuum failed.
pub(crate) fn finish_vacuum(store: &mut impl KvStore) -> Result<()> {
    let pending = VACUUM_PENDING.to_vec();
    if store.get(&pending)?.is_some() {
        store.vacuum()?;
        let mut batch = Batch::new();
        batch.delete(pending);
        store.write(&batch)?;
    }
    Ok(())
}

/// The options' own rules (`privacy::erase_options`): `also` only with a subject; every
/// subject and identifier long and rare enough to name someone.
fn check_options(what: &Erasure, options: &EraseOptions) -> Result<()> {
    match what {
        Erasure::Subject(s) => {
            check_subject(s)?;
            options.also.iter().try_for_each(|a| check_subject(a))
        }
        _ if !options.also.is_empty() => Err(Error::InvalidInput(
            "\"also\" goes with a subject erasure: it names what is erased with the subject".into(),
        )),
        _ => Ok(()),
    }
}

/// The receipt of a planned erasure that was not carried out.
fn dry_run(
    nsc: &Namespace,
    scope: &'static str,
    subject: Option<String>,
    plan: Plan,
    now: i64,
) -> Receipt {
    Receipt {
        format: "mnemo-erasure/1",
        namespace: nsc.as_str().to_string(),
        scope,
        subject_sha256: subject.map(|s| hash(nsc.as_str(), &s)),
        erased_at: now,
        layers: plan.tally.0,
        episode_ids: plan.episodes,
        vacuumed: false,
        vacuum_error: None,
        dry_run: true,
        verification: Verification {
            records_scanned: 0,
            bytes_scanned: 0,
            needles: 0,
            occurrences: 0,
            leftover_keys: 0,
        },
    }
}

impl<S: KvStore> Engine<S> {
    /// Queues an erasure for the nightly job (its last step); returns the request's id.
    /// The request itself names the subject until it is carried out (then it is erased too).
    pub fn request_erasure(&mut self, ns: &str, what: &Erasure, now: i64) -> Result<u64> {
        self.request_erasure_with(ns, what, &EraseOptions::default(), now)
    }

    /// [`Engine::request_erasure`] with options (`also`, `force`; a dry run is not queued).
    pub fn request_erasure_with(
        &mut self,
        ns: &str,
        what: &Erasure,
        options: &EraseOptions,
        now: i64,
    ) -> Result<u64> {
        let nsc = Namespace::new(ns)?;
        check_options(what, options)?;
        if options.dry_run {
            return Err(Error::InvalidInput(
                "a dry run is not queued: erase with dryRun to preview, then queue".into(),
            ));
        }
        let mut last = 0u64;
        scan_all(&self.store, &nsc.table_prefix(Table::ErasureQueue), None, |_, v| {
            let r: serde_json::Value = serde_json::from_slice(v).unwrap_or_default();
            last = last.max(r["requestId"].as_u64().or(r["id"].as_u64()).unwrap_or(0));
            Ok(())
        })?;
        let id = last + 1;
        let mut record = what.to_json();
        options.write_json(&mut record);
        record["requestId"] = id.into();
        record["requestedAt"] = now.into();
        let mut batch = Batch::new();
        batch.put(nsc.key(Table::ErasureQueue, &id.to_be_bytes()), record.to_string());
        self.store.write(&batch)?;
        Ok(id)
    }

    /// The queued erasure requests of `ns`, oldest first: (request id, what).
    pub fn erasure_requests(&self, ns: &str) -> Result<Vec<(u64, Erasure)>> {
        Ok(self.queued(ns)?.into_iter().map(|(id, what, _)| (id, what)).collect())
    }

    /// The queued requests with their options. The request id is the record's key (requests
    /// written before `requestId` existed kept it in `id`, overwriting an episode's id).
    fn queued(&self, ns: &str) -> Result<Vec<(u64, Erasure, EraseOptions)>> {
        let nsc = Namespace::new(ns)?;
        let prefix = nsc.table_prefix(Table::ErasureQueue);
        let mut out = Vec::new();
        scan_all(&self.store, &prefix, None, |k, v| {
            let corrupt =
                |detail: String| Error::Corrupt { what: "erasure request".into(), detail };
            let mut r: serde_json::Value =
                serde_json::from_slice(v).map_err(|e| corrupt(e.to_string()))?;
            let id = k[prefix.len()..]
                .try_into()
                .map(u64::from_be_bytes)
                .map_err(|_| corrupt("a key without its request id".into()))?;
            if let Some(o) = r.as_object_mut() {
                o.remove("requestId");
                o.remove("requestedAt");
            }
            out.push((id, Erasure::from_json(&r)?, EraseOptions::from_json(&r)?));
            Ok(())
        })?;
        Ok(out)
    }

    /// Carries out every queued request of `ns` (the nightly job's last step); returns the
    /// receipts as JSON text.
    pub(crate) fn run_erasure_requests(&mut self, ns: &str, now: i64) -> Result<Vec<String>> {
        let nsc = Namespace::new(ns)?;
        let mut receipts = Vec::new();
        for (id, what, options) in self.queued(ns)? {
            let receipt = match self.erase_with(ns, &what, &options, now) {
                Ok(r) => Some(r),
                Err(Error::NotFound(_)) => None, // an episode already gone
                Err(e) => return Err(e),
            };
            receipts.extend(receipt.map(|r| serde_json::to_string(&r).unwrap_or_default()));
            if what != Erasure::Namespace {
                let mut batch = Batch::new();
                batch.delete(nsc.key(Table::ErasureQueue, &id.to_be_bytes()));
                self.store.write(&batch)?;
            }
        }
        Ok(receipts)
    }

    /// Erases `what` from namespace `ns` (module docs) and returns the receipt.
    pub fn erase(&mut self, ns: &str, what: &Erasure, now: i64) -> Result<Receipt> {
        self.erase_with(ns, what, &EraseOptions::default(), now)
    }

    /// [`Engine::erase`] with options: identifiers erased with the subject, the safety catch
    /// lifted, or a dry run (`privacy::erase_options`).
    pub fn erase_with(
        &mut self,
        ns: &str,
        what: &Erasure,
        options: &EraseOptions,
        now: i64,
    ) -> Result<Receipt> {
        let nsc = Namespace::new(ns)?;
        check_options(what, options)?;
        let (scope, subject) = match what {
            Erasure::Namespace => ("namespace", None),
            Erasure::Subject(s) => ("subject", Some(s.trim().to_string())),
            Erasure::Episode(id) => ("episode", Some(id.to_string())),
        };
        if *what != Erasure::Namespace {
            let plan = self.plan_with(&nsc, what, &options.also)?;
            if let Erasure::Subject(s) = what {
                // A dry run is how the caller sees what the catch would stop: never refused.
                let force = options.force || options.dry_run;
                check_share(s, plan.episodes.len(), plan.total_episodes, force)?;
            }
            if options.dry_run {
                return Ok(dry_run(&nsc, scope, subject, plan, now));
            }
            return self.commit(&nsc, scope, subject, plan, now);
        }
        let mut plan = Plan::default();
        scan_all(&self.store, &nsc.prefix(), None, |k, _| {
            if let Some((t, id)) = Table::of_key(&nsc, k) {
                plan.tally.add(t, 1, 0);
                if t == Table::Episode {
                    plan.episodes.extend(id.try_into().ok().map(u64::from_be_bytes));
                }
            }
            plan.batch.delete(k.to_vec());
            Ok(())
        })?;
        if options.dry_run {
            return Ok(dry_run(&nsc, scope, subject, plan, now));
        }
        plan.episodes.clear(); // checked absent by the namespace-wide scan, not by key
        self.commit(&nsc, scope, subject, plan, now)
    }

    /// Writes a planned erasure (or correction) as one batch, vacuums, scans and returns the
    /// receipt. `gone` episodes are checked absent by key; a correction rewrites its episode
    /// under the same key, so it passes none.
    pub(super) fn commit(
        &mut self,
        nsc: &Namespace,
        scope: &'static str,
        subject: Option<String>,
        mut plan: Plan,
        now: i64,
    ) -> Result<Receipt> {
        if !self.store.defers_vacuum() {
            plan.batch.put(VACUUM_PENDING.to_vec(), Vec::new());
        }
        self.store.write(&plan.batch)?;
        self.namespaces.remove(nsc.as_str());
        // The erasure is committed: a failed vacuum is said in the receipt, and retried on
        // every later open (`VACUUM_PENDING`), never an error that leaves the store unusable.
        let vacuum_error = self.vacuum_after_erasure().err().map(|e| e.to_string());
        self.vacuum_failed.clone_from(&vacuum_error);
        let gone: &[u64] = if plan.kept { &[] } else { &plan.episodes };
        let texts = Texts::new(std::mem::take(&mut plan.texts));
        let verification = self.verify(nsc, &plan.words, &texts, gone)?;
        Ok(Receipt {
            vacuumed: vacuum_error.is_none(),
            vacuum_error,
            dry_run: false,
            verification,
            ..dry_run(nsc, scope, subject, plan, now)
        })
    }

    fn vacuum_after_erasure(&mut self) -> Result<()> {
        if self.store.defers_vacuum() {
            self.store.vacuum()
        } else {
            finish_vacuum(&mut self.store)
        }
    }

    /// Decides every deletion and rewrite of a subject or episode erasure.
    pub(super) fn plan(&self, ns: &Namespace, what: &Erasure) -> Result<Plan> {
        self.plan_with(ns, what, &[])
    }

    /// What erasing `what` (and the identifiers `also`) deletes and rewrites: one batch.
    fn plan_with(&self, ns: &Namespace, what: &Erasure, also: &[String]) -> Result<Plan> {
        let needles = match what {
            Erasure::Subject(s) => SubjectWords::new(
                std::iter::once(s.as_str()).chain(also.iter().map(String::as_str)),
            ),
            _ => SubjectWords::default(),
        };
        let mut p = Plan::default();
        let mut deleted_retrievals: Vec<Vec<u8>> = Vec::new();
        scan_all(&self.store, &ns.prefix(), None, |k, v| {
            let Some((table, id)) = Table::of_key(ns, k) else { return Ok(()) };
            // Vectors and snapshot chunks are binary and derived: they go with their records
            // (below), so their bytes are not searched.
            let binary =
                matches!(table, Table::Vector | Table::ObservationVector | Table::Snapshot);
            let hit = !binary && mentions(&needles, id, v);
            match table {
                Table::Episode => {
                    p.total_episodes += 1;
                    let eid = u64::from_be_bytes(id.try_into().unwrap_or([0; 8]));
                    let decoded = Episode::decode(v).ok();
                    if hit || *what == Erasure::Episode(eid) {
                        p.batch.delete(k.to_vec());
                        p.tally.add(table, 1, 0);
                        p.episodes.push(eid);
                        if let Some(e) = decoded {
                            for t in [&e.text, &e.verdict] {
                                if t.len() >= MIN_TEXT_NEEDLE {
                                    p.texts.push(t.as_bytes().to_ascii_lowercase());
                                }
                            }
                            if !e.evidence.is_empty() {
                                p.dissolved.push((eid, e.evidence));
                            }
                        }
                    } else if let Some(e) = decoded.filter(|e| {
                        // Summaries come after their sources (higher ids): by now every erased
                        // or dissolved source is known.
                        e.evidence.iter().any(|x| {
                            p.episodes.contains(x) || p.dissolved.iter().any(|d| d.0 == *x)
                        })
                    }) {
                        p.batch.delete(k.to_vec());
                        p.batch.delete(ns.key(Table::Vector, id));
                        p.tally.add_layer("summaries", 1, 0);
                        p.dissolved.push((eid, e.evidence));
                    }
                }
                Table::Signal => {
                    let signal = Signal::decode(v).ok();
                    let tied = signal
                        .as_ref()
                        .and_then(|s| s.episode)
                        .is_some_and(|e| p.episodes.contains(&e));
                    if hit || tied {
                        p.batch.delete(k.to_vec());
                        p.tally.add(table, 1, 0);
                        p.signals.extend(signal.map(|s| s.id));
                    }
                }
                Table::Retrieval if hit => {
                    p.batch.delete(k.to_vec());
                    p.tally.add(table, 1, 0);
                    deleted_retrievals.push(id.to_vec());
                }
                Table::Retrieval => {
                    let mut r = Retrieval::decode(v)?;
                    let before = r.episodes.len();
                    r.episodes.retain(|e| !p.episodes.contains(e));
                    if r.episodes.len() != before {
                        p.batch.put(k.to_vec(), r.encode());
                        p.tally.add(table, 0, 1);
                    }
                }
                Table::Meta if id == b"outcome-weights" => {
                    let mut w = decode_weights(v)?;
                    let before = w.len();
                    w.retain(|(e, _)| !p.episodes.contains(e));
                    if w.len() != before {
                        p.batch.put(k.to_vec(), encode_weights(&w));
                        p.tally.add(table, 0, 1);
                    }
                }
                Table::Observation => {
                    let decoded = Observation::decode(v);
                    // A lesson observation states what its episodes taught: built on an
                    // erased one, it goes with the rule promoted from it. (A record naming the
                    // subject goes even if it cannot be decoded.)
                    let built_on_erased = decoded
                        .as_ref()
                        .is_ok_and(|o| o.episodes.iter().any(|e| p.episodes.contains(e)));
                    if hit || built_on_erased {
                        p.batch.delete(k.to_vec());
                        p.batch.delete(ns.key(Table::ObservationVector, id));
                        p.tally.add(table, 1, 0);
                        if let Some((rule, o)) = decoded.ok().and_then(|o| Some((o.rule?, o))) {
                            p.rules_gone.push(rule);
                            p.unrepresent.push((rule, o.episodes));
                        }
                        return Ok(());
                    }
                    let mut o = decoded?;
                    let before = o.support.len();
                    o.support.retain(|s| !p.signals.contains(s));
                    if o.support.len() != before {
                        p.batch.put(k.to_vec(), o.encode());
                        p.tally.add(table, 0, 1);
                    }
                }
                Table::Rule => {
                    let rid = u64::from_be_bytes(id.try_into().unwrap_or([0; 8]));
                    if hit || p.rules_gone.contains(&rid) {
                        p.batch.delete(k.to_vec());
                        p.tally.add(table, 1, 0);
                        if !p.rules_gone.contains(&rid) {
                            p.rules_gone.push(rid);
                        }
                    }
                }
                Table::Imported => {
                    // A line's identity goes with the record it became (`engine::import`).
                    let record = crate::engine::import::decode_identity(v).ok();
                    let gone = match id.first() {
                        Some(&EPISODE_LINE) => record.is_some_and(|r| p.episodes.contains(&r)),
                        Some(&SIGNAL_LINE) => record.is_some_and(|r| p.signals.contains(&r)),
                        _ => false,
                    };
                    if gone {
                        p.batch.delete(k.to_vec());
                        p.tally.add(table, 1, 0);
                    }
                }
                Table::Snapshot => p.snapshot = true,
                // The cursor is one state cut into chunks: deleting one chunk would break it.
                Table::Learning if hit => p.learning = true,
                Table::Vector | Table::ObservationVector | Table::Meta | Table::Outcome => {}
                _ if hit => {
                    p.batch.delete(k.to_vec());
                    p.tally.add(table, 1, 0);
                }
                _ => {}
            }
            Ok(())
        })?;
        if let Erasure::Episode(id) = what {
            if !p.episodes.contains(id) {
                return Err(Error::NotFound(format!("episode {id} in namespace {}", ns.as_str())));
            }
        }
        self.restore_derived(ns, &mut p)?;
        for id in deleted_retrievals {
            let key = ns.key(Table::Outcome, &id);
            if self.store.get(&key)?.is_some() {
                p.batch.delete(key);
                p.tally.add(Table::Outcome, 1, 0);
            }
        }
        for &id in &p.episodes {
            let key = ns.key(Table::Vector, &id.to_be_bytes());
            if self.store.get(&key)?.is_some() {
                p.batch.delete(key);
                p.tally.add(Table::Vector, 1, 0);
            }
        }
        if p.learning {
            let mut n = 0;
            scan_all(&self.store, &ns.table_prefix(Table::Learning), None, |k, _| {
                p.batch.delete(k.to_vec());
                n += 1;
                Ok(())
            })?;
            p.tally.add(Table::Learning, n, 0);
        }
        if p.snapshot && !p.episodes.is_empty() {
            // It holds the erased episodes' records and index terms: the next open rebuilds.
            let mut n = 0;
            scan_all(&self.store, &ns.table_prefix(Table::Snapshot), None, |k, _| {
                p.batch.delete(k.to_vec());
                n += 1;
                Ok(())
            })?;
            p.tally.add(Table::Snapshot, n, 0);
        }
        p.words = needles;
        Ok(p)
    }

    /// The scan after an erasure (module docs).
    fn verify(
        &self,
        ns: &Namespace,
        needles: &SubjectWords,
        texts: &Texts,
        episodes: &[u64],
    ) -> Result<Verification> {
        let mut v = Verification {
            records_scanned: 0,
            bytes_scanned: 0,
            needles: needles.len() + texts.len(),
            occurrences: 0,
            leftover_keys: 0,
        };
        let gone: Vec<Vec<u8>> = episodes
            .iter()
            .flat_map(|id| {
                let id = id.to_be_bytes();
                let mut marker = b"d/".to_vec();
                marker.extend_from_slice(&id);
                [
                    ns.key(Table::Episode, &id),
                    ns.key(Table::Vector, &id),
                    ns.key(Table::Snapshot, &marker),
                ]
            })
            .collect();
        scan_all(&self.store, &ns.prefix(), None, |k, val| {
            v.records_scanned += 1;
            v.bytes_scanned += (k.len() + val.len()) as u64;
            let table = Table::of_key(ns, k).map(|t| t.0);
            if gone.iter().any(|g| g == k)
                || (!episodes.is_empty() && table == Some(Table::Snapshot))
            {
                v.leftover_keys += 1;
            }
            let binary =
                matches!(table, Some(Table::Vector | Table::ObservationVector | Table::Snapshot));
            let value: &[u8] = if binary { &[] } else { val };
            v.occurrences +=
                needles.occurrences(k) + needles.occurrences(value) + texts.occurrences(value);
            Ok(())
        })?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_is_found_however_it_is_written() {
        let n = SubjectWords::new(["Zebulon Quartz"]);
        for (text, want) in [
            ("Call Zebulon Quartz’s office about «Zebulon Quartz» invoice", 2),
            ("Zebulon  Quartz (two spaces) phoned", 1),
            ("ZEBULON\u{a0}QUARTZ; zebulon\nquartz; Zebulon\u{2009}–\u{2009}Quartz", 3),
            ("Zebu\u{200b}lon Quartz and Ｚｅｂｕｌｏｎ Ｑｕａｒｔｚ", 2),
            ("Zebulon\u{200b}Quartz", 1),
            ("Zébulon Quärtz, „Zebulon Quartz“", 2),
            ("Zebulon Quartzite and Quartz Zebulon", 0),
        ] {
            assert_eq!(n.occurrences(text.as_bytes()), want, "{text}");
        }
        assert_eq!(SubjectWords::new(["René"]).occurrences("rene's desk, l’René".as_bytes()), 2);
        assert_eq!(SubjectWords::new(["Émile"]).occurrences("d’Émile et l'emile".as_bytes()), 2);
        assert_eq!(SubjectWords::new(["Ana"]).occurrences("Ana and banana; Anaïs".as_bytes()), 1);
        assert_eq!(SubjectWords::new(["ana@x.io"]).occurrences(b"mail ana@x.io now"), 1);
        let texts = Texts::new(vec![
            b"paid the invoice of march".to_vec(),
            b"deploy failed again today".to_vec(),
        ]);
        assert_eq!(
            texts.occurrences(b"x: Paid the Invoice of March; deploy failed again today."),
            2
        );
        assert_eq!(texts.occurrences(b"unpaid the invoice of march"), 0, "a letter before it");
    }
}
