pub mod runner;

#[cfg(feature = "hwbench")]
pub mod bandwidth;
