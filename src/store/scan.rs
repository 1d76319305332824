//! Prefix scans page by page, with the check every host's answer must pass.

use super::KvStore;
use crate::error::{Error, Result};

/// What a scan calls on each (key, value); an error stops the scan.
pub(crate) type Visit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// Entries per page of [`scan_all`].
const PAGE: usize = 1024;

/// Calls `f` on every (key, value) under `prefix` (after key `after`, when given), page by page.
pub(crate) fn scan_all(
    store: &impl KvStore,
    prefix: &[u8],
    after: Option<Vec<u8>>,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    scan_pages(store, prefix, after, PAGE, &mut f)
}

/// [`scan_all`] with pages of `page` entries (small pages for large values). `f` is called
/// through a reference to a trait object: one copy of this loop per store type, not one per
/// caller's closure (a wasm build had 13 copies of it, ~50 KB).
pub(crate) fn scan_pages(
    store: &impl KvStore,
    prefix: &[u8],
    mut after: Option<Vec<u8>>,
    page: usize,
    f: &mut Visit<'_>,
) -> Result<()> {
    loop {
        let entries = store.scan(prefix, after.as_deref(), page)?;
        for (k, v) in &entries {
            check_scanned(k, prefix)?;
            f(k, v)?;
        }
        match entries.last() {
            Some((k, _)) if entries.len() == page => after = Some(k.clone()),
            _ => return Ok(()),
        }
    }
}

/// A host's scan must return keys under the prefix asked for; a key that is not is the
/// host's bug, reported instead of sliced (slicing a shorter key would panic and trap a wasm
/// instance).
pub(crate) fn check_scanned(key: &[u8], prefix: &[u8]) -> Result<()> {
    if key.starts_with(prefix) {
        return Ok(());
    }
    Err(Error::Corrupt {
        what: "storage scan".into(),
        detail: format!(
            "the host returned key {:?} for prefix {:?}: its scan must return only keys that \
             start with the prefix",
            String::from_utf8_lossy(key),
            String::from_utf8_lossy(prefix)
        ),
    })
}
