"""Prints the tools/bench-embed comparison table from the sides' JSON lines (stdin)."""
import json
import sys

rows = [json.loads(line) for line in sys.stdin if line.strip().startswith("{")]
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


for prefix, peer in (("tract native", "onnxruntime"), ("tract wasm", "onnxruntime-web")):
    rb = next((r for r in rows if r["runtime"].startswith(peer)), None)
    if rb:
        print(line(rb))
    for ra in (r for r in rows if r["runtime"].startswith(prefix)):
        print(line(ra))
        if rb:
            print(ratio(ra, rb, "tract " + ra["runtime"].split(", ", 1)[1] + " / " + peer))
print("\nms per passage (median); single thread; same token ids on every side.")
