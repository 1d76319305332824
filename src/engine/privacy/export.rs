//! Export and import of a namespace: a readable JSON copy of everything held about a user
//! (the rights of access and portability), and an encrypted file for backups and moves.
//!
//! ## Encrypted file, version 1 (integers little-endian)
//!
//! ```text
//! file     := header chunk+
//! header   := "MNEMOX" version:u8 log_n:u8 r:u32 p:u32 salt:[16] nonce:[7] check:[32]
//! chunk    := len:u32 ciphertext[len]
//! ```
//!
//! - **Key.** scrypt(passphrase, salt, log_n, r, p) gives 64 bytes: the first 32 are the
//!   AES-256 key; `check` is SHA-256 of `mnemo-export-check` followed by the other 32, so a
//!   wrong passphrase is told apart from a damaged file before anything is decrypted. The key
//!   and the passphrase are never stored.
//! - **Chunks.** AES-256-GCM in the STREAM construction (Hoang, Reyhanitabar, Rogaway and
//!   Vizár; RustCrypto's `StreamBE32`): chunk `i` uses the nonce `nonce ‖ i:u32 BE ‖ last:u8`,
//!   with `last` 1 only on the final chunk, and the header as associated data. Changing,
//!   reordering, dropping or adding a chunk, cutting the file anywhere or changing a header
//!   byte fails authentication.
//! - **Plaintext** (the chunks' plaintexts concatenated, [`CHUNK`] bytes per chunk):
//!   `len:u32 prologue:json` then `key_len:u32 key value_len:u32 value` per record, keys
//!   without their `u/<namespace>/` prefix, so a file imports into any namespace. The prologue
//!   is `{"format": "mnemo-export/1", "namespace", "exportedAt", "records"}`.
//!
//! Export streams: chunks go to the caller's sink as they are sealed. Import reads the whole
//! file and authenticates every chunk before it writes anything, then writes one atomic batch
//! into a namespace that must be empty: a wrong passphrase, a flipped bit anywhere, a cut file
//! or a newer version gives a typed error and imports nothing.
//!
//! Salt and nonce are parameters ([`ExportOptions`]): the core draws no randomness; hosts pass
//! 23 fresh random bytes (the CLI from the OS, JS from `crypto.getRandomValues`).

use aes_gcm::aead::stream::{DecryptorBE32, EncryptorBE32};
use aes_gcm::aead::{KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key};
use sha2::{Digest, Sha256};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};

const MAGIC: &[u8; 6] = b"MNEMOX";
const VERSION: u8 = 1;
const HEADER: usize = 6 + 1 + 1 + 4 + 4 + 16 + 7 + 32;
/// Plaintext bytes per chunk.
pub const CHUNK: usize = 64 * 1024;
const TAG: usize = 16;

/// How an encrypted export is keyed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// scrypt cost: 2^log_n iterations (15: 32 MiB of memory with r = 8).
    pub log_n: u8,
    /// scrypt block size.
    pub r: u32,
    /// scrypt parallelism.
    pub p: u32,
    /// 16 random bytes.
    pub salt: [u8; 16],
    /// 7 random bytes: the STREAM nonce prefix.
    pub nonce: [u8; 7],
    /// When (ms), recorded in the prologue.
    pub now: i64,
}

impl ExportOptions {
    /// The default cost (log_n 15, r 8, p 1) with the caller's random bytes.
    pub fn new(salt: [u8; 16], nonce: [u8; 7], now: i64) -> Self {
        Self { log_n: 15, r: 8, p: 1, salt, nonce, now }
    }

    /// From 23 random bytes (salt, then nonce).
    pub fn from_random(random: &[u8], now: i64) -> Result<Self> {
        if random.len() != 23 {
            return Err(Error::InvalidInput(format!(
                "an export needs 23 random bytes (16 salt, 7 nonce), got {}",
                random.len()
            )));
        }
        let mut salt = [0; 16];
        let mut nonce = [0; 7];
        salt.copy_from_slice(&random[..16]);
        nonce.copy_from_slice(&random[16..]);
        Ok(Self::new(salt, nonce, now))
    }
}

/// What an export or import moved.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    /// Records.
    pub records: usize,
    /// Bytes of the encrypted file.
    pub bytes: usize,
}

fn derive(
    passphrase: &str,
    salt: &[u8],
    log_n: u8,
    r: u32,
    p: u32,
) -> Result<([u8; 32], [u8; 32])> {
    if passphrase.is_empty() {
        return Err(Error::InvalidInput("the passphrase is empty".into()));
    }
    let params = scrypt::Params::new(log_n, r, p, 64).map_err(|e| {
        Error::Format(format!("scrypt parameters log_n {log_n}, r {r}, p {p} are invalid: {e}"))
    })?;
    let mut out = [0u8; 64];
    scrypt::scrypt(passphrase.as_bytes(), salt, &params, &mut out)
        .map_err(|e| Error::InvalidInput(format!("scrypt: {e}")))?;
    let mut key = [0; 32];
    key.copy_from_slice(&out[..32]);
    let mut h = Sha256::new();
    h.update(b"mnemo-export-check");
    h.update(&out[32..]);
    Ok((key, h.finalize().into()))
}

/// The scrypt costs an import reads (and an export may therefore write): at most 4 times the
/// default's (log_n 15, r 8, p 1) in memory (128·r·2^log_n bytes: 128 MiB) and in work
/// (2^log_n·r·p), so a crafted file cannot make an import allocate gigabytes or compute for
/// minutes before the passphrase is even checked.
pub(crate) fn cost_in_range(log_n: u8, r: u32, p: u32) -> bool {
    const DEFAULT_WORK: u64 = (1 << 15) * 8;
    let (Some(n), r, p) = (1u64.checked_shl(u32::from(log_n)), u64::from(r), u64::from(p)) else {
        return false;
    };
    let work = n.saturating_mul(r);
    r >= 1 && p >= 1 && work <= 4 * DEFAULT_WORK && work.saturating_mul(p) <= 4 * DEFAULT_WORK
}

fn header(o: &ExportOptions, check: &[u8; 32]) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(MAGIC);
    h.push(VERSION);
    h.push(o.log_n);
    h.extend_from_slice(&o.r.to_le_bytes());
    h.extend_from_slice(&o.p.to_le_bytes());
    h.extend_from_slice(&o.salt);
    h.extend_from_slice(&o.nonce);
    h.extend_from_slice(check);
    h
}

/// Seals plaintext into chunks as it comes, handing each to the sink.
struct Sealer<'s> {
    stream: Option<EncryptorBE32<Aes256Gcm>>,
    aad: Vec<u8>,
    pending: Vec<u8>,
    sink: &'s mut dyn FnMut(&[u8]) -> Result<()>,
    written: usize,
}

impl Sealer<'_> {
    fn push(&mut self, bytes: &[u8]) -> Result<()> {
        self.pending.extend_from_slice(bytes);
        while self.pending.len() > CHUNK {
            let rest = self.pending.split_off(CHUNK);
            let chunk = std::mem::replace(&mut self.pending, rest);
            let stream = self.stream.as_mut().expect("not finished");
            let sealed = stream
                .encrypt_next(Payload { msg: &chunk, aad: &self.aad })
                .map_err(|_| Error::InvalidInput("the export is too large to encrypt".into()))?;
            self.emit(&sealed)?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<usize> {
        let stream = self.stream.take().expect("finished once");
        let last = std::mem::take(&mut self.pending);
        let sealed = stream
            .encrypt_last(Payload { msg: &last, aad: &self.aad })
            .map_err(|_| Error::InvalidInput("the export is too large to encrypt".into()))?;
        self.emit(&sealed)?;
        Ok(self.written)
    }

    fn emit(&mut self, sealed: &[u8]) -> Result<()> {
        (self.sink)(&(sealed.len() as u32).to_le_bytes())?;
        (self.sink)(sealed)?;
        self.written += 4 + sealed.len();
        Ok(())
    }
}

fn record(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

/// Reads `len:u32 bytes` at `*at`.
fn field<'a>(p: &'a [u8], at: &mut usize) -> Result<&'a [u8]> {
    let bad = || Error::Corrupt {
        what: "export".into(),
        detail: format!("a record is cut short at byte {at} of the plaintext"),
    };
    let len = p.get(*at..*at + 4).ok_or_else(bad)?;
    let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
    let bytes = p.get(*at + 4..*at + 4 + len).ok_or_else(bad)?;
    *at += 4 + len;
    Ok(bytes)
}

impl<S: KvStore> Engine<S> {
    /// Writes namespace `ns` as an encrypted file (module docs), chunk by chunk, to `sink`.
    pub fn export_encrypted(
        &self,
        ns: &str,
        passphrase: &str,
        options: &ExportOptions,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<Moved> {
        let nsc = Namespace::new(ns)?;
        let (log_n, r, p) = (options.log_n, options.r, options.p);
        if !cost_in_range(log_n, r, p) {
            return Err(Error::InvalidInput(format!(
                "scrypt cost log_n {log_n}, r {r}, p {p}: an import reads at most 4 times the \
                 default cost (log_n 15, r 8, p 1; e.g. log_n 17 with r 8 and p 1), so the file \
                 could not be read back; choose a cost within it"
            )));
        }
        let (key, check) = derive(passphrase, &options.salt, log_n, r, p)?;
        let head = header(options, &check);
        sink(&head)?;
        let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&key));
        let mut sealer = Sealer {
            stream: Some(EncryptorBE32::from_aead(cipher, options.nonce.as_slice().into())),
            aad: head.clone(),
            pending: Vec::new(),
            sink,
            written: head.len(),
        };
        let prefix = nsc.prefix();
        let mut records = 0;
        scan_all(&self.store, &prefix, None, |_, _| {
            records += 1;
            Ok(())
        })?;
        let prologue = serde_json::json!({
            "format": "mnemo-export/1", "namespace": ns, "exportedAt": options.now,
            "records": records,
        })
        .to_string();
        let mut buf = Vec::new();
        buf.extend_from_slice(&(prologue.len() as u32).to_le_bytes());
        buf.extend_from_slice(prologue.as_bytes());
        sealer.push(&buf)?;
        scan_all(&self.store, &prefix, None, |k, v| {
            buf.clear();
            record(&mut buf, &k[prefix.len()..], v);
            sealer.push(&buf)
        })?;
        let bytes = sealer.finish()?;
        Ok(Moved { records, bytes })
    }

    /// [`Engine::export_encrypted`] into one buffer.
    pub fn export_encrypted_bytes(
        &self,
        ns: &str,
        passphrase: &str,
        options: &ExportOptions,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.export_encrypted(ns, passphrase, options, &mut |b| {
            out.extend_from_slice(b);
            Ok(())
        })?;
        Ok(out)
    }

    /// Imports an encrypted export into namespace `ns`, which must hold nothing yet. Every
    /// chunk is authenticated before anything is written; then one atomic batch.
    pub fn import_encrypted(&mut self, ns: &str, passphrase: &str, file: &[u8]) -> Result<Moved> {
        let nsc = Namespace::new(ns)?;
        let plain = open(passphrase, file)?;
        let records = parse(&plain)?;
        if !self.store.scan(&nsc.prefix(), None, 1)?.is_empty() {
            return Err(Error::InvalidInput(format!(
                "namespace {ns} is not empty: import into a new namespace (or erase this one first)"
            )));
        }
        let mut batch = Batch::new();
        for (i, (k, v)) in records.iter().enumerate() {
            let mut key = nsc.prefix();
            key.extend_from_slice(k);
            if Table::of_key(&nsc, &key).is_none() {
                return Err(Error::Corrupt {
                    what: "export".into(),
                    detail: format!("record {i} has a key outside every table"),
                });
            }
            batch.put(key, v.to_vec());
        }
        let records = records.len();
        self.store.write(&batch)?;
        self.namespaces.remove(nsc.as_str());
        Ok(Moved { records, bytes: file.len() })
    }
}

/// The records of a decrypted plaintext (module docs), checked against its prologue.
pub(crate) fn parse(plain: &[u8]) -> Result<Vec<(&[u8], &[u8])>> {
    let mut at = 0;
    let prologue: serde_json::Value = serde_json::from_slice(field(plain, &mut at)?)
        .map_err(|e| Error::Corrupt { what: "export".into(), detail: e.to_string() })?;
    if prologue["format"] != "mnemo-export/1" {
        return Err(Error::Format(format!("unknown export format {}", prologue["format"])));
    }
    let mut records = Vec::new();
    while at < plain.len() {
        records.push((field(plain, &mut at)?, field(plain, &mut at)?));
    }
    if prologue["records"].as_u64() != Some(records.len() as u64) {
        return Err(Error::Corrupt {
            what: "export".into(),
            detail: format!(
                "{} records where the prologue says {}",
                records.len(),
                prologue["records"]
            ),
        });
    }
    Ok(records)
}

/// Authenticates and decrypts a whole file (module docs).
pub(crate) fn open(passphrase: &str, file: &[u8]) -> Result<Vec<u8>> {
    if file.len() < 6 || &file[..6] != MAGIC {
        return Err(Error::Format("this is not a mnemo export (no MNEMOX header)".into()));
    }
    if file.len() < HEADER {
        return Err(Error::Corrupt {
            what: "export".into(),
            detail: "the header is cut short".into(),
        });
    }
    if file[6] != VERSION {
        return Err(Error::Format(format!(
            "export format version {} is not readable by this mnemo (it reads version {VERSION}): \
             upgrade mnemo",
            file[6]
        )));
    }
    let word = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().expect("4 bytes"));
    let (log_n, r, p) = (file[7], word(8), word(12));
    if !cost_in_range(log_n, r, p) {
        return Err(Error::Format(format!(
            "scrypt cost log_n {log_n}, r {r}, p {p} is over 4 times the default cost (log_n \
             15, r 8, p 1): refused before deriving a key"
        )));
    }
    let (key, check) = derive(passphrase, &file[16..32], log_n, r, p)?;
    if check.as_slice() != &file[39..HEADER] {
        return Err(Error::Decrypt(
            "wrong passphrase (or a damaged header): nothing was imported".into(),
        ));
    }
    let aad = &file[..HEADER];
    let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&key));
    let mut stream = DecryptorBE32::from_aead(cipher, file[32..39].into());
    let damaged = |detail: String| Error::Corrupt { what: "export".into(), detail };
    let mut plain = Vec::new();
    let mut at = HEADER;
    loop {
        let len = file
            .get(at..at + 4)
            .ok_or_else(|| damaged(format!("cut short at byte {at}: the last chunk is missing")))?;
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        if !(TAG..=CHUNK + TAG).contains(&len) {
            return Err(damaged(format!("chunk at byte {at} claims {len} bytes")));
        }
        let sealed = file
            .get(at + 4..at + 4 + len)
            .ok_or_else(|| damaged(format!("cut short inside the chunk at byte {at}")))?;
        let end = at + 4 + len;
        if end == file.len() {
            let last = stream.decrypt_last(Payload { msg: sealed, aad }).map_err(|_| {
                damaged(format!("the last chunk, at byte {at}, fails authentication"))
            })?;
            plain.extend_from_slice(&last);
            return Ok(plain);
        }
        let chunk = stream
            .decrypt_next(Payload { msg: sealed, aad })
            .map_err(|_| damaged(format!("the chunk at byte {at} fails authentication")))?;
        plain.extend_from_slice(&chunk);
        at = end;
    }
}

#[cfg(test)]
mod cost_tests {
    use super::cost_in_range;

    #[test]
    fn an_import_reads_at_most_four_times_the_default_cost() {
        assert!(cost_in_range(15, 8, 1) && cost_in_range(17, 8, 1) && cost_in_range(15, 8, 4));
        assert!(cost_in_range(10, 8, 1), "cheaper is fine");
        // One step over: twice the memory, or twice the work.
        assert!(!cost_in_range(18, 8, 1) && !cost_in_range(17, 16, 1) && !cost_in_range(17, 8, 2));
        assert!(!cost_in_range(15, 8, 5) && !cost_in_range(22, 64, 16) && !cost_in_range(63, 1, 1));
        assert!(!cost_in_range(255, 8, 1) && !cost_in_range(15, 0, 1) && !cost_in_range(15, 8, 0));
    }
}
