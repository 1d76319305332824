//! Tests of snapshots: the checksum, the run encoding of row seqs, and snapshots written and
//! reopened through the engine.

use super::snapshot::{hash, put_runs, read_runs, ROWS};
use crate::engine::{Opened, Query};
use crate::record::{Episode, Status};
use crate::store::codec::{Reader, Writer};
use crate::store::MemoryStore;
use crate::{Config, Engine};

#[test]
fn a_rows_part_whose_rows_are_mostly_removed_is_written_again_with_the_rest() {
    let mut config = Config { dim: 8, snapshot_after: 1, ..Config::default() };
    config.vectors.seal_at = 64;
    let vector = |i: u64| -> Vec<f32> {
        let x: Vec<f32> = (0..8).map(|j| ((i * 7 + j * 3) % 13) as f32 + 0.5).collect();
        let n = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        x.iter().map(|a| a / n).collect()
    };
    let add = |e: &mut Engine<MemoryStore>, ids: std::ops::Range<u64>| {
        for i in ids {
            let ep = Episode::new(format!("event {i} about topic{}", i % 5), 1_000 + i as i64);
            e.remember("ana", ep, Some(&vector(i))).unwrap();
        }
        while !e.maintain(true, None).unwrap().done {}
    };
    let mut e = Engine::new(MemoryStore::new(), config.clone());
    add(&mut e, 0..1024);
    for id in 1..=900 {
        e.set_status("ana", id, Status::Rejected).unwrap();
    }
    // New rows merge with the old segment, which drops the removed rows (they are stored).
    add(&mut e, 1024..2048);
    let space = &e.namespaces["ana"];
    let rows: Vec<_> = space.snap.parts.iter().filter(|p| p.kind == ROWS).collect();
    let stored: u64 = rows.iter().map(|p| p.len).sum();
    let held = space.vectors.sealed_rows() as u64;
    assert_eq!(held, 2048 - 900);
    // 12 bytes a row (a scale and 8 int8s), and each part's few bytes of seqs.
    assert!(stored <= held * 12 + 64 * rows.len() as u64, "{stored} bytes for {held} rows");

    let mut q = Query::new("event topic3", 10);
    (q.vector, q.touch) = (Some(vector(1500)), false);
    let ids = |e: &mut Engine<MemoryStore>| -> Vec<(u64, u32)> {
        let hits = e.recall("ana", &q, 10_000).unwrap().hits;
        hits.iter().map(|h| (h.episode.id, h.explanation.final_score.to_bits())).collect()
    };
    let want = ids(&mut e);
    let mut b = Engine::new(e.into_store(), config);
    b.load("ana").unwrap();
    assert!(matches!(b.opened("ana"), Some(Opened::Snapshot { .. })), "{:?}", b.opened("ana"));
    assert_eq!(ids(&mut b), want);
}

#[test]
fn unsealed_keys_are_stored_as_runs_and_read_back_in_order() {
    let passage = (1 << 48) | 9;
    let keys: Vec<u64> =
        (4000..8096).chain([12, 13, 14, passage, passage + 1, 3]).chain(8097..8100).collect();
    let mut w = Writer::new();
    put_runs(&mut w, &keys);
    let bytes = w.finish();
    assert!(bytes.len() < 40, "{} bytes for {} keys in 5 runs", bytes.len(), keys.len());
    assert_eq!(read_runs(&mut Reader::new(&bytes, "t"), 9000).unwrap(), keys);
    // More keys than ids below the watermark can have vectors, or a run past 64 bits.
    assert!(read_runs(&mut Reader::new(&bytes, "t"), 10).is_err());
    let mut w = Writer::new();
    w.u32(1).var(u64::MAX - 3).var(1 << 40);
    assert!(read_runs(&mut Reader::new(&w.finish(), "t"), u64::MAX).is_err());
}

#[test]
fn every_flipped_bit_changes_the_hash() {
    let data: Vec<u8> = (0..203u32).map(|i| (i * 31 % 251) as u8).collect();
    let h = hash(&data);
    for byte in 0..data.len() {
        for bit in 0..8 {
            let mut d = data.clone();
            d[byte] ^= 1 << bit;
            assert_ne!(hash(&d), h, "byte {byte} bit {bit}");
        }
    }
    assert_ne!(hash(&data[..202]), h, "length counts");
}

#[test]
fn the_hash_of_bytes_in_pieces_is_the_hash_of_the_whole() {
    let data: Vec<u8> = (0..203u32).map(|i| (i * 31 % 251) as u8).collect();
    for size in 1..=70 {
        let mut h = super::snapshot::Hasher::new();
        for piece in data.chunks(size) {
            h.update(piece);
        }
        assert_eq!(h.finish(), hash(&data), "pieces of {size}");
    }
}
