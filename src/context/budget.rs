//! The token budget of an assembled context: one cap per section.
//!
//! Defaults give memory its share of a 32k-token window; they sum to 11,600 tokens,
//! the response buffer included:
//!
//! | section | cap | items |
//! |---|---|---|
//! | system prompt base (the host's own) | 800 | |
//! | procedural rules | 400 | all active, whole |
//! | semantic facts | 600 | |
//! | episodic memories | 1,200 | top 5 |
//! | observations | 600 | top 3 |
//! | working memory | 4,000 | |
//! | tool-call history | 2,000 | |
//! | response buffer (reserved, never filled) | 2,000 | |
//!
//! [`Budget::fit`] scales the caps down, in proportion, so that everything but the response
//! buffer fits a total a caller names (`mnemo context --budget N`).

use crate::error::{Error, Result};

/// Caps per section, in tokens, and how many items some sections take.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Budget {
    /// The host's own system prompt.
    pub system: usize,
    /// Procedural rules.
    pub rules: usize,
    /// Semantic facts.
    pub facts: usize,
    /// Episodic memories.
    pub episodes: usize,
    /// At most this many episodic memories.
    pub episodes_k: usize,
    /// Observations.
    pub observations: usize,
    /// At most this many observations.
    pub observations_k: usize,
    /// The task's working memory.
    pub working: usize,
    /// The host's tool-call history.
    pub tools: usize,
    /// Reserved for the model's answer; never filled.
    pub response: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            system: 800,
            rules: 400,
            facts: 600,
            episodes: 1_200,
            episodes_k: 5,
            observations: 600,
            observations_k: 3,
            working: 4_000,
            tools: 2_000,
            response: 2_000,
        }
    }
}

impl Budget {
    /// Sum of the caps of the filled sections (everything but the response buffer).
    pub fn filled(&self) -> usize {
        self.system
            + self.rules
            + self.facts
            + self.episodes
            + self.observations
            + self.working
            + self.tools
    }

    /// Everything, the response buffer included.
    pub fn total(&self) -> usize {
        self.filled() + self.response
    }

    /// These caps scaled down in proportion (rounding down) so that [`Budget::filled`] is at
    /// most `n`; unchanged when they already fit. The response buffer is not part of `n`.
    pub fn fit(&self, n: usize) -> Budget {
        let have = self.filled();
        if have <= n {
            return self.clone();
        }
        let s = |x: usize| ((x as u128 * n as u128) / have as u128) as usize;
        Budget {
            system: s(self.system),
            rules: s(self.rules),
            facts: s(self.facts),
            episodes: s(self.episodes),
            observations: s(self.observations),
            working: s(self.working),
            tools: s(self.tools),
            ..self.clone()
        }
    }

    /// Refuses caps that cannot work together (an absurd size would only waste the caller's
    /// time: every cap must be at most 10 million tokens).
    pub fn check(&self) -> Result<()> {
        const MAX: usize = 10_000_000;
        let caps = [
            ("system", self.system),
            ("rules", self.rules),
            ("facts", self.facts),
            ("episodes", self.episodes),
            ("observations", self.observations),
            ("working", self.working),
            ("tools", self.tools),
            ("response", self.response),
            ("episodesK", self.episodes_k),
            ("observationsK", self.observations_k),
        ];
        for (name, v) in caps {
            if v > MAX {
                return Err(Error::InvalidInput(format!(
                    "budget {name} is {v}: at most {MAX} (caps are in tokens)"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_sum_to_a_32k_window_share_and_fit_scales_down() {
        let b = Budget::default();
        assert_eq!(b.total(), 11_600);
        assert_eq!(b.fit(20_000), b);
        for n in [0, 1, 7, 500, 3_000, 9_599] {
            let f = b.fit(n);
            assert!(f.filled() <= n, "{n}: {}", f.filled());
            assert_eq!(f.response, b.response);
        }
        assert!(Budget { tools: usize::MAX, ..b }.check().is_err());
    }
}
