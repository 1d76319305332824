//! The plan a budgeted compaction call leaves for the next one.

/// The groups a budgeted call planned and did not write, kept in memory for the next call of
/// the same run while no episode entered or left the indexes since (otherwise the next call
/// plans again — which gives the same groups, `compact::group`'s docs say why; the cache only
/// saves reading every eligible record once per call).
pub(crate) struct PlanCache {
    pub(crate) tier: u8,
    pub(crate) now: i64,
    pub(crate) generation: u64,
    pub(crate) groups: std::collections::VecDeque<Vec<u64>>,
}
