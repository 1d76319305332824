//! [`super::Attention`]'s blocks with wasm simd128: 4 lanes, no fused multiply-add.

use super::{Blocks, Head, Io};
use core::arch::wasm32::*;

/// Head sizes this path takes.
pub(super) fn fits(io: &Io) -> bool {
    let d = io.shape[3];
    d == 16 || d == 32
}

pub(super) struct Simd128;

/// Scores in blocks of 8 rows × 4 keys (8 of the 16 vector registers V8 gives wasm on
/// x86_64); context a row at a time (`D / 4` accumulators).
impl Blocks for Simd128 {
    const LANES: usize = 4;

    unsafe fn scores<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]) {
        scores_block::<R>(head, q, scores)
    }

    unsafe fn softmax(scores: &mut [f32], rows: usize, keys: usize, seq: usize) {
        for r in 0..rows {
            softmax_row(&mut scores[r * keys..][..seq]);
        }
    }

    unsafe fn context(head: &Head, rows: usize, p: &[f32], v: *const f32, out: *mut f32) {
        for r in 0..rows {
            let (p, out) = (&p[r * head.keys..], out.add(r * head.stride));
            if head.dim == 32 {
                context_row::<8>(head, p, v, out)
            } else {
                context_row::<4>(head, p, v, out)
            }
        }
    }
}

unsafe fn scores_block<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]) {
    let Head { kt, dim, keys, scale, mask, stride, .. } = *head;
    let vscale = f32x4_splat(scale);
    let mut t = 0;
    while t < keys {
        let mut acc = [f32x4_splat(0.0); R];
        for d in 0..dim {
            let k = v128_load(kt.as_ptr().add(d * keys + t) as *const v128);
            for (r, a) in acc.iter_mut().enumerate() {
                let qv = v128_load32_splat(q.add(r * stride + d) as *const u32);
                *a = f32x4_add(*a, f32x4_mul(qv, k));
            }
        }
        let m = v128_load(mask.as_ptr().add(t) as *const v128);
        for (r, a) in acc.iter().enumerate() {
            // (q·k) · scale, then + mask: the order of the ops this replaces.
            let s = f32x4_add(f32x4_mul(*a, vscale), m);
            v128_store(scores.as_mut_ptr().add(r * keys + t) as *mut v128, s);
        }
        t += 4;
    }
}

unsafe fn context_row<const DV: usize>(head: &Head, p: &[f32], v: *const f32, out: *mut f32) {
    let mut acc = [f32x4_splat(0.0); DV];
    for (t, &w) in p[..head.seq].iter().enumerate() {
        let (w, vt) = (f32x4_splat(w), v.add(t * head.stride));
        for (j, a) in acc.iter_mut().enumerate() {
            *a = f32x4_add(*a, f32x4_mul(w, v128_load(vt.add(j * 4) as *const v128)));
        }
    }
    for (j, a) in acc.iter().enumerate() {
        v128_store(out.add(j * 4) as *mut v128, *a);
    }
}

unsafe fn softmax_row(row: &mut [f32]) {
    let n = row.len();
    let full = n / 4 * 4;
    let p = row.as_mut_ptr();
    let mut vmax = f32x4_splat(f32::NEG_INFINITY);
    for i in (0..full).step_by(4) {
        vmax = f32x4_max(vmax, v128_load(p.add(i) as *const v128));
    }
    let lanes = [
        f32x4_extract_lane::<0>(vmax),
        f32x4_extract_lane::<1>(vmax),
        f32x4_extract_lane::<2>(vmax),
        f32x4_extract_lane::<3>(vmax),
    ];
    let max = row[full..].iter().chain(&lanes).fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    let vm = f32x4_splat(max);
    let mut vsum = f32x4_splat(0.0);
    for i in (0..full).step_by(4) {
        let y = exp4(f32x4_sub(v128_load(p.add(i) as *const v128), vm));
        v128_store(p.add(i) as *mut v128, y);
        vsum = f32x4_add(vsum, y);
    }
    let mut sum = f32x4_extract_lane::<0>(vsum)
        + f32x4_extract_lane::<1>(vsum)
        + f32x4_extract_lane::<2>(vsum)
        + f32x4_extract_lane::<3>(vsum);
    for x in row[full..].iter_mut() {
        *x = f32x4_extract_lane::<0>(exp4(f32x4_splat(*x - max)));
        sum += *x;
    }
    let by = f32x4_splat(1.0 / sum);
    for i in (0..full).step_by(4) {
        v128_store(p.add(i) as *mut v128, f32x4_mul(v128_load(p.add(i) as *const v128), by));
    }
    for x in row[full..].iter_mut() {
        *x *= 1.0 / sum;
    }
}

/// `exp(x)` for `x ≤ 0` with the arithmetic of tract's x86_64 row softmax (Cody-Waite
/// reduction, degree-5 fit), without fused multiply-adds; 0 below −103. `k = round(x·log2 e)`
/// becomes an integer by adding 1.5·2²³ (its bits then hold `k` in the low mantissa), since
/// V8 lowers `i32x4.trunc_sat_f32x4` to a long sequence on x86_64.
#[allow(clippy::excessive_precision, clippy::approx_constant)]
fn exp4(x: v128) -> v128 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2²³
    let kf = f32x4_nearest(f32x4_mul(x, f32x4_splat(1.442_695_04)));
    let k = i32x4_sub(f32x4_add(kf, f32x4_splat(MAGIC)), f32x4_splat(MAGIC));
    let mut rr = f32x4_sub(x, f32x4_mul(kf, f32x4_splat(0.693_145_75)));
    rr = f32x4_sub(rr, f32x4_mul(kf, f32x4_splat(1.428_606_8e-6)));
    let mut q = f32x4_splat(8.297653546e-03);
    for c in [4.191538191e-02, 1.666757475e-01, 4.999889485e-01, 9.999996920e-01, 1.000000072e+00] {
        q = f32x4_add(f32x4_mul(q, rr), f32x4_splat(c));
    }
    let biased =
        i32x4_max(i32x4_min(i32x4_add(k, i32x4_splat(127)), i32x4_splat(254)), i32x4_splat(1));
    let scale = i32x4_shl(biased, 23);
    v128_andnot(f32x4_mul(q, scale), f32x4_lt(x, f32x4_splat(-103.0)))
}
