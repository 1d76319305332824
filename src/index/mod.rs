//! Derived indexes over stored records (rebuilt from the store; never the source of truth).

pub mod bm25;
pub mod terms;
pub mod vectors;
