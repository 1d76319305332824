//! The storage contract's shared suite. Every backend's tests call [`check`] on a fresh, empty
//! store, and [`check_reopen`] when it persists. It panics with the broken promise.

use super::{Batch, KvStore};

fn keys(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<&[u8]> {
    entries.iter().map(|(k, _)| k.as_slice()).collect()
}

/// Checks every promise of [`KvStore`] on `store`, which must start empty.
pub fn check<S: KvStore>(store: &mut S) {
    let get = |s: &S, k: &[u8]| s.get(k).expect("get");
    assert_eq!(get(store, b"missing"), None, "a missing key reads as None");
    assert!(store.scan(b"", None, 10).expect("scan").is_empty(), "the store must start empty");

    // read your writes, in-batch order, deletes
    let mut b = Batch::new();
    b.put(b"k/a".to_vec(), b"1".to_vec())
        .put(b"k/b".to_vec(), b"2".to_vec())
        .put(b"k/a".to_vec(), b"3".to_vec())
        .put(b"k/c".to_vec(), b"4".to_vec())
        .delete(b"k/c".to_vec())
        .delete(b"k/never".to_vec());
    store.write(&b).expect("write");
    assert_eq!(get(store, b"k/a").as_deref(), Some(&b"3"[..]), "last write in a batch wins");
    assert_eq!(get(store, b"k/b").as_deref(), Some(&b"2"[..]), "read your writes");
    assert_eq!(get(store, b"k/c"), None, "a delete after a put in one batch removes the key");

    // empty batch, empty value, binary keys and values
    store.write(&Batch::new()).expect("an empty batch is accepted");
    let binary_key = vec![0u8, 255, 1, 0, 128];
    let binary_value: Vec<u8> = (0..=255u8).collect();
    let mut b = Batch::new();
    b.put(binary_key.clone(), binary_value.clone()).put(b"k/empty".to_vec(), Vec::new());
    store.write(&b).expect("write");
    assert_eq!(get(store, &binary_key), Some(binary_value), "binary keys and values round-trip");
    assert_eq!(get(store, b"k/empty"), Some(Vec::new()), "an empty value is not a missing key");

    // a large value
    let big: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut b = Batch::new();
    b.put(b"big".to_vec(), big.clone());
    store.write(&b).expect("write");
    assert_eq!(get(store, b"big"), Some(big), "a 1 MB value round-trips");

    // ordered prefix scans and paging
    let mut b = Batch::new();
    for k in ["u/a/1", "u/a/2", "u/a/10", "u/b/1", "u/a", "u/", "u/a/\u{ff}"] {
        b.put(k.as_bytes().to_vec(), k.as_bytes().to_vec());
    }
    store.write(&b).expect("write");
    let all = store.scan(b"u/a/", None, 100).expect("scan");
    let want: Vec<&[u8]> = vec![b"u/a/1", b"u/a/10", b"u/a/2", "u/a/\u{ff}".as_bytes()];
    assert_eq!(keys(&all), want, "scan returns exactly the prefix, in byte order");
    assert!(all.iter().all(|(k, v)| k == v), "scan returns each key's value");
    let mut paged = Vec::new();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = store.scan(b"u/a/", after.as_deref(), 2).expect("scan");
        assert!(page.len() <= 2, "scan honours its limit");
        if page.is_empty() {
            break;
        }
        after = Some(page[page.len() - 1].0.clone());
        paged.extend(page);
    }
    assert_eq!(paged, all, "paging with `after` visits every entry once, in order");
    assert_eq!(
        keys(&store.scan(b"u/a/", Some(b"a"), 1).expect("scan")),
        vec![&b"u/a/1"[..]],
        "an `after` below the prefix starts at the prefix"
    );
    assert!(store.scan(b"u/a/", Some(b"z"), 10).expect("scan").is_empty());
    assert!(store.scan(b"u/a/", None, 0).expect("scan").is_empty(), "limit 0 returns nothing");
    assert_eq!(store.scan(b"", None, 1000).expect("scan").len(), 12, "the empty prefix is all");
}

/// Checks that what was written survives reopening: `reopen` drops the store and opens the
/// same storage again.
pub fn check_reopen<S: KvStore>(store: S, reopen: impl Fn(S) -> S) {
    let mut store = store;
    let mut b = Batch::new();
    for i in 0..100u32 {
        b.put(format!("r/{i:03}").into_bytes(), i.to_le_bytes().to_vec());
    }
    store.write(&b).expect("write");
    let mut b = Batch::new();
    b.delete(b"r/007".to_vec()).put(b"r/050".to_vec(), b"changed".to_vec());
    store.write(&b).expect("write");
    let before = store.scan(b"r/", None, 1000).expect("scan");
    let store = reopen(store);
    let after = store.scan(b"r/", None, 1000).expect("scan");
    assert_eq!(after, before, "everything acknowledged survives reopening");
    assert_eq!(after.len(), 99);
    assert_eq!(store.get(b"r/050").expect("get").as_deref(), Some(&b"changed"[..]));
}
