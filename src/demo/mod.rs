//! The mail agent's demo: Maria Rossi's 90 days of mail as data (`scenario`: facts, episodes,
//! the behaviour signals of the seeded trace, one night per day, the new email), the seeded
//! signal trace it is built on (`trace`, with the habits it plants, which the learning tests
//! and benchmarks score against), and its replay into a namespace (`replay`), which `mnemo
//! demo`, the tests and the inspector's context tab (through the JS package) run.

pub mod replay;
pub mod scenario;
pub mod trace;

pub use replay::Replayed;
