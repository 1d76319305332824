//! Helpers for the tests of this crate and of the crates beside it (feature `testing`; never
//! in what users link): the mutation fuzzer every decoder and JSON entry point runs under.
//!
//! [`fuzz`] starts from a corpus of valid inputs (plus any crash reproducer kept in
//! `tests/fixtures/fuzz/<target>/`) and applies seeded mutations — bit flips, byte overwrites
//! with boundary values, truncation, insertion, duplication and splicing with another seed —
//! then calls the target under `catch_unwind`. A panic writes the input to
//! `$TMPDIR/mnemo-fuzz-<target>-<n>.bin` and fails the test. Executions per target:
//! `MNEMO_FUZZ_EXECS` (3,000 by default).

use std::panic::{catch_unwind, AssertUnwindSafe};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const BOUNDARY: [u8; 8] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, b'{', b'"'];

/// One mutation of a seed (module docs).
fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut b = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(4) {
        let len = b.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                b[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                b[i] = BOUNDARY[rng.below(BOUNDARY.len())];
            }
            2 => b.truncate(rng.below(len + 1)),
            3 => {
                let i = rng.below(len + 1);
                b.insert(i, BOUNDARY[rng.below(BOUNDARY.len())]);
            }
            4 if len > 4 => {
                // A length field blown up: four bytes set to a large little-endian number.
                let i = rng.below(len - 3);
                b[i..i + 4].copy_from_slice(&(u32::MAX - rng.below(1000) as u32).to_le_bytes());
            }
            5 if len > 0 => {
                let (i, n) = (rng.below(len), 1 + rng.below(16));
                let chunk: Vec<u8> = b[i..(i + n).min(len)].to_vec();
                let at = rng.below(len);
                b.splice(at..at, chunk);
            }
            _ => {
                let other = &seeds[rng.below(seeds.len())];
                let cut = rng.below(b.len() + 1);
                let from = rng.below(other.len() + 1);
                b.truncate(cut);
                b.extend_from_slice(&other[from..]);
            }
        }
    }
    b
}

/// Executions per target: `MNEMO_FUZZ_EXECS`, else 3,000.
fn execs() -> usize {
    std::env::var("MNEMO_FUZZ_EXECS").ok().and_then(|v| v.parse().ok()).unwrap_or(3_000)
}

/// Runs `target` on the corpus and `execs()` mutations of it; fails on the first panic.
pub fn fuzz(name: &str, mut seeds: Vec<Vec<u8>>, target: impl Fn(&[u8])) {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz").join(name);
    if let Ok(dir) = std::fs::read_dir(&fixtures) {
        for f in dir.flatten() {
            seeds.extend(std::fs::read(f.path()).ok());
        }
    }
    let mut rng = Rng(0x0f0f_1234_5678_9abc ^ name.len() as u64);
    let n = execs();
    let inputs = seeds.clone().into_iter().chain((0..n).map(|_| mutate(&mut rng, &seeds)));
    for (i, input) in inputs.enumerate() {
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            let path = std::env::temp_dir().join(format!("mnemo-fuzz-{name}-{i}.bin"));
            let _ = std::fs::write(&path, &input);
            panic!("{name}: input {i} panicked; saved to {}", path.display());
        }
    }
    eprintln!("fuzz {name}: {} executions, 0 crashes", n + seeds.len());
}
