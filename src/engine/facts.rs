//! Semantic facts and entity triples: direct lookup, versioned, reconciled by source priority
//! and recency. Never searched by vector.
//!
//! Keys: the current fact at `Table::Fact/<key>`, each superseded version at
//! `Table::FactHistory/<key>\0<version:u32 BE>`; the current triple of (subject, predicate) at
//! `Table::Triple/<subject>\0<predicate>`, ended ones at
//! `Table::TripleHistory/<subject>\0<predicate>\0<valid_to:i64 BE>`.

use super::Engine;
use crate::error::{Error, Result};
use crate::record::{Fact, Origin, Policy, Source, Triple};
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};

/// What a fact write did.
#[derive(Debug, Clone, PartialEq)]
pub enum FactWrite {
    /// Stored as this version.
    Written {
        /// The new version number.
        version: u32,
    },
    /// Same value from the same source: only its confidence and time were refreshed.
    Confirmed {
        /// The version that still holds.
        version: u32,
    },
    /// Refused: a higher-priority source set the current value, or a trusted origin did and
    /// this write's origin is untrusted.
    Refused {
        /// The source that holds the key.
        held_by: Source,
    },
}

/// A fact to write with [`Engine::write_fact`].
#[derive(Debug, Clone, PartialEq)]
pub struct FactInput {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
    /// The source asked for; capped at what `origin` may write ([`Origin::max_source`]).
    pub source: Source,
    /// Where the write came from.
    pub origin: Origin,
    /// Confidence, 0–1.
    pub confidence: f32,
    /// Injection policy. A value holding a secret (a card number, an IBAN, a key or a
    /// password, see `trust::sensitive`) is never auto-injected: it is stored as `sensitive`.
    pub policy: Policy,
    /// Task memory: the fact stops holding this many ms after `now`.
    pub ttl_ms: Option<i64>,
}

impl FactInput {
    /// An implicit fact of unknown origin, confidence 1, auto-injected, without expiry: what
    /// unlabelled input is.
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            value: value.into(),
            source: Source::Implicit,
            origin: Origin::Unknown,
            confidence: 1.0,
            policy: Policy::AutoInject,
            ttl_ms: None,
        }
    }

    /// The source the write gets: the one asked for, capped by the origin.
    pub fn effective_source(&self) -> Source {
        self.source.min(self.origin.max_source())
    }

    /// A fact from JSON: `{key, value, source?, origin?, confidence?, policy?, ttlMs?}`
    /// (unlabelled input is source `implicit`, origin `unknown`, policy `auto-inject`,
    /// confidence 1).
    pub fn from_json(f: &serde_json::Value) -> Result<Self> {
        let str_of = |name: &str| f.get(name).and_then(serde_json::Value::as_str);
        let need = |name: &str| {
            str_of(name).ok_or_else(|| Error::InvalidInput(format!("a fact needs a \"{name}\"")))
        };
        let mut input = FactInput::new(need("key")?, need("value")?);
        input.source = str_of("source").unwrap_or("implicit").parse()?;
        input.origin = str_of("origin").unwrap_or("unknown").parse()?;
        input.policy = str_of("policy").unwrap_or("auto-inject").parse()?;
        input.confidence =
            f.get("confidence").and_then(serde_json::Value::as_f64).unwrap_or(1.0) as f32;
        input.ttl_ms = f.get("ttlMs").and_then(serde_json::Value::as_i64);
        Ok(input)
    }
}

fn check_key(what: &str, key: &str) -> Result<()> {
    if key.is_empty() || key.len() > 512 || key.chars().any(char::is_control) {
        return Err(Error::InvalidInput(format!(
            "{what} {key:?} must be 1-512 bytes without control characters (NUL, newlines, tabs…)"
        )));
    }
    Ok(())
}

fn check_confidence(c: f32) -> Result<()> {
    if !(0.0..=1.0).contains(&c) {
        return Err(Error::InvalidInput(format!("confidence {c} is outside 0-1")));
    }
    Ok(())
}

fn history_key(ns: &Namespace, key: &str, version: u32) -> Vec<u8> {
    let mut id = key.as_bytes().to_vec();
    id.push(0);
    id.extend_from_slice(&version.to_be_bytes());
    ns.key(Table::FactHistory, &id)
}

impl<S: KvStore> Engine<S> {
    /// Sets fact `key` to `value` at `now`, written by trusted code: the origin is what
    /// `source` implies (explicit: the user, admin: an administrator, implicit: the agent).
    /// Use [`Engine::write_fact`] to name the origin.
    #[allow(clippy::too_many_arguments)]
    pub fn set_fact(
        &mut self,
        ns: &str,
        key: &str,
        value: &str,
        source: Source,
        confidence: f32,
        policy: Policy,
        ttl_ms: Option<i64>,
        now: i64,
    ) -> Result<FactWrite> {
        let origin = Origin::of_legacy_source(source);
        let input = FactInput {
            key: key.into(),
            value: value.into(),
            source,
            origin,
            confidence,
            policy,
            ttl_ms,
        };
        self.write_fact(ns, &input, now)
    }

    /// Writes a fact at `now`. The latest write wins unless the current value came from a
    /// higher-priority source (and has not expired), or from a trusted origin while this one
    /// is untrusted: text from a web page, an email or a tool never replaces what the user or
    /// an administrator set. The source is capped by the origin ([`FactInput`]).
    pub fn write_fact(&mut self, ns: &str, f: &FactInput, now: i64) -> Result<FactWrite> {
        let ns = Namespace::new(ns)?;
        let (key, value) = (f.key.as_str(), f.value.as_str());
        check_key("fact key", key)?;
        if value.trim().is_empty() {
            return Err(Error::InvalidInput(format!(
                "fact {key:?} has an empty value: give one, or roll the fact back or erase it"
            )));
        }
        check_confidence(f.confidence)?;
        if f.ttl_ms.is_some_and(|t| t <= 0) {
            return Err(Error::InvalidInput("ttl must be positive (milliseconds)".into()));
        }
        let source = f.effective_source();
        let policy = match f.policy {
            Policy::AutoInject if crate::trust::sensitive::contains_secret(value) => {
                Policy::Sensitive
            }
            p => p,
        };
        let mut batch = Batch::new();
        let mut after_damaged = None;
        let current = match self.fact_record(&ns, key) {
            Err(Error::Corrupt { detail, .. }) => {
                // The current record cannot be read, so who set it is unknown: only the user's
                // own explicit word replaces it, and its bytes are kept in the history.
                if !(f.origin == Origin::User && source == Source::Explicit) {
                    return Err(Error::Corrupt {
                        what: format!("fact {key:?} of namespace {}", ns.as_str()),
                        detail: format!(
                            "{detail}; it is left out of every answer (see quarantined), and \
                             only the user's explicit write (source explicit, origin user) \
                             replaces it"
                        ),
                    });
                }
                let damaged = self.store.get(&ns.key(Table::Fact, key.as_bytes()))?;
                let kept = self.last_history_version(&ns, key)? + 1;
                batch.put(history_key(&ns, key, kept), damaged.unwrap_or_default());
                after_damaged = Some(kept + 1);
                None
            }
            other => other?,
        };
        let version = match &current {
            Some(c)
                if !c.expired(now)
                    && (c.source > source || (c.origin.trusted() && !f.origin.trusted())) =>
            {
                return Ok(FactWrite::Refused { held_by: c.source })
            }
            Some(c) if c.value == value && c.source == source && !c.expired(now) => {
                let mut same = c.clone();
                same.confidence = 1.0 - (1.0 - c.confidence) * (1.0 - f.confidence);
                same.updated_at = now;
                batch.put(ns.key(Table::Fact, key.as_bytes()), same.encode());
                self.store.write(&batch)?;
                return Ok(FactWrite::Confirmed { version: c.version });
            }
            Some(c) => {
                batch.put(history_key(&ns, key, c.version), c.encode());
                c.version + 1
            }
            None => match after_damaged {
                Some(v) => v,
                None => self.last_history_version(&ns, key)? + 1,
            },
        };
        let fact = Fact {
            key: key.to_string(),
            value: value.to_string(),
            source,
            confidence: f.confidence,
            policy,
            version,
            updated_at: now,
            expires_at: f.ttl_ms.map(|t| now.saturating_add(t)),
            origin: f.origin,
        };
        batch.put(ns.key(Table::Fact, key.as_bytes()), fact.encode());
        self.ensure_namespace(&ns, &mut batch)?;
        self.store.write(&batch)?;
        Ok(FactWrite::Written { version })
    }

    fn fact_record(&self, ns: &Namespace, key: &str) -> Result<Option<Fact>> {
        self.store.get(&ns.key(Table::Fact, key.as_bytes()))?.map(|b| Fact::decode(&b)).transpose()
    }

    /// The highest version in `key`'s history, read from the record keys (so a damaged
    /// record's version is never reused).
    fn last_history_version(&self, ns: &Namespace, key: &str) -> Result<u32> {
        let prefix = history_key(ns, key, 0);
        let prefix = &prefix[..prefix.len() - 4];
        let mut last = 0;
        scan_all(&self.store, prefix, None, |k, _| {
            if let Ok(v) = k[prefix.len()..].try_into().map(u32::from_be_bytes) {
                last = last.max(v);
            }
            Ok(())
        })?;
        Ok(last)
    }

    /// The current value of `key` at `now`: `None` when unset, expired, or below the
    /// confidence threshold (unless `include_low_confidence`).
    pub fn fact(
        &self,
        ns: &str,
        key: &str,
        now: i64,
        include_low_confidence: bool,
    ) -> Result<Option<Fact>> {
        let ns = Namespace::new(ns)?;
        check_key("fact key", key)?;
        Ok(self.fact_record(&ns, key)?.filter(|f| {
            !f.expired(now)
                && (include_low_confidence || f.confidence >= self.config.min_fact_confidence)
        }))
    }

    /// Every current fact of `ns` at `now` with one of `policies` (all when empty), above the
    /// confidence threshold unless `include_low_confidence`.
    pub fn facts(
        &self,
        ns: &str,
        now: i64,
        policies: &[Policy],
        include_low_confidence: bool,
    ) -> Result<Vec<Fact>> {
        let ns = Namespace::new(ns)?;
        let mut out = Vec::new();
        scan_all(&self.store, &ns.table_prefix(Table::Fact), None, |_, v| {
            // An unreadable record is left out (and listed by `quarantined`).
            let Ok(f) = Fact::decode(v) else { return Ok(()) };
            if !f.expired(now)
                && (policies.is_empty() || policies.contains(&f.policy))
                && (include_low_confidence || f.confidence >= self.config.min_fact_confidence)
            {
                out.push(f);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Every version of `key`, oldest first (the current one last).
    pub fn fact_history(&self, ns: &str, key: &str) -> Result<Vec<Fact>> {
        let ns = Namespace::new(ns)?;
        check_key("fact key", key)?;
        let mut prefix = key.as_bytes().to_vec();
        prefix.push(0);
        let mut out = Vec::new();
        scan_all(&self.store, &ns.key(Table::FactHistory, &prefix), None, |_, v| {
            // An unreadable record is left out (and listed by `quarantined`).
            out.extend(Fact::decode(v).ok());
            Ok(())
        })?;
        // A damaged current record is left out (listed by `quarantined`).
        out.extend(self.fact_record(&ns, key).ok().flatten());
        Ok(out)
    }

    /// Makes the value of `version` current again, as a new version set by an explicit command.
    pub fn rollback_fact(&mut self, ns: &str, key: &str, version: u32, now: i64) -> Result<u32> {
        let old = self
            .fact_history(ns, key)?
            .into_iter()
            .find(|f| f.version == version)
            .ok_or_else(|| Error::NotFound(format!("version {version} of fact {key:?}")))?;
        match self.set_fact(
            ns,
            key,
            &old.value,
            Source::Explicit,
            old.confidence,
            old.policy,
            None,
            now,
        )? {
            FactWrite::Written { version } | FactWrite::Confirmed { version } => Ok(version),
            FactWrite::Refused { held_by } => Err(Error::InvalidInput(format!(
                "fact {key:?} is held by a {held_by:?} source and was not rolled back"
            ))),
        }
    }

    /// Deletes fact `key` and its history (one batch); returns whether it existed.
    pub fn delete_fact(&mut self, ns: &str, key: &str) -> Result<bool> {
        let nsc = Namespace::new(ns)?;
        let versions = self.fact_history(ns, key)?;
        let mut batch = Batch::new();
        batch.delete(nsc.key(Table::Fact, key.as_bytes()));
        for f in &versions {
            batch.delete(history_key(&nsc, key, f.version));
        }
        self.store.write(&batch)?;
        Ok(!versions.is_empty())
    }

    /// Asserts (subject, predicate, object). An agreeing assertion raises confidence
    /// (`1 − (1−a)(1−b)`); a contradicting one ends the current triple (kept in history with
    /// its validity end) unless the current one has a higher-priority source.
    #[allow(clippy::too_many_arguments)]
    pub fn assert_triple(
        &mut self,
        ns: &str,
        subject: &str,
        predicate: &str,
        object: &str,
        confidence: f32,
        source: Source,
        now: i64,
    ) -> Result<Triple> {
        let ns = Namespace::new(ns)?;
        for (what, v) in [("subject", subject), ("predicate", predicate), ("object", object)] {
            check_key(what, v)?;
        }
        check_confidence(confidence)?;
        let id = format!("{subject}\0{predicate}");
        let key = ns.key(Table::Triple, id.as_bytes());
        let current = self.store.get(&key)?.map(|b| Triple::decode(&b)).transpose()?;
        let mut batch = Batch::new();
        let next = match current {
            Some(mut c) if c.object == object => {
                c.confidence = 1.0 - (1.0 - c.confidence) * (1.0 - confidence);
                c.source = c.source.max(source);
                c.updated_at = now;
                c
            }
            Some(c) if c.source > source => return Ok(c),
            current => {
                if let Some(mut old) = current {
                    old.valid_to = Some(now);
                    let mut hid = format!("{id}\0").into_bytes();
                    hid.extend_from_slice(&now.to_be_bytes());
                    batch.put(ns.key(Table::TripleHistory, &hid), old.encode());
                }
                Triple {
                    subject: subject.into(),
                    predicate: predicate.into(),
                    object: object.into(),
                    confidence,
                    source,
                    valid_from: now,
                    valid_to: None,
                    updated_at: now,
                }
            }
        };
        batch.put(key, next.encode());
        self.ensure_namespace(&ns, &mut batch)?;
        self.store.write(&batch)?;
        Ok(next)
    }

    /// Current triples about `subject`, and (with `history`) the ended ones too.
    pub fn triples(&self, ns: &str, subject: &str, history: bool) -> Result<Vec<Triple>> {
        let ns = Namespace::new(ns)?;
        check_key("subject", subject)?;
        let prefix = format!("{subject}\0");
        let mut out = Vec::new();
        let mut tables = vec![Table::Triple];
        if history {
            tables.push(Table::TripleHistory);
        }
        for table in tables {
            scan_all(&self.store, &ns.key(table, prefix.as_bytes()), None, |_, v| {
                // An unreadable record is left out (and listed by `quarantined`).
                out.extend(Triple::decode(v).ok());
                Ok(())
            })?;
        }
        Ok(out)
    }
}
