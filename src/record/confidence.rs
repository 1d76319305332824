//! How sure the engine is of an observation, as observations and rules store it. The bands
//! by occurrences and consistency, checked from the top, the first that holds wins:
//!
//! | confidence | occurrences | consistency | other |
//! |---|---|---|---|
//! | very-high | ≥ 8 | > 90 % | no contradictions |
//! | high | ≥ 5 | > 80 % | |
//! | medium | ≥ 4 | ≥ 70 % | |
//! | low | ≥ 3 | any | |
//!
//! The original table writes medium as "4–5 occurrences, 70–80 %"; its bands overlap, and a
//! pattern with 6 occurrences at 75 % or 4 at 85 % is at least as strong as one with 4 at
//! 75 %, so the ranges are read as floors. Fewer than 3 occurrences is never an observation.

/// How sure the engine is of an observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// 3 or more occurrences.
    Low,
    /// 4 or more at 70 % or more.
    Medium,
    /// 5 or more above 80 %.
    High,
    /// 8 or more above 90 %, never contradicted.
    VeryHigh,
}

impl Confidence {
    /// The band of `occurrences` out of `opportunities` with `contradictions` (`None` under 3
    /// occurrences).
    pub fn of(occurrences: u32, opportunities: u32, contradictions: u32) -> Option<Confidence> {
        if occurrences < 3 || opportunities == 0 {
            return None;
        }
        let c = f64::from(occurrences) / f64::from(opportunities.max(occurrences));
        Some(if occurrences >= 8 && c > 0.9 && contradictions == 0 {
            Confidence::VeryHigh
        } else if occurrences >= 5 && c > 0.8 {
            Confidence::High
        } else if occurrences >= 4 && c >= 0.7 {
            Confidence::Medium
        } else {
            Confidence::Low
        })
    }

    /// One band up (very-high stays).
    pub fn raised(self) -> Confidence {
        match self {
            Confidence::Low => Confidence::Medium,
            Confidence::Medium => Confidence::High,
            _ => Confidence::VeryHigh,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
            Confidence::VeryHigh => "very-high",
        }
    }

    /// From its name.
    pub fn from_name(s: &str) -> Option<Confidence> {
        [Confidence::Low, Confidence::Medium, Confidence::High, Confidence::VeryHigh]
            .into_iter()
            .find(|c| c.name() == s)
    }

    /// True for high and very-high: what promotion asks.
    pub fn promotable(self) -> bool {
        self >= Confidence::High
    }
}
