//! The engine's settings: [`Config`] (vectors, write policy, scoring, snapshots, compaction),
//! with the learning loop's (`learning::settings`).

use crate::engine::learning::settings::{Consolidation, Learning};
use crate::engine::policy::WritePolicy;
use crate::engine::retrieve::score::Scoring;
use crate::index::vectors::VectorConfig;

/// Engine settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Model id of host-supplied vectors when no embedder is attached.
    pub vector_model: String,
    /// Their dimension.
    pub dim: usize,
    /// Write-time policy.
    pub policy: WritePolicy,
    /// Default scoring.
    pub scoring: Scoring,
    /// Vector index tuning.
    pub vectors: VectorConfig,
    /// Facts below this confidence are held back unless asked for.
    pub min_fact_confidence: f32,
    /// `maintain` snapshots a namespace once this many episodes were added or changed since
    /// its last snapshot (a cold open replays those from their records); `usize::MAX` leaves
    /// snapshots to explicit [`Engine::snapshot`] calls.
    pub snapshot_after: usize,
    /// Largest snapshot chunk (bytes per stored value; Durable Object storage takes 128 KiB).
    pub snapshot_chunk: usize,
    /// The learning loop's settings.
    pub learning: Learning,
    /// Compaction thresholds (weekly and monthly tiers).
    pub compaction: crate::compact::Compaction,
    /// Consolidation thresholds (lesson clusters, recurrence trigger).
    pub consolidation: Consolidation,
}
