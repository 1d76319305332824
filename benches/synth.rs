//! Synthetic data shaped like E5 output, shared by the benchmarks.

pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn gauss(&mut self) -> f32 {
        let u = (self.next() % 1_000_000 + 1) as f32 / 1_000_001.0;
        let v = (self.next() % 1_000_000) as f32 / 1_000_000.0;
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
    fn vec(&mut self, dim: usize) -> Vec<f32> {
        (0..dim).map(|_| self.gauss()).collect()
    }
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// `n` vectors in `dim` dimensions drawn around 1,000 topics.
pub fn e5_like(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = Rng(seed | 1);
    let common = unit(rng.vec(dim));
    let topics: Vec<Vec<f32>> = (0..1000).map(|_| unit(rng.vec(dim))).collect();
    (0..n)
        .map(|_| {
            let t = &topics[(rng.next() % 1000) as usize];
            let noise = unit(rng.vec(dim));
            unit((0..dim).map(|i| 0.85 * common[i] + 0.45 * t[i] + 0.3 * noise[i]).collect())
        })
        .collect()
}
