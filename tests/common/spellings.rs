//! A subject written every way a person or a program writes it, for the erasure suites
//! (`tests/erasure.rs` on the file store, `host/tests/host.rs` on SQLite; the JS runtimes have
//! the same list in `tests/js/erasure-scan.mjs`): next to and between its two words, a
//! character of each Unicode punctuation category (Pd, Pi, Pf, Ps, Pe, Po), each Zs space, each
//! zero-width character inside and between the words; the name in NFC and NFD, upper and
//! lower case; a possessive, an elided form and a line break.
//!
//! Included by `#[path]`, not through `common`: it needs `unicode-normalization`, which not
//! every test crate has.

use unicode_normalization::UnicodeNormalization;

/// Every spelling of `first last`.
pub fn spellings(first: &str, last: &str) -> Vec<String> {
    let punctuation = [
        '-', '\u{2010}', '\u{2013}', '\u{2014}', '\u{2015}', // Pd
        '«', '‘', '“', '‹', // Pi
        '»', '’', '”', '›', // Pf
        '(', '[', '{', '„', '‚', // Ps
        ')', ']', '}', // Pe
        '!', '"', '#', '%', '&', '\'', '*', ',', '.', '/', ':', ';', '?', '@', '¡', '¿', '·',
        '…', // Po
    ];
    let spaces = [
        ' ', '\u{a0}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}',
        '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200a}', '\u{202f}',
        '\u{205f}', '\u{3000}', // Zs
    ];
    let invisible = ['\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}', '\u{feff}', '\u{ad}'];
    let name = [first, last];
    let mut out: Vec<String> = Vec::new();
    for form in [
        name.map(|w| w.nfc().collect::<String>()),
        name.map(|w| w.nfd().collect::<String>()),
        name.map(str::to_uppercase),
        name.map(str::to_lowercase),
    ] {
        for &p in &punctuation {
            out.push(format!("{p}{} {}{p}", form[0], form[1]));
            out.push(format!("{}{p}{p}{}", form[0], form[1]).replace(['-', '\''], " "));
        }
        for &s in &spaces {
            out.push(format!("{}{s}{s}{}", form[0], form[1]));
        }
        for &z in &invisible {
            out.push(format!("{}{z}{}", form[0], form[1])); // between the words
            let mut first: Vec<char> = form[0].chars().collect();
            first.insert(2, z); // inside one
            out.push(format!("{} {}", first.into_iter().collect::<String>(), form[1]));
        }
        out.push(format!("{} {}’s desk", form[0], form[1]));
        out.push(format!("l’{} {}", form[0], form[1]));
        out.push(format!("{}\n{}", form[0], form[1]));
    }
    out
}
