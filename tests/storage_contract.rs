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

fn three_records(name: &str) -> (std::path::PathBuf, Vec<u8>) {
    let dir = tempdir(name);
    let mut s = FileStore::open(&dir).unwrap();
    for i in 0..3u8 {
        let mut b = Batch::new();
        b.put(vec![i], vec![i; 10]);
        s.write(&b).unwrap();
    }
    drop(s);
    let bytes = std::fs::read(dir.join("mnemo.log")).unwrap();
    (dir, bytes)
}

/// Record `i` (0-based) of `three_records`: 16-byte header + 4 + 1+4+1+4+10 = 40 bytes each.
const RECORD: usize = 40;

#[test]
fn a_damaged_record_anywhere_is_skipped_reported_and_kept() {
    for (what, at) in [
        ("payload of the first", 20),
        ("length field of the first", 5),
        ("magic of the second", RECORD),
        ("payload of the last", 2 * RECORD + 30),
        ("checksum of the last", 2 * RECORD + 12),
    ] {
        let (dir, mut bytes) = three_records("damage");
        bytes[at] ^= 0x40;
        let path = dir.join("mnemo.log");
        std::fs::write(&path, &bytes).unwrap();
        let damaged = at / RECORD;
        let s = FileStore::open(&dir).unwrap_or_else(|e| panic!("{what}: {e}"));
        for i in 0..3u8 {
            let want = (usize::from(i) != damaged).then(|| vec![i; 10]);
            assert_eq!(s.get(&[i]).unwrap(), want, "{what}: record {i}");
        }
        assert_eq!(s.damage().len(), 1, "{what}: {:?}", s.damage());
        assert_eq!(s.damage()[0].at, (damaged * RECORD) as u64, "{what}");
        assert_eq!(s.damage()[0].len, RECORD as u64, "{what}");
        assert_eq!(KvStore::damage(&s).len(), 1);
        drop(s);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{what}: opening changes no byte");
        // A later write lands after it; the damage stays where it is, reported again.
        let mut s = FileStore::open(&dir).unwrap();
        let mut b = Batch::new();
        b.put(b"new".to_vec(), b"1".to_vec());
        s.write(&b).unwrap();
        drop(s);
        let s = FileStore::open(&dir).unwrap();
        assert_eq!(s.get(b"new").unwrap().as_deref(), Some(&b"1"[..]), "{what}");
        assert_eq!(s.damage().len(), 1, "{what}");
        assert!(std::fs::read(&path).unwrap().starts_with(&bytes), "{what}: nothing cut");
    }
}

#[test]
fn a_rewrite_moves_damage_into_mnemo_damaged_and_loses_no_byte() {
    let (dir, mut bytes) = three_records("damage-rewrite");
    bytes[2 * RECORD + 30] ^= 1; // the last record: as long as its header says, bad checksum
    std::fs::write(dir.join("mnemo.log"), &bytes).unwrap();
    let mut s = FileStore::open(&dir).unwrap();
    s.vacuum().unwrap();
    assert_eq!(s.damage().len(), 1);
    assert!(s.damage()[0].moved);
    drop(s);
    let side = std::fs::read(dir.join("mnemo.damaged")).unwrap();
    assert_eq!(&side[..4], b"MNDG");
    assert_eq!(u64::from_le_bytes(side[4..12].try_into().unwrap()), (2 * RECORD) as u64);
    assert_eq!(&side[20..], &bytes[2 * RECORD..], "the damaged record, byte for byte");
    let s = FileStore::open(&dir).unwrap();
    assert_eq!(s.damage().len(), 1, "still reported after the rewrite");
    assert_eq!(s.get(&[1]).unwrap(), Some(vec![1; 10]));
}

#[test]
fn a_torn_tail_stays_until_a_write_then_moves_to_mnemo_damaged() {
    let (dir, bytes) = three_records("torn-kept");
    let path = dir.join("mnemo.log");
    std::fs::write(&path, &bytes[..bytes.len() - 7]).unwrap();
    let s = FileStore::open(&dir).unwrap();
    assert_eq!(s.get(&[2]).unwrap(), None, "a record shorter than its header is a torn write");
    drop(s);
    assert_eq!(std::fs::read(&path).unwrap(), &bytes[..bytes.len() - 7], "a read cuts nothing");
    let mut s = FileStore::open(&dir).unwrap();
    let mut b = Batch::new();
    b.put(b"k".to_vec(), b"v".to_vec());
    s.write(&b).unwrap();
    assert_eq!(s.damage().len(), 1, "{:?}", s.damage());
    drop(s);
    let side = std::fs::read(dir.join("mnemo.damaged")).unwrap();
    assert_eq!(&side[20..], &bytes[2 * RECORD..bytes.len() - 7]);
    let s = FileStore::open(&dir).unwrap();
    assert_eq!(s.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(s.get(&[1]).unwrap(), Some(vec![1; 10]));
}

#[cfg(unix)]
#[test]
fn the_store_writes_only_files_it_created_and_keeps_them_private() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, _) = three_records("ours");
    let decoy = dir.with_extension("decoy");
    std::fs::write(&decoy, b"not the store's").unwrap();
    std::os::unix::fs::symlink(&decoy, dir.join("mnemo.log.tmp")).unwrap();
    let mut s = FileStore::open(&dir).unwrap();
    s.vacuum().unwrap();
    drop(s);
    assert_eq!(std::fs::read(&decoy).unwrap(), b"not the store's", "the link was not followed");
    let log = std::fs::symlink_metadata(dir.join("mnemo.log")).unwrap();
    assert!(log.file_type().is_file(), "the log is a file, not the planted link");
    assert_eq!(log.permissions().mode() & 0o777, 0o600);
    let s = FileStore::open(&dir).unwrap();
    assert_eq!(s.get(&[2]).unwrap(), Some(vec![2; 10]));
    drop(s);
    // A fresh store's files are the owner's alone.
    let fresh = tempdir("ours-fresh");
    let mut s = FileStore::open(&fresh).unwrap();
    let mut b = Batch::new();
    b.put(b"k".to_vec(), b"v".to_vec());
    s.write(&b).unwrap();
    for f in ["mnemo.log", "mnemo.lock"] {
        let m = std::fs::metadata(fresh.join(f)).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600, "{f}");
    }
    drop(s);
    // A log that is a symbolic link is refused, and what it points to is left alone.
    let linked = tempdir("ours-link");
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(&decoy, linked.join("mnemo.log")).unwrap();
    let err = FileStore::open(&linked).unwrap_err();
    assert_eq!(err.code(), "IO");
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read(&decoy).unwrap(), b"not the store's");
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
    let mut s = FileStore::open(&dir).unwrap();
    assert_eq!(s.get(b"k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "opening cuts nothing");
    s.write(&b).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, 2 * good, "the zeros are cut");
    assert!(s.damage().is_empty(), "zeros are nothing to report");
    assert!(!dir.join("mnemo.damaged").exists());
}
