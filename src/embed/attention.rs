//! Multi-head self-attention as one operator, for x86_64 with AVX-512, put in place of the
//! four ops tract's ONNX import leaves for it.
//!
//! After decluttering (and [`super::fuse`]), one attention block of a BERT-family encoder is
//! `EinSum(Q, K)` (scores `[B, H, S, S]` from `Q`, `K` as `[B, S, H, D]`), `Mul` by the scale
//! 1/√D, [`MaskedSoftmax`] with the `[B, 1, 1, S]` padding mask, and `EinSum(P, V)` (context
//! `[B, S, H, D]`). tract runs each einsum as a batch of `B·H` small matrix products, packing
//! both operands of each one first, and moves axes between them; for a 128-token passage of the
//! default model that is ~12% of the time for ~5% of the arithmetic. [`Attention`] computes
//! the same per head, with the head's keys transposed once (`Kᵀ`, `D × S`) and everything else
//! read where it lies:
//!
//! ```text
//! for each batch b, head h, block of 8 query rows i:
//!     s[i, t] = scale · Σ_d Q[b, i, h, d] · Kᵀ[d, t] + mask[b, t]     16 keys per vector
//!     p[i, ·] = softmax(s[i, ·])                                      exp as tract's row softmax
//!     out[b, i, h, ·] = Σ_t p[i, t] · V[b, t, h, ·]                   D/16 vectors per row
//! ```
//!
//! The op is put in only at load, and only where it has a vector path ([`available`]): x86_64
//! with AVX-512F, and wasm built with simd128 (4 lanes, no fused multiply-add: there it runs
//! at the speed of tract's own kernels on these shapes, and batches of 16 gain a few percent
//! from the packs and axis moves it skips). Compiled NNEF archives never hold it, and other
//! hosts keep tract's path. Its portable evaluation (`eval_portable`) is what the vector paths
//! are tested against natively; in wasm the reference embeddings test it (`tests/js`).

use tract_nnef::internal::*;
use tract_onnx::tract_core::ops::binary::TypedBinOp;
use tract_onnx::tract_core::ops::einsum::EinSum;
use tract_onnx::tract_core::ops::math::Mul;

use super::fuse::MaskedSoftmax;

/// `softmax(scale · Q·Kᵀ + mask) · V` per batch and head.
///
/// Inputs: `q`, `k`, `v` (f32 `[B, S, H, D]`, the same shape) and `mask` (f32 `[B or 1, 1, 1,
/// S]`, added to every score row of its batch). Output: f32 `[B, S, H, D]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attention {
    /// Multiplies `Q·Kᵀ` before the mask is added (1/√D in BERT).
    pub scale: f32,
}

impl Eq for Attention {}

impl Op for Attention {
    fn name(&self) -> StaticName {
        "MnemoAttention".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!("scale: {}", self.scale)])
    }

    op_as_typed_op!();
}

impl EvalOp for Attention {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (q, k, v, mask) = args_4!(inputs);
        let shape: TVec<usize> = q.shape().into();
        ensure!(shape.len() == 4, "attention takes [batch, seq, heads, head dim] inputs");
        ensure!(k.shape() == &*shape && v.shape() == &*shape, "q, k and v must have one shape");
        let (batch, seq) = (shape[0], shape[1]);
        let m = mask.shape();
        ensure!(
            m.len() == 4 && (m[0] == batch || m[0] == 1) && m[1] == 1 && m[2] == 1 && m[3] == seq,
            "the mask must be [batch or 1, 1, 1, seq], is {m:?}"
        );
        let mask_stride = if m[0] == 1 { 0 } else { seq };
        let (q, k, v, mask) = (
            q.try_as_plain_ram()?,
            k.try_as_plain_ram()?,
            v.try_as_plain_ram()?,
            mask.try_as_plain_ram()?,
        );
        let io = Io {
            q: q.as_slice::<f32>()?,
            k: k.as_slice::<f32>()?,
            v: v.as_slice::<f32>()?,
            mask: mask.as_slice::<f32>()?,
            mask_stride,
            shape: [shape[0], shape[1], shape[2], shape[3]],
            scale: self.scale,
        };
        let mut out = vec![0f32; shape.iter().product()];
        #[cfg(target_arch = "x86_64")]
        if avx512::fits(&io) {
            // SAFETY: `fits` checked the CPU has AVX-512F and the head size.
            unsafe { drive::<avx512::Avx512>(&io, &mut out) };
            return Ok(tvec!(Tensor::from_shape(&shape, &out)?.into_tvalue()));
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if simd128::fits(&io) {
            // SAFETY: simd128 is part of this build; `fits` checked the head size.
            unsafe { drive::<simd128::Simd128>(&io, &mut out) };
            return Ok(tvec!(Tensor::from_shape(&shape, &out)?.into_tvalue()));
        }
        eval_portable(&io, &mut out);
        Ok(tvec!(Tensor::from_shape(&shape, &out)?.into_tvalue()))
    }
}

impl TypedOp for Attention {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(inputs[0].datum_type == f32::datum_type(), "MnemoAttention runs on f32");
        Ok(tvec!(inputs[0].without_value()))
    }

    as_op!();
}

/// The op's inputs as slices, `[batch, seq, heads, head dim]`.
struct Io<'a> {
    q: &'a [f32],
    k: &'a [f32],
    v: &'a [f32],
    mask: &'a [f32],
    /// Elements from one batch's mask row to the next (0: one row for all).
    mask_stride: usize,
    shape: [usize; 4],
    scale: f32,
}

impl Io<'_> {
    /// Offset of row `i` of batch `b`, head `h`, in `q`, `k`, `v` and the output.
    fn at(&self, b: usize, i: usize, h: usize) -> usize {
        let [_, s, hs, d] = self.shape;
        ((b * s + i) * hs + h) * d
    }
}

/// The reference evaluation, plain loops in f32 (any host, any head size).
fn eval_portable(io: &Io, out: &mut [f32]) {
    let [batch, seq, heads, dim] = io.shape;
    let mut row = vec![0f32; seq];
    for b in 0..batch {
        let mask = &io.mask[b * io.mask_stride..][..seq];
        for h in 0..heads {
            for i in 0..seq {
                let q = &io.q[io.at(b, i, h)..][..dim];
                for (t, s) in row.iter_mut().enumerate() {
                    let k = &io.k[io.at(b, t, h)..][..dim];
                    let dot: f32 = q.iter().zip(k).map(|(a, b)| a * b).sum();
                    *s = dot * io.scale + mask[t];
                }
                let max = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let mut sum = 0.0;
                for s in row.iter_mut() {
                    *s = (*s - max).exp();
                    sum += *s;
                }
                let o = &mut out[io.at(b, i, h)..][..dim];
                o.iter_mut().for_each(|x| *x = 0.0);
                for (t, p) in row.iter().enumerate() {
                    let v = &io.v[io.at(b, t, h)..][..dim];
                    o.iter_mut().zip(v).for_each(|(x, v)| *x += p / sum * v);
                }
            }
        }
    }
}

/// Whether this host runs [`Attention`] faster than tract's own ops: x86_64 with AVX-512F, or
/// wasm built with simd128.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        true
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        false
    }
}

/// One head's keys and what the blocks over its query rows share.
struct Head<'a> {
    /// Kᵀ, `dim × keys`, zero past `seq`.
    kt: &'a [f32],
    dim: usize,
    /// `seq` rounded up to the vector width.
    keys: usize,
    seq: usize,
    scale: f32,
    /// The batch's mask row, `keys` long (0 past `seq`).
    mask: &'a [f32],
    /// Elements from one token's row of q, v or the output to the next.
    stride: usize,
}

/// Query rows per block: 8 rows × one vector of keys of scores in registers at once.
const ROWS: usize = 8;

/// The three steps over a block of query rows, in one instruction set.
trait Blocks {
    /// Floats per vector: score rows are padded to a multiple.
    const LANES: usize;
    /// `scores[r, t] = scale · Σ_d q[r, d] · Kᵀ[d, t] + mask[t]` for `R` rows of `q` (`stride`
    /// apart; score rows `keys` apart) and every `t < keys`.
    unsafe fn scores<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]);
    /// Softmax in place.
    unsafe fn softmax(row: &mut [f32]);
    /// `out[r, ·] = Σ_t p[r, t] · v[t, ·]` for `rows ≤ ROWS` rows of probabilities (`keys`
    /// apart in `p`), `v` and `out` rows `stride` apart.
    unsafe fn context(head: &Head, rows: usize, p: &[f32], v: *const f32, out: *mut f32);
}

/// Every batch and head through `B`'s blocks: the head's keys transposed once, then blocks of
/// [`ROWS`] query rows.
///
/// # Safety
/// `B`'s instructions must exist on this CPU and `B` must take `io`'s head size.
unsafe fn drive<B: Blocks>(io: &Io, out: &mut [f32]) {
    let [batch, seq, heads, dim] = io.shape;
    if seq == 0 {
        return;
    }
    let keys = seq.next_multiple_of(B::LANES);
    let mut kt = vec![0f32; dim * keys];
    let mut scores = vec![0f32; ROWS * keys];
    let stride = heads * dim;
    let mut mask = vec![0f32; keys];
    for b in 0..batch {
        mask[..seq].copy_from_slice(&io.mask[b * io.mask_stride..][..seq]);
        for h in 0..heads {
            for t in 0..seq {
                let k = &io.k[io.at(b, t, h)..][..dim];
                for (d, &x) in k.iter().enumerate() {
                    kt[d * keys + t] = x;
                }
            }
            let q = io.q[io.at(b, 0, h)..].as_ptr();
            let v = io.v[io.at(b, 0, h)..].as_ptr();
            let o = out[io.at(b, 0, h)..].as_mut_ptr();
            let head = Head { kt: &kt, dim, keys, seq, scale: io.scale, mask: &mask, stride };
            let mut i = 0;
            while i < seq {
                let rows = (seq - i).min(ROWS);
                let qi = q.add(i * stride);
                if rows == ROWS {
                    B::scores::<ROWS>(&head, qi, &mut scores);
                } else {
                    for r in 0..rows {
                        B::scores::<1>(&head, qi.add(r * stride), &mut scores[r * keys..]);
                    }
                }
                for r in 0..rows {
                    B::softmax(&mut scores[r * keys..][..seq]);
                }
                B::context(&head, rows, &scores, v, o.add(i * stride));
                i += rows;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Blocks, Head, Io, ROWS};
    use std::arch::x86_64::*;

    /// Head sizes this path takes (`D` a multiple of 16, up to 32 so that 8 rows of context fit
    /// the registers), where the CPU has AVX-512F.
    pub(super) fn fits(io: &Io) -> bool {
        let d = io.shape[3];
        (d == 16 || d == 32) && super::available()
    }

    pub(super) struct Avx512;

    impl Blocks for Avx512 {
        const LANES: usize = 16;

        unsafe fn scores<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]) {
            scores_block::<R>(head, q, scores)
        }

        unsafe fn softmax(row: &mut [f32]) {
            softmax_row(row)
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
            _mm512_mask_storeu_ps(
                p.add(i),
                k,
                _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p.add(i)), by),
            );
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
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
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

        unsafe fn softmax(row: &mut [f32]) {
            softmax_row(row)
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
        for c in
            [4.191538191e-02, 1.666757475e-01, 4.999889485e-01, 9.999996920e-01, 1.000000072e+00]
        {
            q = f32x4_add(f32x4_mul(q, rr), f32x4_splat(c));
        }
        let biased =
            i32x4_max(i32x4_min(i32x4_add(k, i32x4_splat(127)), i32x4_splat(254)), i32x4_splat(1));
        let scale = i32x4_shl(biased, 23);
        v128_andnot(f32x4_mul(q, scale), f32x4_lt(x, f32x4_splat(-103.0)))
    }
}

/// Puts [`Attention`] in place of each `EinSum(Mul(MaskedSoftmax(EinSum(Q, K) · scale, mask)),
/// V)` chain whose intermediates are used once; returns how many. Run it on a decluttered,
/// fused ([`super::fuse::fuse`]) model, only where [`available`].
pub fn fuse_attention(model: &mut TypedModel) -> TractResult<usize> {
    let mut fused = 0;
    for id in model.eval_order()? {
        if let Some(patch) = attention_patch(model, id)? {
            patch.apply(model)?;
            fused += 1;
        }
    }
    if fused > 0 {
        model.compact()?;
    }
    Ok(fused)
}

/// An einsum's axes with its letters renamed in order of first appearance (`bshd,bthd->bhst`
/// and `abcd,aecd->acbe` read the same).
fn canonical_axes(op: &EinSum) -> String {
    let text = op.axes.to_string();
    let mut seen: Vec<char> = Vec::new();
    text.chars()
        .map(|c| {
            if !c.is_alphabetic() {
                return c;
            }
            let ix = seen.iter().position(|&s| s == c).unwrap_or_else(|| {
                seen.push(c);
                seen.len() - 1
            });
            (b'a' + ix as u8) as char
        })
        .collect()
}

/// The node's only consumer, when it has exactly one output used exactly once.
fn only_successor(model: &TypedModel, id: usize) -> Option<&TypedNode> {
    let node = model.node(id);
    (node.outputs.len() == 1 && node.outputs[0].successors.len() == 1)
        .then(|| model.node(node.outputs[0].successors[0].node))
}

/// A plain f32 einsum of two inputs with the given canonical axes.
fn einsum<'a>(model: &'a TypedModel, id: usize, axes: &str) -> Option<&'a TypedNode> {
    let node = model.node(id);
    let op = node.op_as::<EinSum>()?;
    (op.q_params.is_none()
        && op.operating_dt == f32::datum_type()
        && node.inputs.len() == 2
        && canonical_axes(op) == axes)
        .then_some(node)
}

/// The chain anchored on its [`MaskedSoftmax`].
fn attention_patch(model: &TypedModel, id: usize) -> TractResult<Option<TypedModelPatch>> {
    let node = model.node(id);
    if !node.op_is::<MaskedSoftmax>() {
        return Ok(None);
    }
    // scores · scale, the scale a scalar constant
    let mul = model.node(node.inputs[0].node);
    if !mul.op_as::<TypedBinOp>().is_some_and(|op| op.0.is::<Mul>())
        || only_successor(model, mul.id).map(|n| n.id) != Some(id)
    {
        return Ok(None);
    }
    let facts = model.node_input_facts(mul.id)?;
    let (scale, scores) = match (&facts[0].konst, &facts[1].konst) {
        (None, Some(k)) if k.len() == 1 => (k.clone(), mul.inputs[0]),
        (Some(k), None) if k.len() == 1 => (k.clone(), mul.inputs[1]),
        _ => return Ok(None),
    };
    let scale = scale.cast_to_scalar::<f32>()?;
    // [B, S, H, D] × [B, T, H, D] -> [B, H, S, T]
    let Some(qk) = einsum(model, scores.node, "abcd,aecd->acbe") else { return Ok(None) };
    if only_successor(model, qk.id).map(|n| n.id) != Some(mul.id) {
        return Ok(None);
    }
    // [B, H, S, T] × [B, T, H, D] -> [B, S, H, D]
    let Some(pv) = only_successor(model, id) else { return Ok(None) };
    let Some(pv) = einsum(model, pv.id, "abcd,adbe->acbe") else { return Ok(None) };
    if pv.inputs[0] != OutletId::new(id, 0) {
        return Ok(None);
    }
    let (q, k, v, mask) = (qk.inputs[0], qk.inputs[1], pv.inputs[1], node.inputs[1]);
    let (qf, kf, vf, mf) = (
        model.outlet_fact(q)?,
        model.outlet_fact(k)?,
        model.outlet_fact(v)?,
        model.outlet_fact(mask)?,
    );
    let f32s = [qf, kf, vf, mf].iter().all(|f| f.datum_type == f32::datum_type());
    let shape = &qf.shape;
    let head = shape.get(3).and_then(|d| d.as_i64());
    let mask_ok = mf.rank() == 4
        && (mf.shape[0] == shape[0] || mf.shape[0].is_one())
        && mf.shape[1].is_one()
        && mf.shape[2].is_one()
        && mf.shape[3] == shape[1];
    if !f32s || shape.rank() != 4 || kf.shape != *shape || vf.shape != *shape || !mask_ok {
        return Ok(None);
    }
    if !matches!(head, Some(16) | Some(32)) {
        return Ok(None); // the AVX-512 path's head sizes; others stay with tract
    }
    let mut patch = TypedModelPatch::default();
    let inputs = patch.taps(model, &[q, k, v, mask])?;
    let out = patch.wire_node(format!("{}.attention", node.name), Attention { scale }, &inputs)?;
    patch.shunt_outside(model, pv.id.into(), out[0])?;
    Ok(Some(patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: f32) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * 0.37 + seed).sin() * 2.0).collect()
    }

    /// The op on `[batch, seq, heads, dim]` inputs against the formula in f64, where `pad[b]`
    /// keys at the end of batch `b` are masked out.
    fn check(batch: usize, seq: usize, heads: usize, dim: usize, pad: &[usize]) {
        let shape = [batch, seq, heads, dim];
        let n = shape.iter().product();
        let (q, k, v) = (values(n, 0.1), values(n, 1.7), values(n, 3.3));
        let mut mask = vec![0f32; batch * seq];
        for (b, &p) in pad.iter().enumerate() {
            mask[b * seq + seq - p..(b + 1) * seq].iter_mut().for_each(|m| *m = -10000.0);
        }
        let scale = 1.0 / (dim as f32).sqrt();
        let t = |x: &[f32], s: &[usize]| Tensor::from_shape(s, x).unwrap().into_tvalue();
        let inputs =
            tvec![t(&q, &shape), t(&k, &shape), t(&v, &shape), t(&mask, &[batch, 1, 1, seq])];
        let got = Attention { scale }.eval(&EvalContext::out_of_plan(), inputs).unwrap().remove(0);
        let got = got.try_as_plain_ram().unwrap();
        let got = got.as_slice::<f32>().unwrap();
        let at = |b: usize, i: usize, h: usize| ((b * seq + i) * heads + h) * dim;
        for b in 0..batch {
            for h in 0..heads {
                for i in 0..seq {
                    let s: Vec<f64> = (0..seq)
                        .map(|t| {
                            let dot: f64 = (0..dim)
                                .map(|d| q[at(b, i, h) + d] as f64 * k[at(b, t, h) + d] as f64)
                                .sum();
                            dot * scale as f64 + mask[b * seq + t] as f64
                        })
                        .collect();
                    let max = s.iter().cloned().fold(f64::MIN, f64::max);
                    let total: f64 = s.iter().map(|x| (x - max).exp()).sum();
                    for d in 0..dim {
                        let want: f64 = (0..seq)
                            .map(|t| (s[t] - max).exp() / total * v[at(b, t, h) + d] as f64)
                            .sum();
                        let have = got[at(b, i, h) + d] as f64;
                        assert!(
                            (want - have).abs() < 2e-5,
                            "{shape:?} b{b} h{h} i{i} d{d}: {have} vs {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn matches_the_formula_with_and_without_padding() {
        // Full blocks of 8 rows and 16 keys, and tails of both; head sizes 32, 16 and 24 (the
        // last through the portable path everywhere).
        check(1, 32, 3, 32, &[0]);
        check(2, 21, 2, 32, &[0, 5]);
        check(2, 7, 2, 16, &[2, 0]);
        check(1, 19, 2, 24, &[3]);
        check(3, 1, 1, 32, &[0, 0, 0]);
    }

    #[test]
    fn the_portable_path_agrees_with_the_simd_one() {
        let shape = [2, 37, 3, 32];
        let n = shape.iter().product();
        let (q, k, v) = (values(n, 0.4), values(n, 2.1), values(n, 5.0));
        let mut mask = vec![0f32; 2 * 37];
        mask[37 + 30..].iter_mut().for_each(|m| *m = -10000.0);
        let io = Io { q: &q, k: &k, v: &v, mask: &mask, mask_stride: 37, shape, scale: 0.17 };
        let mut portable = vec![0f32; n];
        eval_portable(&io, &mut portable);
        let mut out = vec![0f32; n];
        let inputs = tvec![
            Tensor::from_shape(&shape, &q).unwrap().into_tvalue(),
            Tensor::from_shape(&shape, &k).unwrap().into_tvalue(),
            Tensor::from_shape(&shape, &v).unwrap().into_tvalue(),
            Tensor::from_shape(&[2, 1, 1, 37], &mask).unwrap().into_tvalue(),
        ];
        let got =
            Attention { scale: 0.17 }.eval(&EvalContext::out_of_plan(), inputs).unwrap().remove(0);
        out.copy_from_slice(got.try_as_plain_ram().unwrap().as_slice::<f32>().unwrap());
        for (a, b) in portable.iter().zip(&out) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }

    #[test]
    fn bad_shapes_are_errors() {
        let t = |s: &[usize]| Tensor::zero::<f32>(s).unwrap().into_tvalue();
        let op = Attention { scale: 1.0 };
        assert!(op
            .eval(
                &EvalContext::out_of_plan(),
                tvec![t(&[1, 4, 2, 8]), t(&[1, 4, 2, 8]), t(&[1, 4, 2, 8])]
            )
            .is_err());
        let mismatched =
            tvec![t(&[1, 4, 2, 8]), t(&[1, 5, 2, 8]), t(&[1, 4, 2, 8]), t(&[1, 1, 1, 4])];
        assert!(op.eval(&EvalContext::out_of_plan(), mismatched).is_err());
        let bad_mask =
            tvec![t(&[1, 4, 2, 8]), t(&[1, 4, 2, 8]), t(&[1, 4, 2, 8]), t(&[1, 1, 4, 4])];
        assert!(op.eval(&EvalContext::out_of_plan(), bad_mask).is_err());
    }

    /// The pattern is found in each of the default model's 12 layers, and the model still runs
    /// with it on any host (the portable path where there is no AVX-512).
    #[cfg(feature = "model")]
    #[test]
    fn every_layer_of_the_default_model_fuses() {
        let dir = super::super::test_model_dir();
        let onnx = std::fs::read(dir.join("model.onnx")).unwrap();
        let (mut model, ..) = super::super::bert::decluttered_onnx(&onnx, &mut |_| {}).unwrap();
        assert_eq!(fuse_attention(&mut model).unwrap(), 12);
        assert!(!model.nodes.iter().any(|n| n.op_is::<MaskedSoftmax>()));
        assert_eq!(super::super::fuse::count(&model), (25, 12));
    }

    #[test]
    fn axes_are_compared_whatever_their_letters() {
        let op = EinSum::new("bshd,bthd->bhst".parse().unwrap(), f32::datum_type());
        assert_eq!(canonical_axes(&op), "abcd,aecd->acbe");
        let op = EinSum::new("xyzw,xwyv->xzyv".parse().unwrap(), f32::datum_type());
        assert_eq!(canonical_axes(&op), "abcd,adbe->acbe");
    }
}
