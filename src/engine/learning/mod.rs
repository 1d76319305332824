//! The learning loop's engine side: behaviour signals stored (`signals`), observations detected
//! from them and recalled (`observe`), the user's verdicts (`feedback`), promotion to rules
//! after the 48-hour wait (`promotion`), one statement where two rules would say the same
//! (`rule_merge`), retrieval outcomes (`outcomes`), lessons consolidated into observations
//! (`consolidation`) the nightly job that runs the steps in order under a work budget
//! (`nightly`), and their settings (`settings`). The algorithms themselves, with no storage, are in [`crate::learn`].

pub(crate) mod consolidation;
pub(crate) mod feedback;
pub(crate) mod nightly;
pub(crate) mod observe;
pub(crate) mod outcomes;
pub(crate) mod promotion;
pub(crate) mod rule_merge;
pub(crate) mod settings;
pub(crate) mod signals;
