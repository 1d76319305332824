//! Progress bars for the CLI's long work (ingest, the demo), drawn on stderr only when it is a
//! terminal: in a pipe or a test nothing is printed.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps: "[████░░░░] 120/500 embedding".
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let style = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let b = ProgressBar::new(len).with_style(style);
    b.set_message(what.to_string());
    b
}
