//! Retrieval: a recall's filters (`filter`), time window, candidates and rescoring (`recall`), cold
//! records scored directly when a query asks for them (`cold`), and the scoring formulas with
//! their explanations (`score`).

pub(crate) mod cold;
pub(crate) mod filter;
pub(crate) mod recall;
pub mod score;
