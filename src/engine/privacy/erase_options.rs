//! What a caller may add to a subject erasure, and the safety catch every surface shares.
//!
//! - `also`: linked identifiers (the subject's email address, an IBAN, a nickname) erased in
//!   the same batch as the subject, each matched the way the subject is.
//! - `dryRun`: the receipt of what would go — counts per layer and the episode ids, with
//!   `dryRun: true` — and nothing changes.
//! - The safety catch, refused with `INVALID_INPUT` before anything is read or changed: a
//!   subject (or an `also` value) with fewer than 3 letters or digits, or made of common
//!   function words only ("to", "the", "della": `index::stopwords`); and, unless `force`, a
//!   subject found in more than half of the namespace's episodes (a typo or a common word
//!   would otherwise empty the memory).

use serde_json::Value;

use crate::error::{Error, Result};
use crate::index::stopwords::is_stopword;
use crate::trust::normalize::search_words;

/// What a caller may add to an erasure (module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EraseOptions {
    /// Linked identifiers erased with the subject.
    pub also: Vec<String>,
    /// Erase even when the subject is in more than half of the episodes.
    pub force: bool,
    /// Plan and report, change nothing.
    pub dry_run: bool,
}

impl EraseOptions {
    /// Reads `also` (a list of strings), `force` and `dryRun` (booleans) from an erasure's
    /// JSON object; all optional.
    pub fn from_json(v: &Value) -> Result<Self> {
        let flag = |name: &str| match v.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(Error::InvalidInput(format!(
                "an erasure's \"{name}\" is true or false, not {other}"
            ))),
        };
        let also = match v.get("also") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .map(|x| {
                    x.as_str().map(str::to_string).ok_or_else(|| {
                        Error::InvalidInput(format!("an erasure's \"also\" lists strings, not {x}"))
                    })
                })
                .collect::<Result<_>>()?,
            Some(other) => {
                return Err(Error::InvalidInput(format!(
                    "an erasure's \"also\" is a list of names or identifiers, not {other}"
                )))
            }
        };
        Ok(EraseOptions { also, force: flag("force")?, dry_run: flag("dryRun")? })
    }

    /// Adds the options to an erasure's JSON object (the queued request keeps them).
    pub(super) fn write_json(&self, v: &mut Value) {
        if !self.also.is_empty() {
            v["also"] = self.also.clone().into();
        }
        if self.force {
            v["force"] = true.into();
        }
    }
}

/// Refuses a subject too short or too common to name anyone (module docs).
pub(super) fn check_subject(subject: &str) -> Result<()> {
    let words = search_words(subject);
    let letters: usize = words.iter().map(|w| w.chars().count()).sum();
    if letters < 3 {
        return Err(Error::InvalidInput(format!(
            "the erasure subject {subject:?} has fewer than 3 letters or digits: give a name or \
             an identifier"
        )));
    }
    if words.iter().all(|w| is_stopword(w)) {
        return Err(Error::InvalidInput(format!(
            "the erasure subject {subject:?} is a common word, found in ordinary text about \
             anyone: give a name or an identifier"
        )));
    }
    Ok(())
}

/// Refuses, unless `force`, a subject found in more than half of the namespace's episodes.
pub(super) fn check_share(subject: &str, found: usize, total: usize, force: bool) -> Result<()> {
    if !force && found * 2 > total {
        return Err(Error::InvalidInput(format!(
            "the erasure subject {subject:?} is in {found} of the namespace's {total} episodes \
             (more than half): check the spelling, preview with a dry run, or force it; to \
             erase everything held for this user, erase the namespace"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_common_subjects_are_refused() {
        for s in ["to", "Al", "  x ", "the", "episode of the", "Della"] {
            let refused = check_subject(s).is_err();
            let common = s.contains("episode");
            assert!(refused != common, "{s:?}");
        }
        for s in ["Ana", "René", "ana@x.io", "IT60X0542811101000000123456", "Zebulon Quartz"] {
            assert!(check_subject(s).is_ok(), "{s:?}");
        }
        assert!(check_share("to", 50, 52, false).is_err());
        assert!(check_share("to", 50, 52, true).is_ok());
        assert!(check_share("Ana", 26, 52, false).is_ok(), "half is not more than half");
    }

    #[test]
    fn options_read_from_json_and_refuse_wrong_types() {
        let o = EraseOptions::from_json(&serde_json::json!({"also": ["a@x.io"], "dryRun": true}))
            .unwrap();
        assert_eq!(o, EraseOptions { also: vec!["a@x.io".into()], force: false, dry_run: true });
        assert!(EraseOptions::from_json(&serde_json::json!({"force": "yes"})).is_err());
        assert!(EraseOptions::from_json(&serde_json::json!({"also": "a@x.io"})).is_err());
    }
}
