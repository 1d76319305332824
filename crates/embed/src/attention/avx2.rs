//! [`super::Attention`]'s blocks with AVX2 and FMA, for x86_64 hosts without AVX-512: 8 rows × 8
//! keys of scores, context in pairs of rows, tract's own row softmax.

use super::{Blocks, Head, Io};
use std::arch::x86_64::*;
use tract_onnx::tract_core::tract_linalg::routines::{softmax_rows_f32, SoftmaxRowsF32};

/// tract's row softmax for AVX2 and FMA, looked up once.
fn row_softmax() -> Option<SoftmaxRowsF32> {
    static ROUTINE: std::sync::OnceLock<Option<SoftmaxRowsF32>> = std::sync::OnceLock::new();
    *ROUTINE.get_or_init(softmax_rows_f32)
}

/// Whether the CPU has AVX2 and FMA, `MNEMO_ISA` allows them (`crate::isa`), and tract has its
/// row softmax for them (which `TRACT_CPU_ISA` can take away).
pub(super) fn supported() -> bool {
    crate::isa::avx2_fma() && row_softmax().is_some()
}

/// Head sizes this path takes, where it is [`supported`].
pub(super) fn fits(io: &Io) -> bool {
    let d = io.shape[3];
    (d == 16 || d == 32) && supported()
}

/// Scores in blocks of 8 rows × 8 keys (8 of the 16 ymm registers); context in pairs of
/// rows (`2 · D / 8` accumulators); the softmax is tract's, over whole padded rows.
pub(super) struct Avx2;

impl Blocks for Avx2 {
    const LANES: usize = 8;

    unsafe fn scores<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]) {
        scores_block::<R>(head, q, scores)
    }

    unsafe fn softmax(scores: &mut [f32], rows: usize, keys: usize, _seq: usize) {
        if let Some(softmax) = row_softmax() {
            softmax(&mut scores[..rows * keys], keys);
        }
    }

    unsafe fn context(head: &Head, rows: usize, p: &[f32], v: *const f32, out: *mut f32) {
        if head.dim == 32 {
            context::<4>(head, rows, p, v, out)
        } else {
            context::<2>(head, rows, p, v, out)
        }
    }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn context<const DV: usize>(
    head: &Head,
    rows: usize,
    p: &[f32],
    v: *const f32,
    out: *mut f32,
) {
    let mut r = 0;
    while r + 2 <= rows {
        context_block::<2, DV>(head, &p[r * head.keys..], v, out.add(r * head.stride));
        r += 2;
    }
    if r < rows {
        context_block::<1, DV>(head, &p[r * head.keys..], v, out.add(r * head.stride));
    }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn scores_block<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]) {
    let Head { kt, dim, keys, scale, mask, stride, .. } = *head;
    let vscale = _mm256_set1_ps(scale);
    let mut t = 0;
    while t < keys {
        let mut acc = [_mm256_setzero_ps(); R];
        for d in 0..dim {
            let k = _mm256_loadu_ps(kt.as_ptr().add(d * keys + t));
            for (r, a) in acc.iter_mut().enumerate() {
                *a = _mm256_fmadd_ps(_mm256_broadcast_ss(&*q.add(r * stride + d)), k, *a);
            }
        }
        let m = _mm256_loadu_ps(mask.as_ptr().add(t));
        for (r, a) in acc.iter().enumerate() {
            // (q·k) · scale, then + mask: the order of the ops this replaces.
            let s = _mm256_add_ps(_mm256_mul_ps(*a, vscale), m);
            _mm256_storeu_ps(scores.as_mut_ptr().add(r * keys + t), s);
        }
        t += 8;
    }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn context_block<const R: usize, const DV: usize>(
    head: &Head,
    p: &[f32],
    v: *const f32,
    out: *mut f32,
) {
    let Head { keys, seq, stride, .. } = *head;
    let mut acc = [[_mm256_setzero_ps(); DV]; R];
    for t in 0..seq {
        let mut vt = [_mm256_setzero_ps(); DV];
        for (j, x) in vt.iter_mut().enumerate() {
            *x = _mm256_loadu_ps(v.add(t * stride + j * 8));
        }
        for (r, a) in acc.iter_mut().enumerate() {
            let w = _mm256_set1_ps(*p.get_unchecked(r * keys + t));
            for (x, y) in a.iter_mut().zip(&vt) {
                *x = _mm256_fmadd_ps(w, *y, *x);
            }
        }
    }
    for (r, a) in acc.iter().enumerate() {
        for (j, x) in a.iter().enumerate() {
            _mm256_storeu_ps(out.add(r * stride + j * 8), *x);
        }
    }
}
