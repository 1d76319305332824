//! f32 GEMM kernels on the shapes of a 384-wide, 12-layer BERT (multilingual-e5-small):
//! C (m × n) = A (m × k) · B (k × n), every kernel on the same packed inputs, checked against a
//! plain triple loop, timed as the best of several rounds (ns per call and GFLOP/s).
//!
//!   kernel-bench [KERNEL ...]     (default: every wasm f32 GEMM kernel of a wasm build)
//!   kernel-bench --linear KERNEL ...
//!                                 the shapes of the model's linear layers as it runs them:
//!                                 A = the weight (features × k), n = 32 to 2048 tokens, and C
//!                                 written tokens × features, so a tile's columns are
//!                                 contiguous (build natively for the x86_64 kernels:
//!                                 `cargo build --release` here)
//!   kernel-bench --linear --cold KERNEL ...
//!                                 the same with a different copy of the weight (96 MB in
//!                                 all) at each call, so A comes from memory as in a forward
//!                                 pass, not hot from the caches
//!   kernel-bench --weight-right [--cold] KERNEL ...
//!                                 the linear layers with the weight as B (k × features) and the
//!                                 tokens as the tile's rows, C tokens × features
//!   kernel-bench --shape M,K,N [--shape ...] [--linear] [--cold] KERNEL ...
//!                                 these shapes instead of the model's
//!   kernel-bench --softmax        attention's row softmax: the per-row kernels (row max,
//!                                 exp-and-sum, scale) against the whole-buffer row kernel

use std::time::Instant;
use tract_data::internal::*;
use tract_linalg::mmm::{AsInputValue, FusedSpec, MatMatMul};

fn pick(name: &str) -> Box<dyn MatMatMul> {
    tract_linalg::MmmDispatch::native()
        .runnable()
        .into_iter()
        .find(|k| k.name() == name)
        .unwrap_or_else(|| panic!("kernel {name} is not registered"))
        .clone()
}

/// Deterministic values in [-1, 1).
fn fill(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn run(
    kernel: &dyn MatMatMul,
    (m, k, n): (usize, usize, usize),
    tokens_major: bool,
    cold: bool,
    weight_right: bool,
    rounds: usize,
) -> (f64, f32) {
    let av = fill(m * k, 1);
    let bv = fill(k * n, 2);
    let a = Tensor::from_shape(&[m, k], &av).unwrap();
    let b = Tensor::from_shape(&[k, n], &bv).unwrap();
    let packing = &kernel.packings()[0];
    // cold: enough copies of the packed weight (96 MB) that each call reads its A from memory,
    // as a model's forward pass does; otherwise one, hot in the caches after the first call.
    // weight_right: the weight is B (k × features) and A holds the tokens, so the copies are of B.
    let weight_elems = if weight_right { k * n } else { m * k };
    let copies = if cold { (96 << 20) / (weight_elems * 4) + 1 } else { 1 };
    let a_copies = if weight_right { 1 } else { copies };
    let b_copies = if weight_right { copies } else { 1 };
    let pas: Vec<_> = (0..a_copies).map(|_| packing.0.prepare_one(&a, 1, 0).unwrap()).collect();
    let pbs: Vec<_> = (0..b_copies).map(|_| packing.1.prepare_one(&b, 0, 1).unwrap()).collect();
    let next = std::cell::Cell::new(0usize);
    // tokens_major: C is n × m (tokens × features), as a linear layer writes it; else m × n.
    let (c_shape, m_axis, n_axis) = if tokens_major { ([n, m], 1, 0) } else { ([m, n], 0, 1) };
    let mut c = Tensor::zero::<f32>(&c_shape).unwrap();
    let call = |c: &mut Tensor| unsafe {
        let pa = &pas[next.get() % a_copies];
        let pb = &pbs[next.get() % b_copies];
        next.set(next.get() + 1);
        kernel
            .run(
                m,
                n,
                &[
                    FusedSpec::AddMatMul {
                        a: AsInputValue::Borrowed(&**pa),
                        b: AsInputValue::Borrowed(&**pb),
                        packing: 0,
                    },
                    FusedSpec::Store(kernel.c_view(Some(m_axis), Some(n_axis)).wrap(&c.view_mut())),
                ],
            )
            .unwrap()
    };
    call(&mut c);
    let view = c.to_plain_array_view::<f32>().unwrap();
    let got: Vec<f32> = view.iter().copied().collect();
    let mut worst = 0f32;
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|x| av[i * k + x] * bv[x * n + j]).sum();
            let at = if tokens_major { j * m + i } else { i * n + j };
            worst = worst.max((want - got[at]).abs());
        }
    }
    let flops = 2.0 * (m * k * n) as f64;
    let iters = ((2e8 / flops) as usize).clamp(3, 2000);
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..iters {
            call(&mut c);
        }
        best = best.min(t.elapsed().as_secs_f64() / iters as f64);
    }
    (best * 1e9, worst)
}

/// Attention's softmax: `heads × len` rows of `len` scores, as a 12-head encoder has per layer,
/// through the three per-row kernels tract-core falls back to and through the row kernel
/// (`tract_linalg::routines::softmax_rows_f32`) where the platform has one. Best of 25 rounds.
fn softmax() {
    use tract_linalg::routines::Func;
    let max = Func::ReduceMax.reduce_f32().unwrap();
    let exp_sum = Func::Softmax2.map_reduce_f32().unwrap();
    let scale = Func::MulByScalar.ew_f32_param().unwrap();
    let rows_kernel = tract_linalg::routines::softmax_rows_f32();
    println!("| rows × len | per-row kernels µs | row kernel µs | ratio | max difference |");
    println!("|---|---|---|---|---|");
    for len in [32usize, 64, 128, 256] {
        let rows = 12 * len;
        let input: Vec<f32> = fill(rows * len, 3).iter().map(|x| x * 8.0).collect();
        let time = |f: &dyn Fn(&mut [f32])| -> (f64, Vec<f32>) {
            let mut buf = input.clone();
            let iters = (4_000_000 / (rows * len)).max(3);
            let mut best = f64::MAX;
            for _ in 0..25 {
                let t = Instant::now();
                for _ in 0..iters {
                    buf.copy_from_slice(&input);
                    f(&mut buf);
                }
                best = best.min(t.elapsed().as_secs_f64() / iters as f64);
            }
            (best * 1e6, buf)
        };
        let (per_row, a) = time(&|buf| {
            for row in buf.chunks_mut(len) {
                let m = max.run(row).unwrap();
                let s = exp_sum.run_with_params(row, m).unwrap();
                scale.run_with_params(row, s.recip()).unwrap();
            }
        });
        let (copy, _) = time(&|_| {});
        let Some(kernel) = rows_kernel else {
            println!("| {rows} × {len} | {:.1} | (none here) | | |", per_row - copy);
            continue;
        };
        let (whole, b) = time(&|buf| kernel(buf, len));
        let diff = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
        println!(
            "| {rows} × {len} | {:.1} | {:.1} | {:.2}× | {diff:.1e} |",
            per_row - copy,
            whole - copy,
            (whole - copy) / (per_row - copy)
        );
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--softmax") {
        return softmax();
    }
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    let linear = names.iter().any(|a| a == "--linear");
    let cold = names.iter().any(|a| a == "--cold");
    let weight_right = names.iter().any(|a| a == "--weight-right");
    // --shape M,K,N (repeatable): time these shapes instead
    let custom: Vec<(usize, usize, usize)> = names
        .windows(2)
        .filter(|w| w[0] == "--shape")
        .filter_map(|w| {
            let v: Vec<usize> = w[1].split(',').filter_map(|x| x.parse().ok()).collect();
            (v.len() == 3).then(|| (v[0], v[1], v[2]))
        })
        .collect();
    // kernel names only: no flags, no shape values
    names.retain(|a| !a.starts_with("--") && !a.contains(','));
    if names.is_empty() {
        names = tract_linalg::MmmDispatch::native()
            .runnable()
            .into_iter()
            .map(|k| k.name().to_string())
            .filter(|n| n.starts_with("wasm_f32_") && !n.ends_with("x1"))
            .collect();
    }
    // (m, k, n): a projection and the two feed-forward halves at 32 and 128 tokens, each with the
    // tokens on either side of the kernel's tile.
    let weights_left = [
        (384, 384, 32),
        (1536, 384, 32),
        (384, 1536, 32),
        (384, 384, 128),
        (1536, 384, 128),
        (384, 1536, 128),
        (384, 384, 512),
        (1536, 384, 512),
        (384, 1536, 512),
        (1536, 384, 2048),
    ];
    let shapes_default = [
        (384, 384, 32),
        (1536, 384, 32),
        (384, 1536, 32),
        (32, 384, 384),
        (32, 384, 1536),
        (384, 384, 128),
        (1536, 384, 128),
        (128, 384, 1536),
    ];
    let shapes: Vec<(usize, usize, usize)> = if !custom.is_empty() {
        custom
    } else if weight_right {
        // the same linear layers with the tokens as the tile's rows (m) and the weight as B
        weights_left.iter().map(|&(f, k, t)| (t, k, f)).collect()
    } else if linear {
        weights_left.to_vec()
    } else {
        shapes_default.to_vec()
    };
    println!("| kernel | m | k | n | µs/call | GFLOP/s | max error |");
    println!("|---|---|---|---|---|---|---|");
    for name in &names {
        let kernel = pick(name);
        for &(m, k, n) in &shapes {
            let (ns, err) = run(&*kernel, (m, k, n), linear && !weight_right, cold, weight_right, 7);
            let gflops = 2.0 * (m * k * n) as f64 / ns;
            println!("| {name} | {m} | {k} | {n} | {:.1} | {gflops:.2} | {err:.1e} |", ns / 1e3);
        }
    }
}
