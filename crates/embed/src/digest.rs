//! The model id's content hash, without hashing ~50 MB on every load.
//!
//! A model id is `name@` + the first 12 hex digits of SHA-256(`model.onnx` ‖
//! `"\0mnemo-tokenizer\0"` ‖ `tokenizer.json`). Computing it costs 28 ms natively but 2.5 s in
//! wasm (SHA-256 without hardware help, before the engine's code is fully optimised), so
//! `tools/build-model` computes it once and appends it to `model.onnx` as a *digest trailer*:
//! one more `metadata_props` entry of the ONNX `ModelProto` (protobuf readers merge fields
//! appended to a message, so the file stays a valid ONNX model for every runtime).
//!
//! Trailer, the last [`TRAILER_LEN`] bytes of the file:
//!
//! ```text
//! 0x72 107                       field 14 (metadata_props), length-delimited, 107 bytes
//!   0x0a 18 "mnemo.model_digest" key
//!   0x12 85 "v1 " SHA256 " " ONNX_CRC " " TOKENIZER_CRC
//!        SHA256: 64 lowercase hex digits, the hash above, over the file without its trailer
//!        ONNX_CRC, TOKENIZER_CRC: 8 lowercase hex digits, CRC-32 (IEEE) of the file without
//!        its trailer and of tokenizer.json
//! ```
//!
//! A model compiled to NNEF (`nnef.rs`) ends in the same trailer, with the hash of the ONNX
//! file it was compiled from and the CRC-32 of the archive, so both load under one id.
//!
//! A load checks both CRC-32s (tens of milliseconds in wasm) and then takes the stored hash.
//! When the trailer is missing or either CRC-32 differs (another tokenizer, a damaged or
//! edited file), it hashes the bytes itself, so the id always names the bytes it was given and
//! is the same with or without a trailer.

use sha2::{Digest, Sha256};

/// Bytes of the digest trailer.
pub const TRAILER_LEN: usize = 109;
const KEY: &[u8] = b"mnemo.model_digest";
const VALUE_LEN: usize = 85;

/// What separates the two files in the hash.
const TOKENIZER_SEPARATOR: &[u8] = b"\0mnemo-tokenizer\0";

/// The model's content hash (hex SHA-256) and the ONNX bytes without any trailer.
pub struct ModelDigest<'a> {
    /// SHA-256(onnx without trailer ‖ separator ‖ tokenizer), 64 lowercase hex digits.
    pub sha256_hex: String,
    /// The ONNX bytes without the trailer (all of them when there is none).
    pub onnx: &'a [u8],
    /// True when the hash came from the trailer (its CRC-32s matched).
    pub from_trailer: bool,
}

/// The content hash of `onnx` and `tokenizer`, from the trailer when it checks out.
pub fn model_digest<'a>(onnx: &'a [u8], tokenizer: &[u8]) -> ModelDigest<'a> {
    let (body, stored) = match split_trailer(onnx) {
        Some((body, stored)) => (body, Some(stored)),
        None => (onnx, None),
    };
    if let Some((sha, onnx_crc, tok_crc)) = stored {
        if crc32fast::hash(body) == onnx_crc && crc32fast::hash(tokenizer) == tok_crc {
            return ModelDigest { sha256_hex: sha, onnx: body, from_trailer: true };
        }
    }
    ModelDigest { sha256_hex: sha256_hex(body, tokenizer), onnx: body, from_trailer: false }
}

/// SHA-256(onnx ‖ separator ‖ tokenizer), lowercase hex.
pub fn sha256_hex(onnx: &[u8], tokenizer: &[u8]) -> String {
    let mut hash = Sha256::new();
    hash.update(onnx);
    hash.update(TOKENIZER_SEPARATOR);
    hash.update(tokenizer);
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// What a trailer holds: the hex SHA-256, the body's CRC-32 and the tokenizer's CRC-32.
type Stored = (String, u32, u32);

/// The file without its trailer, and the trailer's hash and CRC-32s, when it ends in one.
fn split_trailer(onnx: &[u8]) -> Option<(&[u8], Stored)> {
    let at = onnx.len().checked_sub(TRAILER_LEN)?;
    let (body, t) = onnx.split_at(at);
    let head = [0x72, 107, 0x0a, KEY.len() as u8];
    if t[..4] != head || &t[4..4 + KEY.len()] != KEY || t[22..24] != [0x12, VALUE_LEN as u8] {
        return None;
    }
    let value = std::str::from_utf8(&t[24..]).ok()?;
    let mut parts = value.strip_prefix("v1 ")?.split(' ');
    let (sha, onnx_crc, tok_crc) = (parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex(sha, 64) || !hex(onnx_crc, 8) || !hex(tok_crc, 8) || parts.next().is_some() {
        return None;
    }
    let crc = |s: &str| u32::from_str_radix(s, 16).ok();
    Some((body, (sha.to_ascii_lowercase(), crc(onnx_crc)?, crc(tok_crc)?)))
}

/// The trailer for `onnx` (without a trailer) and `tokenizer`: what `tools/build-model`
/// appends. Used by the tests and by hosts that build model files themselves.
pub fn trailer(onnx: &[u8], tokenizer: &[u8]) -> Vec<u8> {
    trailer_for(&sha256_hex(onnx, tokenizer), onnx, tokenizer)
}

/// A trailer carrying `sha256_hex` for `body`: a compiled model (`nnef.rs`) carries the hash
/// of the ONNX file it was made from, so that both load under one model id.
pub fn trailer_for(sha256_hex: &str, body: &[u8], tokenizer: &[u8]) -> Vec<u8> {
    let value =
        format!("v1 {sha256_hex} {:08x} {:08x}", crc32fast::hash(body), crc32fast::hash(tokenizer));
    let mut t = vec![0x72, 107, 0x0a, KEY.len() as u8];
    t.extend_from_slice(KEY);
    t.extend_from_slice(&[0x12, VALUE_LEN as u8]);
    t.extend_from_slice(value.as_bytes());
    debug_assert_eq!(t.len(), TRAILER_LEN);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailer_gives_the_hash_the_bytes_would() {
        let (onnx, tok) = (b"\x08\x07 not really onnx".to_vec(), b"{\"model\":{}}".to_vec());
        let mut with = onnx.clone();
        with.extend(trailer(&onnx, &tok));
        let d = model_digest(&with, &tok);
        assert!(d.from_trailer);
        assert_eq!(d.onnx, &onnx[..]);
        assert_eq!(d.sha256_hex, sha256_hex(&onnx, &tok));
        assert_eq!(model_digest(&onnx, &tok).sha256_hex, d.sha256_hex, "same id without it");
    }

    #[test]
    fn a_trailer_that_does_not_match_the_bytes_is_not_trusted() {
        let (onnx, tok) = (b"model bytes".to_vec(), b"tokenizer".to_vec());
        let mut with = onnx.clone();
        with.extend(trailer(&onnx, &tok));
        // another tokenizer
        let d = model_digest(&with, b"tokenizer!");
        assert!(!d.from_trailer);
        assert_eq!(d.sha256_hex, sha256_hex(&onnx, b"tokenizer!"));
        // an edited model
        let mut edited = with.clone();
        edited[0] ^= 1;
        let d = model_digest(&edited, &tok);
        assert!(!d.from_trailer);
        assert_eq!(d.sha256_hex, sha256_hex(&edited[..onnx.len()], &tok));
        // a damaged trailer is no trailer: every byte is hashed
        let mut damaged = with.clone();
        let n = damaged.len();
        damaged[n - 3] = b'z';
        let d = model_digest(&damaged, &tok);
        assert!(!d.from_trailer);
        assert_eq!(d.onnx.len(), damaged.len());
    }
}
