//! Replaying the mail agent's scenario ([`crate::demo::scenario`]) into its namespace: Maria's
//! facts first, then day by day her episodes and behaviour signals and that night's nightly job
//! (compaction, consolidation, the pattern detector, promotion), as her agent would have lived
//! it. `mnemo demo` and the tests use it; the inspector replays the same JSON through the JS API.

use crate::demo::scenario::{Day, Scenario};
use crate::engine::{Engine, FactInput, Nightly, Remembered};
use crate::error::{Error, Result};
use crate::record::json::episode_from_json;
use crate::store::KvStore;

/// What a replay wrote.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replayed {
    /// Episodes offered to `remember`.
    pub episodes: usize,
    /// Of those, the ones stored (the write policy may discard routine ones).
    pub stored: usize,
    /// Behaviour signals stored.
    pub signals: usize,
    /// Nightly runs.
    pub nights: usize,
    /// Facts set.
    pub facts: usize,
}

impl<S: KvStore> Engine<S> {
    /// Replays `scenario` into its namespace, calling `each_night` after every nightly run.
    /// Refuses a namespace that already holds episodes, so the demo's figures are its own.
    pub fn replay_scenario(
        &mut self,
        scenario: &Scenario,
        mut each_night: impl FnMut(&Day, &Nightly, &Replayed),
    ) -> Result<Replayed> {
        let ns = scenario.namespace;
        if !self.timeline(ns, i64::MAX, 1)?.is_empty() {
            return Err(Error::InvalidInput(format!(
                "namespace {ns:?} already holds episodes: replay the scenario into an empty store"
            )));
        }
        let mut done = Replayed::default();
        for f in &scenario.facts {
            self.write_fact(ns, &FactInput::from_json(f)?, scenario.facts_at)?;
            done.facts += 1;
        }
        for day in &scenario.days {
            for e in &day.episodes {
                let r = self.remember(ns, episode_from_json(e)?, None)?;
                done.episodes += 1;
                done.stored += usize::from(matches!(r, Remembered::Stored { .. }));
            }
            for s in &day.signals {
                self.signal_json(ns, &s.to_string())?;
                done.signals += 1;
            }
            let night = self.nightly(ns, day.night, None)?;
            done.nights += 1;
            each_night(day, &night, &done);
        }
        Ok(done)
    }
}
