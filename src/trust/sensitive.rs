//! Secrets in free text: card numbers, IBANs, API keys and passwords, found so that a write
//! can mask them (the default), drop the episode, or keep it as it is (`engine::policy`).
//!
//! | kind | how it is found | masked as |
//! |---|---|---|
//! | card | 13–19 digits, single spaces or dashes between groups, passing the Luhn check | `[card …1234]` |
//! | IBAN | 2 letters, 2 check digits, 11–30 letters or digits (spaces between groups of 4 allowed), passing ISO 13616's mod-97 check | `[IBAN IT…3456]` |
//! | key | a token with a known secret prefix (`sk-`, `sk_live_`, `AKIA`, `ghp_`, `github_pat_`, `xoxb-`, `AIza`, `glpat-`, `npm_`, `hf_`…), a JWT (`eyJ….eyJ….…`), or a token of 20+ letters and digits mixed, right after a key word (key, token, secret, bearer, chiave, Schlüssel, clé, clave, chave) | `[secret]` |
//! | password | the word after a password cue (password, passwd, pwd, Passwort, Kennwort, mot de passe, contraseña, senha, PIN) and a colon, `=` or a copula (is, è, ist, est, es, é) | `[password]` |
//!
//! Masking keeps the text readable ("paid with [card …4242]") and keeps the last four
//! characters of cards and IBANs, which people use to tell them apart.

/// A kind of secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Secret {
    /// A payment card number.
    Card,
    /// An international bank account number.
    Iban,
    /// An API key or access token.
    Key,
    /// A password.
    Password,
}

/// One secret found in a text: its kind and byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What it is.
    pub kind: Secret,
    /// Byte offsets in the text.
    pub range: std::ops::Range<usize>,
}

const KEY_PREFIXES: &[(&str, usize)] = &[
    ("sk-", 20),
    ("sk_live_", 16),
    ("sk_test_", 16),
    ("rk_live_", 16),
    ("akia", 20),
    ("asia", 20),
    ("ghp_", 30),
    ("gho_", 30),
    ("ghu_", 30),
    ("ghs_", 30),
    ("github_pat_", 30),
    ("xoxb-", 20),
    ("xoxp-", 20),
    ("xapp-", 20),
    ("aiza", 35),
    ("glpat-", 20),
    ("npm_", 30),
    ("hf_", 30),
];
const KEY_CUES: &[&str] = &[
    "key",
    "apikey",
    "api_key",
    "token",
    "secret",
    "bearer",
    "chiave",
    "schlussel",
    "schlüssel",
    "cle",
    "clé",
    "clave",
    "chave",
    "access_token",
    "auth",
];
const PASSWORD_CUES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passwort",
    "kennwort",
    "contrasena",
    "contraseña",
    "senha",
    "pin",
    "passcode",
    "passphrase",
];
const COPULAS: &[&str] =
    &["is", "è", "e", "ist", "est", "es", "é", "era", "was", "now", "ora", "jetzt", "lautet"];

/// Every secret in `text`, in order, without overlaps.
pub fn find(text: &str) -> Vec<Found> {
    let mut found = cards(text);
    found.extend(ibans(text));
    found.extend(keys_and_passwords(text));
    found.sort_by_key(|f| (f.range.start, std::cmp::Reverse(f.range.end)));
    let mut out: Vec<Found> = Vec::new();
    for f in found {
        if out.last().is_none_or(|l| f.range.start >= l.range.end) {
            out.push(f);
        }
    }
    out
}

/// True when `text` holds a secret.
pub fn contains_secret(text: &str) -> bool {
    !find(text).is_empty()
}

/// `text` with every secret replaced by its mask (module docs), and the kinds replaced.
pub fn mask(text: &str) -> (String, Vec<Secret>) {
    let found = find(text);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in &found {
        out.push_str(&text[at..f.range.start]);
        let s = &text[f.range.clone()];
        let tail: String = {
            let alnum: Vec<char> = s.chars().filter(char::is_ascii_alphanumeric).collect();
            alnum[alnum.len().saturating_sub(4)..].iter().collect()
        };
        match f.kind {
            Secret::Card => out.push_str(&format!("[card …{tail}]")),
            Secret::Iban => out.push_str(&format!("[IBAN {}…{tail}]", &s[..2].to_uppercase())),
            Secret::Key => out.push_str("[secret]"),
            Secret::Password => out.push_str("[password]"),
        }
        at = f.range.end;
    }
    out.push_str(&text[at..]);
    (out, found.into_iter().map(|f| f.kind).collect())
}

fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Runs of digits joined by single spaces or dashes: (byte range, digits).
fn digit_runs(text: &str) -> Vec<(std::ops::Range<usize>, Vec<u8>)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if !(b[i].is_ascii_digit() && boundary) {
            i += 1;
            continue;
        }
        let (start, mut end, mut digits) = (i, i, Vec::new());
        let mut j = i;
        while j < b.len() {
            if b[j].is_ascii_digit() {
                digits.push(b[j] - b'0');
                j += 1;
                end = j;
            } else if matches!(b[j], b' ' | b'-') && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
                j += 1;
            } else {
                break;
            }
        }
        out.push((start..end, digits));
        i = end.max(i + 1);
    }
    out
}

fn cards(text: &str) -> Vec<Found> {
    digit_runs(text)
        .into_iter()
        .filter(|(range, d)| {
            let after_ok = !text.as_bytes().get(range.end).is_some_and(u8::is_ascii_alphanumeric);
            (13..=19).contains(&d.len()) && after_ok && luhn(d)
        })
        .map(|(range, _)| Found { kind: Secret::Card, range })
        .collect()
}

fn iban_valid(chars: &[u8]) -> bool {
    if !(15..=34).contains(&chars.len()) {
        return false;
    }
    let mut rem: u32 = 0;
    for &c in chars[4..].iter().chain(&chars[..4]) {
        let v = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'A'..=b'Z' => u32::from(c - b'A') + 10,
            _ => return false,
        };
        rem = if v >= 10 { (rem * 100 + v) % 97 } else { (rem * 10 + v) % 97 };
    }
    rem == 1
}

fn ibans(text: &str) -> Vec<Found> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= b.len() {
        let starts = (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b[i].is_ascii_alphabetic()
            && b[i + 1].is_ascii_alphabetic()
            && b[i + 2].is_ascii_digit()
            && b[i + 3].is_ascii_digit();
        if !starts {
            i += 1;
            continue;
        }
        // Collect alphanumerics, allowing single spaces between groups; remember each group end.
        let mut chars = Vec::new();
        let mut ends = Vec::new();
        let mut j = i;
        while j < b.len() && chars.len() < 34 {
            if b[j].is_ascii_alphanumeric() {
                chars.push(b[j].to_ascii_uppercase());
                j += 1;
                if !b.get(j).is_some_and(u8::is_ascii_alphanumeric) {
                    ends.push((chars.len(), j));
                }
            } else if b[j] == b' ' && b.get(j + 1).is_some_and(u8::is_ascii_alphanumeric) {
                j += 1;
            } else {
                break;
            }
        }
        match ends.iter().rev().find(|(n, _)| iban_valid(&chars[..*n])) {
            Some(&(_, end)) => {
                out.push(Found { kind: Secret::Iban, range: i..end });
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// Whitespace-separated tokens with their byte ranges, trimmed of surrounding punctuation.
fn tokens(text: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                let raw = &text[s..i];
                let lead =
                    raw.len() - raw.trim_start_matches(['"', '\'', '(', '[', '<', '`']).len();
                let trimmed = raw
                    .trim_start_matches(['"', '\'', '(', '[', '<', '`'])
                    .trim_end_matches(['"', '\'', ')', ']', '>', '`', ',', '.', ';', '!', '?']);
                if !trimmed.is_empty() {
                    out.push((s + lead..s + lead + trimmed.len(), trimmed));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn known_key(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    let jwt = token.starts_with("eyJ") && token.matches('.').count() == 2 && token.len() > 30;
    jwt || KEY_PREFIXES.iter().any(|(p, min)| lower.starts_with(p) && token.len() >= *min)
}

fn key_like(token: &str) -> bool {
    token.len() >= 20
        && token.chars().all(|c| c.is_ascii_alphanumeric() || "-_./+=".contains(c))
        && token.chars().any(|c| c.is_ascii_digit())
        && token.chars().any(|c| c.is_ascii_alphabetic())
}

/// `word` lower-cased without a trailing `:` or `=`, and whether it had one.
fn cue_word(word: &str) -> (String, bool) {
    let bare = word.trim_end_matches([':', '=']);
    (bare.to_lowercase(), bare.len() != word.len())
}

fn keys_and_passwords(text: &str) -> Vec<Found> {
    let toks = tokens(text);
    let mut out = Vec::new();
    for (i, (range, tok)) in toks.iter().enumerate() {
        // "password=hunter2", "token:abc…" in one token.
        if let Some(sep) = tok.find(['=', ':']) {
            let (head, value) = (tok[..sep].to_lowercase(), &tok[sep + 1..]);
            let value_range = range.start + sep + 1..range.end;
            if !value.is_empty() && PASSWORD_CUES.contains(&head.as_str()) {
                out.push(Found { kind: Secret::Password, range: value_range });
                continue;
            }
            if KEY_CUES.iter().any(|c| head.ends_with(c)) && (known_key(value) || key_like(value)) {
                out.push(Found { kind: Secret::Key, range: value_range });
                continue;
            }
        }
        if known_key(tok) {
            out.push(Found { kind: Secret::Key, range: range.clone() });
            continue;
        }
        let (word, sep) = cue_word(tok);
        // "mot de passe" is three words.
        let cue_len = if PASSWORD_CUES.contains(&word.as_str()) {
            Some(1)
        } else if word == "mot"
            && toks.get(i + 1).is_some_and(|t| t.1.eq_ignore_ascii_case("de"))
            && toks.get(i + 2).is_some_and(|t| cue_word(t.1).0 == "passe")
        {
            Some(3)
        } else {
            None
        };
        if let Some(n) = cue_len {
            let last_sep = if n == 1 { sep } else { cue_word(toks[i + n - 1].1).1 };
            let mut j = i + n;
            let mut joined = last_sep;
            // Skip separators and copulas: "password is", "Passwort ist", "password: ".
            while let Some((_, t)) = toks.get(j) {
                let (w, s) = cue_word(t);
                if w.is_empty() || COPULAS.contains(&w.as_str()) {
                    joined = true;
                    j += 1;
                    if s || w.is_empty() {
                        continue;
                    }
                    continue;
                }
                break;
            }
            if joined {
                if let Some((r, _)) = toks.get(j) {
                    out.push(Found { kind: Secret::Password, range: r.clone() });
                }
            }
            continue;
        }
        if KEY_CUES.contains(&word.as_str()) {
            if let Some((r, t)) = toks.get(i + 1).or(None) {
                let t2 = toks.get(i + 2);
                let (r, t) = match t2 {
                    Some((r2, t2)) if COPULAS.contains(&cue_word(t).0.as_str()) => (r2, *t2),
                    _ => (r, *t),
                };
                if key_like(t) || known_key(t) {
                    out.push(Found { kind: Secret::Key, range: r.clone() });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_found_and_masked_in_six_languages() {
        let cases = [
            ("paid with 4242 4242 4242 4242 yesterday", "paid with [card …4242] yesterday"),
            ("carta 4111-1111-1111-1111.", "carta [card …1111]."),
            ("IBAN: IT60 X054 2811 1010 0000 0123 456 for rent", "IBAN: [IBAN IT…3456] for rent"),
            ("Konto DE89370400440532013000", "Konto [IBAN DE…3000]"),
            ("use sk-proj-abcdefghijklmnop1234 for the API", "use [secret] for the API"),
            ("AWS AKIAIOSFODNN7EXAMPLE in the env", "AWS [secret] in the env"),
            ("token: ab12cd34ef56gh78ij90kl12", "token: [secret]"),
            ("the password is hunter2!", "the password is [password]!"),
            ("la password è Gatto#99", "la password è [password]"),
            ("Das Passwort ist Sommer2024", "Das Passwort ist [password]"),
            ("mot de passe : soleil42", "mot de passe : [password]"),
            ("contraseña: perro123", "contraseña: [password]"),
            ("senha é batata7", "senha é [password]"),
            ("login with password=s3cr3t", "login with password=[password]"),
        ];
        for (text, want) in cases {
            assert_eq!(mask(text).0, want, "{text}");
        }
    }

    #[test]
    fn ordinary_numbers_and_words_are_left_alone() {
        for text in [
            "order 1234567890123 shipped", // 13 digits, fails Luhn
            "call +39 02 1234 5678",
            "invoice INV-2024-0042 for 1,250 EUR",
            "reset the password yesterday",
            "IT department moved to floor 3",
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        ] {
            assert_eq!(mask(text).0, text, "{text}");
        }
    }
}
