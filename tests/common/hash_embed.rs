//! A deterministic bag-of-words embedder for engine tests that must not depend on the model:
//! each folded word maps to a pseudo-random unit direction, a text is their normalised sum, so
//! cosine tracks word overlap.

use mnemo::{Embedder, Embedding, Polarity, Result, Role};

pub struct HashEmbedder;

pub const DIM: usize = 64;

pub fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIM];
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in w.to_lowercase().bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        for x in v.iter_mut() {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            *x += (h % 1000) as f32 / 500.0 - 1.0;
        }
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter().map(|x| x / n).collect()
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        "hash-bow@1"
    }
    fn dim(&self) -> usize {
        DIM
    }
    fn max_tokens(&self) -> usize {
        512
    }
    fn embed(&mut self, texts: &[&str], _role: Role) -> Result<Vec<Embedding>> {
        Ok(texts
            .iter()
            .map(|t| Embedding {
                vector: vector(t),
                polarity: Polarity::Affirmative,
                tokens: t.split_whitespace().count(),
                truncated: false,
            })
            .collect())
    }
}
