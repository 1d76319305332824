//! The learning loop's settings: [`Learning`] (signals, detection, the promotion wait,
//! observation recall, outcome tracking) and [`Consolidation`] (lesson clusters, the
//! recurrence trigger), with their defaults.

/// How long an observation waits without a rejection before promotion by default: 48 hours,
/// so the user can reject a lesson before it is acted on. An explicit "right" waives it
/// (`feedback.rs`); `promotion.rs` checks it.
pub const PROMOTE_WAIT_MS: i64 = 48 * 3_600_000;

/// Settings of the learning loop (signals → observations → rules, outcome tracking).
#[derive(Debug, Clone)]
pub struct Learning {
    /// Keep a signal's `before`/`after` texts besides their edit features (default false:
    /// only the features are stored).
    pub keep_signal_texts: bool,
    /// Days of signals the detector reads (30).
    pub window_days: i64,
    /// New observations per run at most (3).
    pub max_new: usize,
    /// How long an observation waits without a rejection before promotion (48 h, in ms:
    /// [`PROMOTE_WAIT_MS`]; checked in `promotion.rs`).
    /// An explicit "right" from the user waives the wait.
    pub promote_wait_ms: i64,
    /// Cosine at or above which two observations of one behaviour are the same (0.85, i.e.
    /// cosine distance below 0.15).
    pub duplicate_cosine: f32,
    /// Decay of observations in recall, per day (0.02, a ~35-day half-life).
    pub observation_lambda: f32,
    /// Factor recall applies to an episode outcome tracking found harmful (0.5).
    pub harmful_weight: f32,
    /// Standard deviations of the Wilson bound outcome tracking uses (2.576: 99 %).
    pub outcome_z: f64,
    /// Outcomes an entry needs before it is judged (5).
    pub min_outcomes: u32,
}

impl Default for Learning {
    fn default() -> Self {
        Self {
            keep_signal_texts: false,
            window_days: 30,
            max_new: 3,
            promote_wait_ms: PROMOTE_WAIT_MS,
            duplicate_cosine: 0.85,
            observation_lambda: 0.02,
            harmful_weight: 0.5,
            outcome_z: 2.576,
            min_outcomes: 5,
        }
    }
}

/// Consolidation settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Consolidation {
    /// Two lessons of one situation are the same lesson at this cosine or above (0.85).
    pub cluster_cosine: f32,
    /// Episodes, on as many distinct days, a cluster needs to become an observation (3).
    pub min_support: usize,
    /// Lessons on one situation key since the last pass that start a pass for that key (5).
    pub recurrence: u32,
}

impl Default for Consolidation {
    fn default() -> Self {
        Self { cluster_cosine: 0.85, min_support: 3, recurrence: 5 }
    }
}
