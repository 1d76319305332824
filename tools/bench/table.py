"""Prints the tools/bench-embed comparison table from the sides' JSON lines (stdin)."""
import json
import sys

rows = [json.loads(line) for line in sys.stdin if line.strip().startswith("{")]
by = {r["runtime"].split(" (")[0].split(" 1.")[0]: r for r in rows}
cols = ["t32_b1", "t32_b16", "t128_b1", "t128_b16"]
head = "| runtime | 32 tok, batch 1 | 32 tok, batch 16 | 128 tok, batch 1 | 128 tok, batch 16 | load ms | first embed ms | memory MB |"
print(head)
print("|" + "---|" * 8)


def mem(r):
    if "wasm_memory_mb" in r:
        return f"{r['wasm_memory_mb']:.0f} wasm heap / {r['peak_rss_mb']:.0f} peak RSS"
    return f"{r.get('rss_loaded_mb', 0):.0f} loaded / {r['peak_rss_mb']:.0f} peak RSS"


def line(r):
    ms = r["ms_per_passage"]
    return (f"| {r['runtime']} | " + " | ".join(f"{ms[c]:.2f}" for c in cols)
            + f" | {r['load_ms']:.0f} | {r['first_embed_ms']:.0f} | {mem(r)} |")


def ratio(a, b, label):
    ma, mb_ = a["ms_per_passage"], b["ms_per_passage"]
    return (f"| **{label}** | " + " | ".join(f"**{ma[c] / mb_[c]:.2f}×**" for c in cols)
            + f" | {a['load_ms'] / b['load_ms']:.2f}× | | |")


pairs = [("tract native", "onnxruntime", "tract / onnxruntime"),
         ("tract wasm", "onnxruntime-web", "tract wasm / onnxruntime-web")]
for a, b, label in pairs:
    ra = next((r for r in rows if r["runtime"].startswith(a)), None)
    rb = next((r for r in rows if r["runtime"].startswith(b)), None)
    for r in (ra, rb):
        if r:
            print(line(r))
    if ra and rb:
        print(ratio(ra, rb, label))
for r in rows:
    if "buckets" in r["runtime"]:
        print(line(r))
print("\nms per passage (median); single thread; same token ids on every side.")
