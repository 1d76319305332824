//! The record codec: every value the engine stores is one sealed, versioned, checksummed
//! envelope, little-endian throughout (so 32-bit wasm and 64-bit hosts read the same bytes).
//!
//! ```text
//! envelope := version:u8 kind:u8 payload_len:u32 payload crc32:u32
//!             (crc32 IEEE over every byte before it)
//! payload  := fields written by `Writer`, in the order the record's own docs give:
//!             u8 | u32 | u64 | i64 | f32 | f64 (LE, fixed width)
//!             bytes := len:u32 bytes;  str := bytes holding UTF-8
//!             var := LEB128 (7 bits a byte, low bits first), used by snapshots
//!             zvar := var of a signed integer's zigzag form (0, −1, 1, −2… as 0, 1, 2, 3…)
//! ```
//!
//! `version` is [`FORMAT_VERSION`]; a reader meeting a newer version refuses it with a typed
//! error instead of guessing. `kind` says which record type the payload holds.

use crate::error::{Error, Result};

/// The envelope format this build writes and reads.
pub const FORMAT_VERSION: u8 = 1;

/// Wraps `payload` of record type `kind` into an envelope.
pub fn seal(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 10);
    out.push(FORMAT_VERSION);
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Checks an envelope and returns its payload; `what` names the record in errors.
pub fn open<'a>(bytes: &'a [u8], kind: u8, what: &str) -> Result<&'a [u8]> {
    let corrupt = |detail: String| Error::Corrupt { what: what.to_string(), detail };
    if bytes.len() < 10 {
        return Err(corrupt(format!("{} bytes is shorter than an envelope", bytes.len())));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
        return Err(corrupt("checksum mismatch".into()));
    }
    if body[0] > FORMAT_VERSION {
        return Err(corrupt(format!(
            "format version {} is newer than this build's {FORMAT_VERSION}: upgrade mnemo",
            body[0]
        )));
    }
    if body[1] != kind {
        return Err(corrupt(format!("record kind {} where {kind} was expected", body[1])));
    }
    let len = u32::from_le_bytes(body[2..6].try_into().expect("4 bytes")) as usize;
    if len != body.len() - 6 {
        return Err(corrupt(format!("payload length {len} but {} bytes present", body.len() - 6)));
    }
    Ok(&body[6..])
}

/// Where an encoder of a large byte form puts its bytes: a [`Writer`] keeps them all, a
/// [`Window`] only a range of them, so a form too large to hold whole can be written a slice
/// at a time without being held (a snapshot's vector segment: `engine::persist::snapshot`).
pub trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);
    /// False when none of the next `n` bytes would be kept: the encoder may [`Sink::skip`]
    /// them instead of computing them.
    fn needs(&self, _n: usize) -> bool {
        true
    }
    /// Counts `n` bytes that [`Sink::needs`] said would not be kept (a [`Writer`], which keeps
    /// everything, is never asked to).
    fn skip(&mut self, _n: usize) {}
}

impl Sink for Writer {
    fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
}

/// A [`Sink`] that keeps the bytes at offsets `[start, end)` of what is put into it.
#[derive(Debug)]
pub struct Window {
    start: usize,
    end: usize,
    /// Bytes put or skipped so far.
    pos: usize,
    buf: Vec<u8>,
}

impl Window {
    /// A window on the `len` bytes from offset `start`.
    pub fn new(start: usize, len: usize) -> Self {
        Window { start, end: start.saturating_add(len), pos: 0, buf: Vec::new() }
    }
    /// The bytes kept.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

impl Sink for Window {
    fn put(&mut self, bytes: &[u8]) {
        let (from, to) = (self.pos, self.pos + bytes.len());
        let (lo, hi) = (from.max(self.start), to.min(self.end));
        if lo < hi {
            self.buf.extend_from_slice(&bytes[lo - from..hi - from]);
        }
        self.pos = to;
    }
    fn needs(&self, n: usize) -> bool {
        self.pos < self.end && self.pos + n > self.start
    }
    fn skip(&mut self, n: usize) {
        self.pos += n;
    }
}

/// Puts a length-prefixed section of `len` bytes that `write` produces, unless the sink
/// needs none of them.
pub fn section<S: Sink>(sink: &mut S, len: usize, write: impl FnOnce(&mut S)) {
    sink.put(&(len as u32).to_le_bytes());
    if sink.needs(len) {
        write(sink);
    } else {
        sink.skip(len);
    }
}

/// Appends fields to a payload.
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty payload.
    pub fn new() -> Self {
        Self::default()
    }
    /// An empty payload with room for `n` bytes: an encoder that knows about how long its
    /// payload is allocates once instead of doubling its way up.
    pub fn with_capacity(n: usize) -> Self {
        Self { buf: Vec::with_capacity(n) }
    }
    /// Appends a `u8`.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    /// Appends a LEB128 unsigned integer (see [`Reader::var`]).
    pub fn var(&mut self, v: u64) -> &mut Self {
        let (bytes, n) = leb128(v);
        self.buf.extend_from_slice(&bytes[..n]);
        self
    }
    /// Appends a signed integer as a LEB128 of its zigzag form (see [`Reader::zvar`]).
    pub fn zvar(&mut self, v: i64) -> &mut Self {
        self.var(zigzag(v))
    }
    /// Appends a `u32`.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends a `u64`.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends an `i64`.
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends an `f32`.
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends an `f64`.
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends length-prefixed bytes.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.buf.extend_from_slice(v);
        self
    }
    /// Appends raw bytes (a fixed-width array whose length the record already gave).
    pub fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(v);
        self
    }
    /// Appends a length-prefixed UTF-8 string.
    pub fn str(&mut self, v: &str) -> &mut Self {
        self.bytes(v.as_bytes())
    }
    /// Appends a list of strings (`count:u32` then each `str`).
    pub fn strs(&mut self, v: &[String]) -> &mut Self {
        self.u32(v.len() as u32);
        for s in v {
            self.str(s);
        }
        self
    }
    /// Appends an optional `i64` (`0:u8`, or `1:u8` then the value).
    pub fn opt_i64(&mut self, v: Option<i64>) -> &mut Self {
        match v {
            None => self.u8(0),
            Some(x) => self.u8(1).i64(x),
        }
    }
    /// The payload written so far.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads fields back from a payload, in the order they were written.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    rest: &'a [u8],
    what: &'a str,
}

impl<'a> Reader<'a> {
    /// Reads `payload`; `what` names the record in errors.
    pub fn new(payload: &'a [u8], what: &'a str) -> Self {
        Self { rest: payload, what }
    }

    /// Where the next field starts, as an offset into the payload of `len` bytes this reader
    /// was made with.
    pub fn offset_in(&self, len: usize) -> usize {
        len - self.rest.len()
    }

    /// The bytes not read yet (a caller that copies a field it has just read takes them
    /// before reading it).
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Bytes not read yet (bounds preallocation by what a corrupt count claims).
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// A corruption error naming this record.
    pub fn corrupt(&self, detail: String) -> Error {
        Error::Corrupt { what: self.what.to_string(), detail }
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(Error::Corrupt {
                what: self.what.to_string(),
                detail: format!("payload ends {} bytes early", n - self.rest.len()),
            });
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
    /// Reads a LEB128 unsigned integer (7 bits per byte, low first; at most 10 bytes).
    #[inline]
    pub fn var(&mut self) -> Result<u64> {
        // Snapshots hold millions of these (postings, lengths): one-byte values (most of them)
        // are answered here, inlined where they are read.
        if let Some((&b, tail)) = self.rest.split_first() {
            if b < 0x80 {
                self.rest = tail;
                return Ok(u64::from(b));
            }
        }
        self.var_long()
    }

    /// Reads a signed integer written as the LEB128 of its zigzag form (0, −1, 1, −2… as
    /// 0, 1, 2, 3…), so that small magnitudes of either sign take a byte.
    pub fn zvar(&mut self) -> Result<i64> {
        self.var().map(unzigzag)
    }

    /// [`Reader::var`] past its first byte's fast path: one pass over at most 10 bytes.
    #[cold]
    fn var_long(&mut self) -> Result<u64> {
        let rest = self.rest;
        let mut v = 0u64;
        for (i, &b) in rest.iter().take(10).enumerate() {
            v |= u64::from(b & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
            if b < 0x80 {
                self.rest = &rest[i + 1..];
                return Ok(v);
            }
        }
        if rest.len() < 10 {
            self.rest = &[];
            return Err(self.corrupt("payload ends inside a varint".into()));
        }
        Err(self.corrupt("varint longer than 10 bytes".into()))
    }
    /// Reads a `u8`.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    /// Reads a `u32`.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    /// Reads a `u64`.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// Reads an `i64`.
    pub fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    /// Reads an `f32`.
    pub fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array()?))
    }
    /// Reads an `f64`.
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    /// Reads length-prefixed bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// Reads a length-prefixed UTF-8 string.
    pub fn str(&mut self) -> Result<&'a str> {
        let b = self.bytes()?;
        std::str::from_utf8(b).map_err(|e| Error::Corrupt {
            what: self.what.to_string(),
            detail: format!("string is not UTF-8: {e}"),
        })
    }
    /// Reads `n` raw bytes (a fixed-width array whose length the record already gave).
    pub fn take_bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        self.take(n)
    }
    /// Reads a list of strings.
    pub fn strs(&mut self) -> Result<Vec<String>> {
        let n = self.u32()? as usize;
        // Each string costs at least its 4-byte length, so a damaged count cannot allocate wildly.
        let mut out = Vec::with_capacity(n.min(self.rest.len() / 4));
        for _ in 0..n {
            out.push(self.str()?.to_string());
        }
        Ok(out)
    }
    /// Reads an optional `i64`.
    pub fn opt_i64(&mut self) -> Result<Option<i64>> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.i64()?)),
            t => Err(Error::Corrupt {
                what: self.what.to_string(),
                detail: format!("option tag {t} is neither 0 nor 1"),
            }),
        }
    }
    /// Fails unless every byte was read (a record with trailing bytes is not the one expected).
    pub fn end(self) -> Result<()> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(Error::Corrupt {
                what: self.what.to_string(),
                detail: format!("{} unread trailing bytes", self.rest.len()),
            })
        }
    }
}

/// `v` as LEB128 (7 bits a byte, low bits first): the bytes, and how many of them it takes.
#[inline]
pub fn leb128(mut v: u64) -> ([u8; 10], usize) {
    let (mut out, mut n) = ([0u8; 10], 0);
    while v >= 0x80 {
        out[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    (out, n + 1)
}

/// `v` in zigzag form: 0, −1, 1, −2… as 0, 1, 2, 3….
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The signed integer whose zigzag form is `v`.
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut w = Writer::new();
        w.u8(7).u32(70_000).u64(u64::MAX).i64(-5).f32(0.25).f64(-1.5).str("café").bytes(&[0, 255]);
        seal(3, &w.finish())
    }

    #[test]
    fn fields_round_trip_through_an_envelope() {
        let env = sample();
        let mut r = Reader::new(open(&env, 3, "sample").unwrap(), "sample");
        assert_eq!(r.u8().unwrap(), 7);
        assert_eq!(r.u32().unwrap(), 70_000);
        assert_eq!(r.u64().unwrap(), u64::MAX);
        assert_eq!(r.i64().unwrap(), -5);
        assert_eq!(r.f32().unwrap(), 0.25);
        assert_eq!(r.f64().unwrap(), -1.5);
        assert_eq!(r.str().unwrap(), "café");
        assert_eq!(r.bytes().unwrap(), &[0, 255]);
        r.end().unwrap();
    }

    #[test]
    fn the_byte_layout_is_fixed() {
        let env = seal(9, &[1, 2]);
        assert_eq!(&env[..8], &[FORMAT_VERSION, 9, 2, 0, 0, 0, 1, 2]);
        assert_eq!(env.len(), 12);
    }

    #[test]
    fn every_flipped_bit_is_caught() {
        let env = sample();
        for i in 0..env.len() * 8 {
            let mut bad = env.clone();
            bad[i / 8] ^= 1 << (i % 8);
            let err = open(&bad, 3, "sample").unwrap_err();
            assert_eq!(err.code(), "CORRUPT", "bit {i}");
        }
    }

    #[test]
    fn wrong_kind_newer_version_and_short_payloads_are_typed_errors() {
        let env = sample();
        assert!(open(&env, 4, "x").unwrap_err().to_string().contains("kind 3"));
        let mut newer = env[..env.len() - 4].to_vec();
        newer[0] = FORMAT_VERSION + 1;
        let crc = crc32fast::hash(&newer);
        newer.extend_from_slice(&crc.to_le_bytes());
        assert!(open(&newer, 3, "x").unwrap_err().to_string().contains("upgrade mnemo"));
        let mut r = Reader::new(&[1, 0], "x");
        assert_eq!(r.u32().unwrap_err().code(), "CORRUPT");
        assert_eq!(Reader::new(&[1], "x").end().unwrap_err().code(), "CORRUPT");
        assert!(open(&[1, 2, 3], 3, "x").is_err());
    }
}
