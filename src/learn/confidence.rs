//! Confidence bands and the two statistics the learning loop relies on.
//!
//! **Bands**, checked from the top, the first that holds wins:
//!
//! | confidence | occurrences | consistency | other |
//! |---|---|---|---|
//! | very-high | ≥ 8 | > 90 % | no contradictions |
//! | high | ≥ 5 | > 80 % | |
//! | medium | ≥ 4 | ≥ 70 % | |
//! | low | ≥ 3 | any | |
//!
//! The original table writes medium as "4–5 occurrences, 70–80 %"; its bands overlap, and a pattern
//! with 6 occurrences at 75 % or 4 at 85 % is at least as strong as one with 4 at 75 %, so
//! the ranges are read as floors. Fewer than 3 occurrences is never an observation.
//!
//! **Contrast** ([`fisher_greater`]): a pattern under a condition ("when segment is
//! technical") must happen significantly more often where the condition holds than where it
//! does not — the one-sided Fisher exact test, p < [`CONTRAST_P`]. Without it, some subset of
//! a habit that holds 60 % of the time would hold 5 times out of 5 by chance.
//!
//! **Wilson bound** ([`wilson`]): the score interval of a proportion, used by outcome
//! tracking to say that an entry precedes failures more often than the namespace's base rate
//! with enough support.

pub use crate::record::confidence::Confidence;

/// Significance a conditional pattern's contrast must reach.
pub const CONTRAST_P: f64 = 0.01;

/// One-sided Fisher exact test: the probability, with the margins fixed, of seeing at least
/// `a` occurrences among the `a + b` opportunities inside the condition, when outside it
/// there were `c` occurrences and `d` non-occurrences. Small means the behaviour is
/// concentrated where the condition holds. Computed with products of ratios only (no
/// logarithms), so every platform gets the same bits.
pub fn fisher_greater(a: u32, b: u32, c: u32, d: u32) -> f64 {
    let (a, b, c, d) = (f64::from(a), f64::from(b), f64::from(c), f64::from(d));
    let (row1, col1, n) = (a + b, a + c, a + b + c + d);
    let max_a = row1.min(col1);
    // Probability of table x relative to table a, stepping x up by one each time:
    // P(x+1)/P(x) = (row1-x)(col1-x) / ((x+1)(n-row1-col1+x+1)).
    let mut rel = 1.0f64;
    let mut tail = 1.0f64;
    let mut x = a;
    while x < max_a {
        rel *= (row1 - x) * (col1 - x) / ((x + 1.0) * (n - row1 - col1 + x + 1.0));
        tail += rel;
        x += 1.0;
    }
    // And the total mass over every table, stepping down from a as well.
    let mut total = tail;
    let mut rel = 1.0f64;
    let mut x = a;
    let min_a = (row1 + col1 - n).max(0.0);
    while x > min_a {
        rel *= x * (n - row1 - col1 + x) / ((row1 - x + 1.0) * (col1 - x + 1.0));
        total += rel;
        x -= 1.0;
    }
    (tail / total).min(1.0)
}

/// Wilson score interval of `k` successes in `n` trials at `z` standard deviations:
/// `(centre ∓ z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n)` with `centre = p + z²/2n`.
pub fn wilson(k: u32, n: u32, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (f64::from(k), f64::from(n));
    let p = k / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let denom = 1.0 + z2 / n;
    (((centre - spread) / denom).max(0.0), ((centre + spread) / denom).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bands_at_their_edges() {
        use Confidence::*;
        assert_eq!(Confidence::of(2, 2, 0), None);
        assert_eq!(Confidence::of(3, 3, 0), Some(Low));
        assert_eq!(Confidence::of(4, 5, 0), Some(Medium)); // 80 %
        assert_eq!(Confidence::of(4, 6, 0), Some(Low)); // 66.7 %
        assert_eq!(Confidence::of(5, 6, 0), Some(High)); // 83 %
        assert_eq!(Confidence::of(8, 10, 0), Some(Medium)); // 80 % is not above 80 %
        assert_eq!(Confidence::of(9, 10, 0), Some(High)); // 90 % is not above 90 %
        assert_eq!(Confidence::of(10, 11, 0), Some(VeryHigh));
        assert_eq!(Confidence::of(10, 11, 1), Some(High));
        assert_eq!(Confidence::of(7, 7, 0), Some(High));
    }

    proptest! {
        #[test]
        fn more_evidence_never_lowers_confidence(occ in 0u32..40, extra in 0u32..40, more in 0u32..5, contra in 0u32..3) {
            let opp = occ + extra;
            let base = Confidence::of(occ, opp, contra);
            // one more occurrence (and its opportunity)
            prop_assert!(Confidence::of(occ + more, opp + more, contra) >= base);
            // fewer opportunities at the same occurrences
            prop_assert!(Confidence::of(occ, opp.saturating_sub(more).max(occ), contra) >= base);
            // fewer contradictions
            prop_assert!(Confidence::of(occ, opp, 0) >= base);
        }

        #[test]
        fn bands_imply_their_floors(occ in 0u32..40, extra in 0u32..40, contra in 0u32..3) {
            let opp = occ + extra;
            let c = f64::from(occ) / f64::from(opp.max(1));
            match Confidence::of(occ, opp, contra) {
                None => prop_assert!(occ < 3 || opp == 0),
                Some(Confidence::VeryHigh) => prop_assert!(occ >= 8 && c > 0.9 && contra == 0),
                Some(Confidence::High) => prop_assert!(occ >= 5 && c > 0.8),
                Some(Confidence::Medium) => prop_assert!(occ >= 4 && c >= 0.7),
                Some(Confidence::Low) => prop_assert!(occ >= 3),
            }
        }
    }

    #[test]
    fn fisher_matches_known_values() {
        // Tea tasting: 3 of 4 inside, 1 of 4 outside: p = 17/70.
        assert!((fisher_greater(3, 1, 1, 3) - 17.0 / 70.0).abs() < 1e-12);
        assert!((fisher_greater(4, 0, 0, 4) - 1.0 / 70.0).abs() < 1e-12);
        assert!(fisher_greater(15, 0, 1, 40) < 1e-9);
        // 5 of 5 against a 60 % habit elsewhere is not significant.
        assert!(fisher_greater(5, 0, 30, 20) > CONTRAST_P);
    }

    #[test]
    fn wilson_brackets_the_rate() {
        let (lo, hi) = wilson(8, 9, 2.576);
        assert!(lo > 0.45 && lo < 0.6 && hi > 0.95, "{lo} {hi}");
        assert_eq!(wilson(0, 0, 1.96), (0.0, 1.0));
    }
}
