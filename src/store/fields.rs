//! Bytes that arrive in pieces — a snapshot part's chunks, handed over a few at a time — read
//! as a sequence of fields, so that a decoder never needs the whole in one buffer.
//!
//! A decoder ([`Fields`]) names each field before it arrives: its length, and whether its bytes
//! are only read ([`Want::Read`]: collected in a scratch buffer that is reused, decoded, then
//! dropped), kept as they are ([`Want::Keep`]: collected into a buffer of exactly that length,
//! which the decoder keeps, e.g. a segment's int8 rows or an episodes part's records). The
//! [`Cutter`] cuts the arriving bytes accordingly. So a part of `n` bytes is held at most once,
//! in the buffers that stay, plus the largest field that is read and dropped.
//!
//! Every length a decoder names is checked against the bytes the whole still has to bring
//! (given up front, e.g. by a snapshot head), and buffers are reserved with
//! `try_reserve_exact`: damaged bytes give a [`Error::Corrupt`], never an allocation the
//! process cannot survive.

use crate::error::{Error, Result};

/// The next field a decoder wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    /// `n` bytes to read and drop.
    Read(usize),
    /// `n` bytes to keep, in a buffer of exactly that size.
    Keep(usize),
    /// Nothing more: the whole ends here.
    Done,
}

/// A field, whole.
pub(crate) enum Field<'a> {
    /// A [`Want::Read`] field; the bytes are the cutter's, reused for the next field.
    Read(&'a [u8]),
    /// A [`Want::Keep`] field.
    Keep(Vec<u8>),
}

/// A decoder of fields: it names the first field, then takes each field whole and names the
/// next.
pub(crate) trait Fields {
    /// What the bytes are, for errors ("vector segment").
    const WHAT: &'static str;
    /// The first field.
    fn first(&self) -> Want;
    /// Takes the field just collected and names the next.
    fn take(&mut self, field: Field) -> Result<Want>;
}

/// Read fields of at most this size keep their scratch buffer for the next field; a larger
/// one (a BM25 section) is freed once taken, so it is not held while what follows arrives.
const SCRATCH_KEPT: usize = 64 * 1024;

/// Cuts bytes that arrive in pieces into the fields a [`Fields`] decoder names.
pub(crate) struct Cutter<F: Fields> {
    fields: F,
    want: Want,
    /// Bytes the whole has still to bring.
    left: usize,
    scratch: Vec<u8>,
    keep: Vec<u8>,
}

impl<F: Fields> Cutter<F> {
    /// A cutter for a whole of `len` bytes, decoded by `fields`.
    pub fn new(fields: F, len: usize) -> Result<Self> {
        let mut cutter =
            Cutter { want: Want::Done, fields, left: len, scratch: Vec::new(), keep: Vec::new() };
        let first = cutter.fields.first();
        cutter.expect(first)?;
        Ok(cutter)
    }

    /// Takes the next piece of the whole.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            match self.want {
                Want::Done => {
                    return Err(self.corrupt(format!("{} bytes past its end", bytes.len())))
                }
                Want::Read(n) => fill(&mut self.scratch, n, &mut bytes),
                Want::Keep(n) => fill(&mut self.keep, n, &mut bytes),
            }
            self.settle()?;
        }
        Ok(())
    }

    /// The decoder, once the whole has arrived and it wants nothing more.
    pub fn finish(self) -> Result<F> {
        match self.want {
            Want::Done => Ok(self.fields),
            want => Err(self.corrupt(format!("it ends inside a field ({want:?})"))),
        }
    }

    /// Hands the current field over while it is whole (a field may be empty).
    fn settle(&mut self) -> Result<()> {
        loop {
            let next = match self.want {
                Want::Read(n) if self.scratch.len() == n => {
                    let next = self.fields.take(Field::Read(&self.scratch))?;
                    self.scratch.clear();
                    if self.scratch.capacity() > SCRATCH_KEPT {
                        self.scratch = Vec::new();
                    }
                    next
                }
                Want::Keep(n) if self.keep.len() == n => {
                    self.fields.take(Field::Keep(std::mem::take(&mut self.keep)))?
                }
                _ => return Ok(()),
            };
            self.expect(next)?;
        }
    }

    /// Makes room for the field `want` names, checked against what the whole has left.
    fn expect(&mut self, want: Want) -> Result<()> {
        let bytes = match want {
            Want::Read(n) | Want::Keep(n) => n,
            Want::Done => 0,
        };
        if bytes > self.left {
            return Err(self.corrupt(format!("a field ({want:?}) past its {} bytes", self.left)));
        }
        if want == Want::Done && self.left > 0 {
            return Err(self.corrupt(format!("{} bytes past its end", self.left)));
        }
        let reserved = match want {
            Want::Read(n) => self.scratch.try_reserve_exact(n),
            Want::Keep(n) => self.keep.try_reserve_exact(n),
            Want::Done => Ok(()),
        };
        if reserved.is_err() {
            return Err(self.corrupt(format!("not enough memory for a field of {bytes} bytes")));
        }
        self.left -= bytes;
        self.want = want;
        Ok(())
    }

    fn corrupt(&self, detail: String) -> Error {
        Error::Corrupt { what: F::WHAT.to_string(), detail }
    }
}

/// The little-endian `u32` of a 4-byte field (0 for a field of another size, which a decoder
/// that asked for `Want::Read(4)` never gets).
pub(crate) fn word(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().unwrap_or([0; 4]))
}

/// Moves bytes from the front of `bytes` into `buf` until it holds `n`.
fn fill(buf: &mut Vec<u8>, n: usize, bytes: &mut &[u8]) {
    let (now, rest) = bytes.split_at((n - buf.len()).min(bytes.len()));
    buf.extend_from_slice(now);
    *bytes = rest;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len:u32 bytes×len` read, then `n:u32 (u32)×n` read, then the rest kept.
    #[derive(Default)]
    struct Demo {
        step: u8,
        read: Vec<u8>,
        words: Vec<u8>,
        kept: Vec<u8>,
        rest: usize,
    }

    impl Fields for Demo {
        const WHAT: &'static str = "demo";
        fn first(&self) -> Want {
            Want::Read(4)
        }
        fn take(&mut self, field: Field) -> Result<Want> {
            self.step += 1;
            let int = |f: &Field| match f {
                Field::Read(b) => u32::from_le_bytes(b[..4].try_into().unwrap()) as usize,
                _ => unreachable!(),
            };
            Ok(match (self.step, field) {
                (1, f) => Want::Read(int(&f)),
                (2, Field::Read(b)) => {
                    self.read = b.to_vec();
                    Want::Read(4)
                }
                (3, f) => Want::Read(int(&f) * 4),
                (4, Field::Read(w)) => {
                    self.words = w.to_vec();
                    Want::Keep(self.rest)
                }
                (5, Field::Keep(k)) => {
                    self.kept = k;
                    Want::Done
                }
                _ => unreachable!(),
            })
        }
    }

    fn whole() -> Vec<u8> {
        let mut b = 3u32.to_le_bytes().to_vec();
        b.extend([7, 8, 9]);
        b.extend(2u32.to_le_bytes());
        b.extend(0xA1B2_C3D4u32.to_le_bytes());
        b.extend(5u32.to_le_bytes());
        b.extend([1, 2, 3, 4, 5]);
        b
    }

    #[test]
    fn any_cut_of_the_bytes_gives_the_same_fields() {
        let b = whole();
        for size in 1..=b.len() {
            let mut c = Cutter::new(Demo { rest: 5, ..Demo::default() }, b.len()).unwrap();
            for piece in b.chunks(size) {
                c.push(piece).unwrap();
            }
            let d = c.finish().unwrap();
            assert_eq!(d.read, [7, 8, 9], "pieces of {size}");
            assert_eq!(d.words, [0xD4, 0xC3, 0xB2, 0xA1, 5, 0, 0, 0], "pieces of {size}");
            assert_eq!(d.kept, [1, 2, 3, 4, 5], "pieces of {size}");
        }
    }

    #[test]
    fn lengths_past_the_whole_and_bytes_past_the_end_are_refused() {
        let b = whole();
        // A field that names more than the whole brings.
        let mut c = Cutter::new(Demo { rest: 6, ..Demo::default() }, b.len()).unwrap();
        assert!(matches!(c.push(&b), Err(Error::Corrupt { .. })));
        // A whole that ends before its last field.
        let mut c = Cutter::new(Demo { rest: 5, ..Demo::default() }, b.len()).unwrap();
        c.push(&b[..b.len() - 1]).unwrap();
        assert!(matches!(c.finish(), Err(Error::Corrupt { .. })));
        // Bytes after the decoder is done.
        let mut c = Cutter::new(Demo { rest: 4, ..Demo::default() }, b.len()).unwrap();
        assert!(c.push(&b).is_err());
    }
}
