//! Multi-head self-attention as one operator, put in place of the four ops tract's ONNX import
//! leaves for it where there is a vector path (AVX-512, AVX2 + FMA, wasm simd128).
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
use tract_onnx::tract_core::ops::einsum::EinSum;
use tract_onnx::tract_core::ops::math::Mul;

use super::fuse::{bin_op, const_and_other, only_successor, MaskedSoftmax};

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
        run(&io, &mut out);
        Ok(tvec!(Tensor::from_shape(&shape, &out)?.into_tvalue()))
    }
}

/// Which of [`Attention`]'s paths ran, and how often (in this process): each eval counts
/// itself, so a test can tell a vector path ran where the CPU has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Portable Rust.
    Portable = 0,
    /// AVX2 and FMA.
    Avx2 = 1,
    /// AVX-512F.
    Avx512 = 2,
    /// wasm simd128.
    Simd128 = 3,
}

static RUNS: [std::sync::atomic::AtomicU64; 4] =
    [const { std::sync::atomic::AtomicU64::new(0) }; 4];

/// How many times `path` ran in this process.
pub fn runs(path: Path) -> u64 {
    RUNS[path as usize].load(std::sync::atomic::Ordering::Relaxed)
}

/// The path an eval of `io` takes: the best the CPU has and `MNEMO_ISA` allows (`crate::isa`)
/// for this head size.
fn path_for(io: &Io) -> Path {
    #[cfg(target_arch = "x86_64")]
    if avx512::fits(io) {
        return Path::Avx512;
    }
    #[cfg(target_arch = "x86_64")]
    if avx2::fits(io) {
        return Path::Avx2;
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if simd128::fits(io) {
        return Path::Simd128;
    }
    let _ = io;
    Path::Portable
}

/// Runs `io` on its path ([`path_for`]) into `out`, counting the run.
fn run(io: &Io, out: &mut [f32]) {
    let path = path_for(io);
    RUNS[path as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    match path {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `path_for` chose it: the CPU has AVX-512F, and the head size fits.
        Path::Avx512 => unsafe { drive::<avx512::Avx512>(io, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `path_for` chose it: the CPU has AVX2 and FMA, and the head size fits.
        Path::Avx2 => unsafe { drive::<avx2::Avx2>(io, out) },
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        // SAFETY: simd128 is part of this build; `path_for` checked the head size.
        Path::Simd128 => unsafe { drive::<simd128::Simd128>(io, out) },
        _ => eval_portable(io, out),
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

/// Whether this host has a vector path for [`Attention`]: x86_64 with AVX-512F or with AVX2
/// and FMA, or wasm built with simd128.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::isa::avx512f() || avx2::supported()
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
#[cfg_attr(
    not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))),
    allow(dead_code)
)]
struct Head<'a> {
    /// Kᵀ, `dim × keys`, zero past `seq`.
    kt: &'a [f32],
    dim: usize,
    /// `seq` rounded up to the vector width.
    keys: usize,
    seq: usize,
    scale: f32,
    /// The batch's mask row, `keys` long (−∞ past `seq`, so padded keys score −∞).
    mask: &'a [f32],
    /// Elements from one token's row of q, v or the output to the next.
    stride: usize,
}

/// Query rows per block: 8 rows × one vector of keys of scores in registers at once.
#[cfg_attr(
    not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))),
    allow(dead_code)
)]
const ROWS: usize = 8;

/// The three steps over a block of query rows, in one instruction set.
#[cfg_attr(
    not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))),
    allow(dead_code)
)]
trait Blocks {
    /// Floats per vector: score rows are padded to a multiple.
    const LANES: usize;
    /// `scores[r, t] = scale · Σ_d q[r, d] · Kᵀ[d, t] + mask[t]` for `R` rows of `q` (`stride`
    /// apart; score rows `keys` apart) and every `t < keys`.
    unsafe fn scores<const R: usize>(head: &Head, q: *const f32, scores: &mut [f32]);
    /// Softmax in place over the first `rows` rows of `scores` (`keys` apart), each over its
    /// first `seq` entries; entries `seq..keys` hold −∞ and may be included.
    unsafe fn softmax(scores: &mut [f32], rows: usize, keys: usize, seq: usize);
    /// `out[r, ·] = Σ_t p[r, t] · v[t, ·]` for `rows ≤ ROWS` rows of probabilities (`keys`
    /// apart in `p`), `v` and `out` rows `stride` apart.
    unsafe fn context(head: &Head, rows: usize, p: &[f32], v: *const f32, out: *mut f32);
}

/// Every batch and head through `B`'s blocks: the head's keys transposed once, then blocks of
/// [`ROWS`] query rows.
///
/// # Safety
/// `B`'s instructions must exist on this CPU and `B` must take `io`'s head size.
#[cfg_attr(
    not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))),
    allow(dead_code)
)]
unsafe fn drive<B: Blocks>(io: &Io, out: &mut [f32]) {
    let [batch, seq, heads, dim] = io.shape;
    if seq == 0 {
        return;
    }
    let keys = seq.next_multiple_of(B::LANES);
    let mut kt = vec![0f32; dim * keys];
    let mut scores = vec![0f32; ROWS * keys];
    let stride = heads * dim;
    let mut mask = vec![f32::NEG_INFINITY; keys];
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
                B::softmax(&mut scores, rows, keys, seq);
                B::context(&head, rows, &scores, v, o.add(i * stride));
                i += rows;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;

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
    let Some(mul) = bin_op::<Mul>(model, node.inputs[0]) else { return Ok(None) };
    if only_successor(model, mul.id).map(|n| n.id) != Some(id) {
        return Ok(None);
    }
    let Some((scale, scores)) = const_and_other(model, mul).filter(|(k, _)| k.len() == 1) else {
        return Ok(None);
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
        return Ok(None); // the vector paths' head sizes; others stay with tract
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

    /// The op's own counter says which path ran: the best this CPU has and `MNEMO_ISA`
    /// allows (tools/test runs this module under each level).
    #[test]
    fn the_op_runs_the_best_path_the_cpu_and_the_switch_allow() {
        let want = if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
            Path::Simd128
        } else if cfg!(target_arch = "x86_64") && avx512_allowed() {
            Path::Avx512
        } else if cfg!(target_arch = "x86_64") && avx2_allowed() {
            Path::Avx2
        } else {
            Path::Portable
        };
        let before = runs(want);
        check(1, 32, 3, 32, &[0]);
        assert!(runs(want) > before, "{want:?} did not run (MNEMO_ISA={:?})", crate::isa::cap());
        if let Ok(level) = std::env::var("MNEMO_ISA") {
            // Under a cap the higher paths never run, whatever the CPU has.
            let level = crate::isa::Level::parse(&level).unwrap();
            if level < crate::isa::Level::Avx512 {
                assert_ne!(want, Path::Avx512);
            }
            if level < crate::isa::Level::Avx2 {
                assert!(matches!(want, Path::Portable | Path::Simd128));
            }
        }
    }

    fn avx512_allowed() -> bool {
        #[cfg(target_arch = "x86_64")]
        return crate::isa::avx512f();
        #[allow(unreachable_code)]
        false
    }

    fn avx2_allowed() -> bool {
        #[cfg(target_arch = "x86_64")]
        return avx2::supported();
        #[allow(unreachable_code)]
        false
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

    /// Each vector path this host has against the portable one, on a shape with padding and
    /// tails of rows and keys.
    #[test]
    fn the_vector_paths_agree_with_the_portable_one() {
        for shape in [[2, 37, 3, 32], [1, 13, 2, 16]] {
            let n = shape.iter().product();
            let (q, k, v) = (values(n, 0.4), values(n, 2.1), values(n, 5.0));
            let seq = shape[1];
            let mut mask = vec![0f32; 2 * seq];
            mask[seq + seq - 5..].iter_mut().for_each(|m| *m = -10000.0);
            let io = Io { q: &q, k: &k, v: &v, mask: &mask, mask_stride: seq, shape, scale: 0.17 };
            let mut portable = vec![0f32; n];
            eval_portable(&io, &mut portable);
            let mut paths: Vec<(&str, Vec<f32>)> = Vec::new();
            #[cfg(target_arch = "x86_64")]
            {
                if avx512::fits(&io) {
                    let mut out = vec![0f32; n];
                    unsafe { drive::<avx512::Avx512>(&io, &mut out) };
                    paths.push(("avx512", out));
                }
                if avx2::fits(&io) {
                    let mut out = vec![0f32; n];
                    unsafe { drive::<avx2::Avx2>(&io, &mut out) };
                    paths.push(("avx2", out));
                }
            }
            #[cfg(target_arch = "x86_64")]
            if crate::isa::avx2_fma() {
                assert!(paths.iter().any(|(name, _)| *name == "avx2"), "the AVX2 path ran");
            }
            for (name, out) in paths {
                for (i, (a, b)) in portable.iter().zip(&out).enumerate() {
                    assert!((a - b).abs() < 1e-5, "{name} {shape:?} [{i}]: {a} vs {b}");
                }
            }
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

    #[test]
    fn axes_are_compared_whatever_their_letters() {
        let op = EinSum::new("bshd,bthd->bhst".parse().unwrap(), f32::datum_type());
        assert_eq!(canonical_axes(&op), "abcd,aecd->acbe");
        let op = EinSum::new("xyzw,xwyv->xzyv".parse().unwrap(), f32::datum_type());
        assert_eq!(canonical_axes(&op), "abcd,adbe->acbe");
    }
}
