/// Softmax in place over each `row_len` row of `buf`, `row_len` a non-zero multiple of 4, with
/// AVX2 and FMA. Per row: the row max, `exp(x - max)` with the arithmetic of the per-row
/// `x86_64_fma_softmax2_f32_32n` kernel (Cody-Waite reduction, degree-5 minimax fit), summed,
/// then a multiply by `1 / sum`; a row holding a NaN comes out all NaN, as through the per-row
/// kernels. Rows go in pairs so that two exp chains overlap, and no row is copied: the per-row
/// kernels each take a row through an aligned scratch buffer, three times per row, which costs
/// more than the arithmetic on the short rows of attention (a 128-token passage of a 12-layer,
/// 12-head encoder has 18 432 rows of 128).
#[cfg(target_arch = "x86_64")]
pub fn softmax_rows_f32(buf: &mut [f32], row_len: usize) {
    debug_assert!(row_len > 0 && row_len.is_multiple_of(4));
    if row_len == 0 || !row_len.is_multiple_of(4) || !buf.len().is_multiple_of(row_len) {
        // The caller checks all three; a bad call leaves the buffer as it was.
        return;
    }
    // Registered with `isa(X86_64Avx2, X86_64Fma)`, so dispatch picks it only where both exist;
    // a direct call (it is a safe `pub fn`) checks the CPU itself (a cached load) and takes
    // the portable loop elsewhere.
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        unsafe { rows(buf, row_len) }
    } else {
        rows_portable(buf, row_len)
    }
}

/// [`softmax_rows_f32`] without AVX2: max, `exp(x - max)` summed in f32, then `1 / sum`.
#[cfg(target_arch = "x86_64")]
fn rows_portable(buf: &mut [f32], row_len: usize) {
    for row in buf.chunks_mut(row_len) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0f32;
        for x in row.iter_mut() {
            *x = (*x - max).exp();
            sum += *x;
        }
        let inv = 1.0 / sum;
        row.iter_mut().for_each(|x| *x *= inv);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rows(buf: &mut [f32], row_len: usize) {
    let num_rows = buf.len() / row_len;
    let base = buf.as_mut_ptr();
    let mut r = 0;
    unsafe {
        while r + 1 < num_rows {
            let (p0, p1) = (base.add(r * row_len), base.add((r + 1) * row_len));
            let (m0, m1) = (max_pass(p0, row_len), max_pass(p1, row_len));
            let (s0, s1) = exp_sum_pass2(p0, m0, p1, m1, row_len);
            scale_pass(p0, row_len, 1.0 / s0);
            scale_pass(p1, row_len, 1.0 / s1);
            r += 2;
        }
        if r < num_rows {
            let p = base.add(r * row_len);
            let m = max_pass(p, row_len);
            let s = exp_sum_pass1(p, m, row_len);
            scale_pass(p, row_len, 1.0 / s);
        }
    }
}

/// `exp(x)` for `x = value − row max`, never positive off NaN: the same operations, in the same
/// order, as the per-row `x86_64_fma_softmax2_f32_32n` kernel.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn exp8(x: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    unsafe {
        let k = _mm256_cvtps_epi32(_mm256_mul_ps(x, _mm256_set1_ps(1.442_695_04)));
        let kf = _mm256_cvtepi32_ps(k);
        let mut rr = _mm256_fnmadd_ps(kf, _mm256_set1_ps(0.693_145_75), x);
        rr = _mm256_fnmadd_ps(kf, _mm256_set1_ps(1.428_606_8e-6), rr);
        let mut q = _mm256_set1_ps(8.297653546e-03);
        q = _mm256_fmadd_ps(q, rr, _mm256_set1_ps(4.191538191e-02));
        q = _mm256_fmadd_ps(q, rr, _mm256_set1_ps(1.666757475e-01));
        q = _mm256_fmadd_ps(q, rr, _mm256_set1_ps(4.999889485e-01));
        q = _mm256_fmadd_ps(q, rr, _mm256_set1_ps(9.999996920e-01));
        q = _mm256_fmadd_ps(q, rr, _mm256_set1_ps(1.000000072e+00));
        let biased = _mm256_max_epi32(
            _mm256_min_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), _mm256_set1_epi32(254)),
            _mm256_set1_epi32(1),
        );
        let scale = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(biased));
        let out = _mm256_or_ps(
            _mm256_cmp_ps::<_CMP_LT_OQ>(x, _mm256_set1_ps(-103.0)),
            _mm256_cmp_ps::<_CMP_GT_OQ>(x, _mm256_set1_ps(0.0)),
        );
        _mm256_blendv_ps(_mm256_mul_ps(q, scale), _mm256_setzero_ps(), out)
    }
}

/// Loads the 8 lanes at `p`, or, at a row's 4-lane tail, those 4 and `fill` in the other 4.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn load(p: *const f32, lanes: usize, fill: f32) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    unsafe {
        if lanes == 8 {
            _mm256_loadu_ps(p)
        } else {
            _mm256_insertf128_ps::<0>(_mm256_set1_ps(fill), _mm_loadu_ps(p))
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn store(p: *mut f32, lanes: usize, v: std::arch::x86_64::__m256) {
    use std::arch::x86_64::*;
    unsafe {
        if lanes == 8 {
            _mm256_storeu_ps(p, v)
        } else {
            _mm_storeu_ps(p, _mm256_castps256_ps128(v))
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn hsum(v: std::arch::x86_64::__m256) -> f32 {
    use std::arch::x86_64::*;
    unsafe {
        let mut s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_shuffle_ps::<1>(s, s));
        _mm_cvtss_f32(s)
    }
}

/// The row's max, NaN if the row holds one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn max_pass(p: *const f32, len: usize) -> f32 {
    use std::arch::x86_64::*;
    unsafe {
        let mut a = _mm256_set1_ps(f32::NEG_INFINITY);
        let mut b = _mm256_set1_ps(f32::NEG_INFINITY);
        let mut i = 0;
        while i + 16 <= len {
            a = _mm256_max_ps(a, _mm256_loadu_ps(p.add(i)));
            b = _mm256_max_ps(b, _mm256_loadu_ps(p.add(i + 8)));
            i += 16;
        }
        while i < len {
            let lanes = (len - i).min(8);
            a = _mm256_max_ps(a, load(p.add(i), lanes, f32::NEG_INFINITY));
            i += lanes;
        }
        let mut lanes = [0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), _mm256_max_ps(a, b));
        // `_mm256_max_ps` drops a NaN in its first operand; a NaN anywhere still makes the
        // exp pass's sum NaN, so the row still comes out all NaN.
        lanes.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x))
    }
}

/// Writes `exp(x − max)` over two rows at once and returns their sums.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn exp_sum_pass2(p0: *mut f32, m0: f32, p1: *mut f32, m1: f32, len: usize) -> (f32, f32) {
    use std::arch::x86_64::*;
    unsafe {
        let (vm0, vm1) = (_mm256_set1_ps(m0), _mm256_set1_ps(m1));
        let (mut s0, mut s1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let mut i = 0;
        while i < len {
            let lanes = (len - i).min(8);
            // The tail's fill lanes hold −∞ and so add exp(−∞) = 0.
            let y0 = exp8(_mm256_sub_ps(load(p0.add(i), lanes, f32::NEG_INFINITY), vm0));
            let y1 = exp8(_mm256_sub_ps(load(p1.add(i), lanes, f32::NEG_INFINITY), vm1));
            store(p0.add(i), lanes, y0);
            store(p1.add(i), lanes, y1);
            s0 = _mm256_add_ps(s0, y0);
            s1 = _mm256_add_ps(s1, y1);
            i += lanes;
        }
        (hsum(s0), hsum(s1))
    }
}

/// Writes `exp(x − max)` over one row and returns its sum.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn exp_sum_pass1(p: *mut f32, m: f32, len: usize) -> f32 {
    use std::arch::x86_64::*;
    unsafe {
        let vm = _mm256_set1_ps(m);
        let (mut s0, mut s1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let mut i = 0;
        while i + 16 <= len {
            let y0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(p.add(i)), vm));
            let y1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(p.add(i + 8)), vm));
            _mm256_storeu_ps(p.add(i), y0);
            _mm256_storeu_ps(p.add(i + 8), y1);
            s0 = _mm256_add_ps(s0, y0);
            s1 = _mm256_add_ps(s1, y1);
            i += 16;
        }
        while i < len {
            let lanes = (len - i).min(8);
            let y = exp8(_mm256_sub_ps(load(p.add(i), lanes, f32::NEG_INFINITY), vm));
            store(p.add(i), lanes, y);
            s0 = _mm256_add_ps(s0, y);
            i += lanes;
        }
        hsum(_mm256_add_ps(s0, s1))
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn scale_pass(p: *mut f32, len: usize, by: f32) {
    use std::arch::x86_64::*;
    unsafe {
        let v = _mm256_set1_ps(by);
        let mut i = 0;
        while i < len {
            let lanes = (len - i).min(8);
            store(p.add(i), lanes, _mm256_mul_ps(load(p.add(i), lanes, 0.0), v));
            i += lanes;
        }
    }
}

bail_stub!(x86_64; pub fn softmax_rows_f32(&mut [f32], usize));

submit_routine!(x86_64; SoftmaxRowsF32, SoftmaxRows, "x86_64_fma_softmax_rows_f32", softmax_rows_f32,
    isa(X86_64Avx2, X86_64Fma));

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::routines::Func;

    fn has_fma() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }

    /// The loop a CPU without AVX2 gets from a direct call agrees with the AVX2 rows.
    #[test]
    fn softmax_rows_portable_fallback_agrees() {
        let row_len = 12;
        let input: Vec<f32> = (0..row_len * 5).map(|i| ((i * 7919) % 23) as f32 * 0.37 - 4.0).collect();
        let mut portable = input.clone();
        rows_portable(&mut portable, row_len);
        for row in portable.chunks(row_len) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        if has_fma() {
            let mut fast = input.clone();
            softmax_rows_f32(&mut fast, row_len);
            for (a, b) in portable.iter().zip(&fast) {
                assert!((a - b).abs() < 1e-6, "{a} vs {b}");
            }
        }
    }

    /// The per-row kernels the softmax op runs without this one.
    fn per_row(buf: &mut [f32], row_len: usize) {
        let max = Func::ReduceMax.reduce_f32().unwrap();
        let exp_sum = Func::Softmax2.map_reduce_f32().unwrap();
        let scale = Func::MulByScalar.ew_f32_param().unwrap();
        for row in buf.chunks_mut(row_len) {
            let m = max.run(row).unwrap();
            let s = exp_sum.run_with_params(row, m).unwrap();
            scale.run_with_params(row, s.recip()).unwrap();
        }
    }

    /// Same exp, summed in another order: within a few ulps of the per-row kernels, and within
    /// 1e-6 of softmax computed in f64.
    #[test]
    fn matches_the_per_row_kernels_and_f64() {
        if !has_fma() {
            return;
        }
        for row_len in (4..=132).step_by(4) {
            for rows in [1usize, 2, 3, 5, 8, 17] {
                let base: Vec<f32> =
                    (0..rows * row_len).map(|i| ((i as f32) * 0.37).sin() * 9.0).collect();
                let mut want = base.clone();
                per_row(&mut want, row_len);
                let mut got = base.clone();
                softmax_rows_f32(&mut got, row_len);
                for (r, row) in base.chunks(row_len).enumerate() {
                    let m = row.iter().fold(f64::MIN, |m, &x| m.max(x as f64));
                    let s: f64 = row.iter().map(|&x| (x as f64 - m).exp()).sum();
                    for (i, &x) in row.iter().enumerate() {
                        let exact = (x as f64 - m).exp() / s;
                        let (g, w) = (got[r * row_len + i], want[r * row_len + i]);
                        assert!(
                            (g as f64 - exact).abs() <= 1e-6 && (g - w).abs() <= 4.0 * f32::EPSILON * w.max(1e-30),
                            "rows={rows} row_len={row_len} at ({r}, {i}): {g} vs per-row {w}, f64 {exact}"
                        );
                    }
                }
            }
        }
    }

    /// A NaN row comes out all NaN; a row of −∞ and an infinite logit come out as through the
    /// per-row kernels.
    #[test]
    fn edge_rows_match_the_per_row_kernels() {
        if !has_fma() {
            return;
        }
        let row_len = 12;
        let mut base: Vec<f32> = (0..4 * row_len).map(|i| (i as f32 * 0.21).cos()).collect();
        base[3] = f32::NAN;
        base[row_len..2 * row_len].fill(f32::NEG_INFINITY);
        base[2 * row_len + 5] = f32::INFINITY;
        let mut want = base.clone();
        per_row(&mut want, row_len);
        let mut got = base.clone();
        softmax_rows_f32(&mut got, row_len);
        assert!(got[..row_len].iter().all(|x| x.is_nan()));
        for r in 1..4 {
            let (g, w) = (&got[r * row_len..][..row_len], &want[r * row_len..][..row_len]);
            assert!(
                g.iter()
                    .zip(w)
                    .all(|(g, w)| (g - w).abs() <= 4.0 * f32::EPSILON || g.is_nan() && w.is_nan()),
                "row {r}: {g:?} vs {w:?}"
            );
        }
    }

    #[test]
    fn registered_as_this_hosts_row_softmax() {
        assert_eq!(crate::routines::softmax_rows_f32().is_some(), has_fma());
    }
}
