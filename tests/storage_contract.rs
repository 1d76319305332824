//! Every Rust backend passes the storage contract's shared suite; the file backend also keeps
//! batches atomic across a crash at any byte of its last write.

use mnemo::store::{contract, file::FileStore, Batch, KvStore, MemoryStore};

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("mnemo-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn memory_store() {
    contract::check(&mut MemoryStore::new());
}

#[test]
fn file_store() {
    let dir = tempdir("contract");
    contract::check(&mut FileStore::open(&dir).unwrap());
    let dir2 = tempdir("reopen");
    let reopen = |s: FileStore| {
        drop(s);
        FileStore::open(&dir2).unwrap()
    };
    contract::check_reopen(FileStore::open(&dir2).unwrap(), reopen);
}

#[test]
fn file_store_compaction_keeps_everything() {
    let dir = tempdir("compact");
    let mut s = FileStore::open(&dir).unwrap();
    let value = vec![7u8; 4096];
    for round in 0..400u32 {
        let mut b = Batch::new();
        b.put(format!("k/{}", round % 10).into_bytes(), value.clone());
        b.put(b"round".to_vec(), round.to_le_bytes().to_vec());
        s.write(&b).unwrap();
    }
    let log = std::fs::metadata(dir.join("mnemo.log")).unwrap().len();
    assert!(log < 400 * 4096, "the log was compacted ({log} bytes)");
    drop(s);
    let s = FileStore::open(&dir).unwrap();
    assert_eq!(s.scan(b"k/", None, 100).unwrap().len(), 10);
    assert_eq!(s.get(b"round").unwrap(), Some(399u32.to_le_bytes().to_vec()));
}

/// A crash may cut the last write at any byte: reopening must show the batch whole or not at all.
#[test]
fn file_store_batches_are_atomic_across_torn_writes() {
    let dir = tempdir("torn");
    let mut s = FileStore::open(&dir).unwrap();
    let mut first = Batch::new();
    first.put(b"a".to_vec(), b"1".to_vec()).put(b"b".to_vec(), b"2".to_vec());
    s.write(&first).unwrap();
    let before = std::fs::read(dir.join("mnemo.log")).unwrap();
    let mut second = Batch::new();
    second
        .put(b"a".to_vec(), b"changed".to_vec())
        .delete(b"b".to_vec())
        .put(b"c".to_vec(), b"3".to_vec());
    s.write(&second).unwrap();
    drop(s);
    let full = std::fs::read(dir.join("mnemo.log")).unwrap();
    let crash = tempdir("torn-image");
    for cut in before.len()..=full.len() {
        std::fs::create_dir_all(&crash).unwrap();
        std::fs::write(crash.join("mnemo.log"), &full[..cut]).unwrap();
        let s = FileStore::open(&crash).unwrap();
        let all = s.scan(b"", None, 10).unwrap();
        let keys: Vec<&[u8]> = all.iter().map(|(k, _)| k.as_slice()).collect();
        if cut == full.len() {
            assert_eq!(keys, vec![&b"a"[..], b"c"], "the whole batch after a complete write");
            assert_eq!(s.get(b"a").unwrap().as_deref(), Some(&b"changed"[..]));
        } else {
            assert_eq!(keys, vec![&b"a"[..], b"b"], "none of the batch when cut at byte {cut}");
            assert_eq!(s.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
        }
        drop(s);
        let _ = std::fs::remove_dir_all(&crash);
    }
}

#[test]
fn corruption_in_the_middle_is_an_error_and_changes_nothing() {
    let dir = tempdir("corrupt");
    let mut s = FileStore::open(&dir).unwrap();
    for i in 0..3u8 {
        let mut b = Batch::new();
        b.put(vec![i], vec![i; 10]);
        s.write(&b).unwrap();
    }
    drop(s);
    let path = dir.join("mnemo.log");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 0xff; // inside the first record's payload
    std::fs::write(&path, &bytes).unwrap();
    let err = FileStore::open(&dir).unwrap_err();
    assert_eq!(err.code(), "CORRUPT", "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "a failed open leaves the file untouched");

    // a damaged length field must not pass for a torn tail (which would drop later records)
    bytes[20] ^= 0xff;
    bytes[5] ^= 0x40; // first record's payload_len now points far past the end of the file
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(FileStore::open(&dir).unwrap_err().code(), "CORRUPT");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn a_zero_filled_tail_is_a_torn_write() {
    let dir = tempdir("zeros");
    let mut s = FileStore::open(&dir).unwrap();
    let mut b = Batch::new();
    b.put(b"k".to_vec(), b"v".to_vec());
    s.write(&b).unwrap();
    drop(s);
    let path = dir.join("mnemo.log");
    let mut bytes = std::fs::read(&path).unwrap();
    let good = bytes.len();
    bytes.extend_from_slice(&[0u8; 4096]);
    std::fs::write(&path, &bytes).unwrap();
    let s = FileStore::open(&dir).unwrap();
    assert_eq!(s.get(b"k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, good, "the zero tail is cut");
}
