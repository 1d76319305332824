"""onnxruntime (Python, CPU, 1 intra-op thread): the native peer for tools/bench-embed."""
import argparse
import json
import os
import resource
import statistics
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def trim_heap():
    """Hands glibc's free pages back, as the tract side does, so "loaded" is what the session
    holds, not what its load needed on the way."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--texts", required=True)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--file", default="model.onnx")
    a = ap.parse_args()
    before = rss_mb()
    t = time.perf_counter()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(os.path.join(a.model, a.file), so, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    load_ms = (time.perf_counter() - t) * 1e3

    def embed(texts):
        encs = [tok.encode("passage: " + x).ids for x in texts]
        s = max(len(e) for e in encs)
        ids = np.zeros((len(encs), s), np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encs):
            ids[i, :len(e)] = e
            mask[i, :len(e)] = 1
        return sess.run(["sentence_embedding"], {"input_ids": ids, "attention_mask": mask,
                                                 "token_type_ids": np.zeros_like(ids)})[0]

    t = time.perf_counter()
    embed(["warm"])
    first_ms = (time.perf_counter() - t) * 1e3
    trim_heap()
    loaded = rss_mb()
    corpus = json.load(open(a.texts))
    res = {}
    for tokens in ("32", "128"):
        texts = corpus[tokens]["texts"]
        for batch in (1, 16):
            embed(texts[:batch])
            runs = a.iters * 4 if batch == 1 else a.iters
            samples = []
            for _ in range(runs):
                t = time.perf_counter()
                embed(texts[:batch])
                samples.append((time.perf_counter() - t) * 1e3 / batch)
            res[f"t{tokens}_b{batch}"] = statistics.median(samples)
    print(json.dumps({
        "runtime": f"onnxruntime {ort.__version__} native (1 thread)"
                   + ("" if a.file == "model.onnx" else f", {a.file}"),
        "load_ms": load_ms, "first_embed_ms": first_ms, "ms_per_passage": res,
        "rss_loaded_mb": loaded - before,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if __name__ == "__main__":
    main()
