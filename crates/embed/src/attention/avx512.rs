//! [`super::Attention`]'s blocks with AVX-512F: 8 query rows × 16 keys of scores and 8 rows of
//! context in zmm registers, and a row softmax with tract's exp arithmetic on 16 lanes.

use super::{Blocks, Head, Io, ROWS};
use std::arch::x86_64::*;

/// Head sizes this path takes (`D` a multiple of 16, up to 32 so that 8 rows of context fit
/// the registers), where the CPU has AVX-512F and `MNEMO_ISA` allows it (`crate::isa`).
pub(super) fn fits(io: &Io) -> bool {
    let d = io.shape[3];
    (d == 16 || d == 32) && crate::isa::avx512f()
}

pub(super) struct Avx512;

impl Blocks for Avx512 {
    const LANES: usize = 16;

    unsafe fn scores<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]) {
        scores_block::<R>(head, q, scores)
    }

    unsafe fn softmax(scores: &mut [f32], rows: usize, keys: usize, seq: usize) {
        for r in 0..rows {
            softmax_row(&mut scores[r * keys..][..seq]);
        }
    }

    unsafe fn context(head: &Head, rows: usize, p: &[f32], v: *const f32, out: *mut f32) {
        if head.dim == 32 {
            context::<2>(head, rows, p, v, out)
        } else {
            context::<1>(head, rows, p, v, out)
        }
    }
}

/// `out[r, ·] = Σ_t p[r, t] · v[t, ·]` for `rows ≤ ROWS` rows of probabilities.
#[target_feature(enable = "avx512f")]
unsafe fn context<const DV: usize>(
    head: &Head,
    rows: usize,
    p: &[f32],
    v: *const f32,
    out: *mut f32,
) {
    if rows == ROWS {
        context_block::<ROWS, DV>(head, p, v, out);
    } else {
        for r in 0..rows {
            context_block::<1, DV>(head, &p[r * head.keys..], v, out.add(r * head.stride));
        }
    }
}

/// `scores[r, t] = scale · Σ_d q[r, d] · kt[d, t] + mask[t]` for `R` rows of `q` (rows
/// `stride` apart) and every key `t < keys` (a multiple of 16).
#[target_feature(enable = "avx512f")]
unsafe fn scores_block<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]) {
    let Head { kt, dim, keys, scale, mask, stride: q_stride, .. } = *head;
    let vscale = _mm512_set1_ps(scale);
    let mut t = 0;
    while t < keys {
        let mut acc = [_mm512_setzero_ps(); R];
        for d in 0..dim {
            let k = _mm512_loadu_ps(kt.as_ptr().add(d * keys + t));
            for (r, a) in acc.iter_mut().enumerate() {
                *a = _mm512_fmadd_ps(_mm512_set1_ps(*q.add(r * q_stride + d)), k, *a);
            }
        }
        let m = _mm512_loadu_ps(mask.as_ptr().add(t));
        for (r, a) in acc.iter().enumerate() {
            // (q·k) · scale, then + mask: the order of the ops this replaces.
            let s = _mm512_add_ps(_mm512_mul_ps(*a, vscale), m);
            _mm512_storeu_ps(scores.as_mut_ptr().add(r * keys + t), s);
        }
        t += 16;
    }
}

/// `out[r, ·] = Σ_t p[r, t] · v[t, ·]` for `R` rows of probabilities (rows `keys` apart in
/// `p`) over the `seq` keys, `v` and `out` rows `stride` apart, `DV` vectors of 16 per row.
#[target_feature(enable = "avx512f")]
unsafe fn context_block<const R: usize, const DV: usize>(
    head: &Head,
    p: &[f32],
    v: *const f32,
    out: *mut f32,
) {
    let Head { keys, seq, stride, .. } = *head;
    let mut acc = [[_mm512_setzero_ps(); DV]; R];
    for t in 0..seq {
        let mut vt = [_mm512_setzero_ps(); DV];
        for (j, x) in vt.iter_mut().enumerate() {
            *x = _mm512_loadu_ps(v.add(t * stride + j * 16));
        }
        for (r, a) in acc.iter_mut().enumerate() {
            let w = _mm512_set1_ps(*p.get_unchecked(r * keys + t));
            for (x, y) in a.iter_mut().zip(&vt) {
                *x = _mm512_fmadd_ps(w, *y, *x);
            }
        }
    }
    for (r, a) in acc.iter().enumerate() {
        for (j, x) in a.iter().enumerate() {
            _mm512_storeu_ps(out.add(r * stride + j * 16), *x);
        }
    }
}

/// Softmax in place: the max, `exp(x − max)` summed, then × 1/sum.
#[target_feature(enable = "avx512f")]
unsafe fn softmax_row(row: &mut [f32]) {
    let n = row.len();
    let p = row.as_mut_ptr();
    let tail = |i: usize| ((1u32 << (n - i).min(16)) - 1) as u16;
    let mut max = _mm512_set1_ps(f32::NEG_INFINITY);
    let mut i = 0;
    while i < n {
        let x = _mm512_mask_loadu_ps(max, tail(i), p.add(i));
        max = _mm512_max_ps(max, x);
        i += 16;
    }
    let vmax = _mm512_set1_ps(_mm512_reduce_max_ps(max));
    let mut sum = _mm512_setzero_ps();
    i = 0;
    while i < n {
        let k = tail(i);
        let y = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, p.add(i)), vmax));
        sum = _mm512_mask_add_ps(sum, k, sum, y);
        _mm512_mask_storeu_ps(p.add(i), k, y);
        i += 16;
    }
    let by = _mm512_set1_ps(1.0 / _mm512_reduce_add_ps(sum));
    i = 0;
    while i < n {
        let k = tail(i);
        _mm512_mask_storeu_ps(p.add(i), k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p.add(i)), by));
        i += 16;
    }
}

/// `exp(x)` for `x ≤ 0` with the arithmetic of tract's x86_64 row softmax (Cody-Waite
/// reduction, degree-5 fit), 16 lanes at a time; 0 below −103. The constants are tract's,
/// digit for digit.
#[allow(clippy::excessive_precision, clippy::approx_constant)]
#[target_feature(enable = "avx512f")]
unsafe fn exp16(x: __m512) -> __m512 {
    let k = _mm512_cvtps_epi32(_mm512_mul_ps(x, _mm512_set1_ps(1.442_695_04)));
    let kf = _mm512_cvtepi32_ps(k);
    let mut rr = _mm512_fnmadd_ps(kf, _mm512_set1_ps(0.693_145_75), x);
    rr = _mm512_fnmadd_ps(kf, _mm512_set1_ps(1.428_606_8e-6), rr);
    let mut q = _mm512_set1_ps(8.297653546e-03);
    q = _mm512_fmadd_ps(q, rr, _mm512_set1_ps(4.191538191e-02));
    q = _mm512_fmadd_ps(q, rr, _mm512_set1_ps(1.666757475e-01));
    q = _mm512_fmadd_ps(q, rr, _mm512_set1_ps(4.999889485e-01));
    q = _mm512_fmadd_ps(q, rr, _mm512_set1_ps(9.999996920e-01));
    q = _mm512_fmadd_ps(q, rr, _mm512_set1_ps(1.000000072e+00));
    let biased = _mm512_max_epi32(
        _mm512_min_epi32(_mm512_add_epi32(k, _mm512_set1_epi32(127)), _mm512_set1_epi32(254)),
        _mm512_set1_epi32(1),
    );
    let scale = _mm512_castsi512_ps(_mm512_slli_epi32::<23>(biased));
    let under = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, _mm512_set1_ps(-103.0));
    _mm512_maskz_mul_ps(!under, q, scale)
}
