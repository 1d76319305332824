"""Prints the tools/bench-embed comparison table from the sides' JSON lines (stdin)."""
import json
import sys

rows = [json.loads(line) for line in sys.stdin if line.strip().startswith("{")]

if "--ingest" in sys.argv:
    print("| ingest | 1 | 2 | 2 / 1 |")
    print("|---|---|---|---|")
    for r in rows:
        one, two = sorted(r["passages_per_s"].items())
        print(f"| {r['runtime']} | {one[1]:.1f} /s | {two[1]:.1f} /s | {r['two_over_one']:.2f}× |")
    print("\npassages per second, each thread or Web Worker with its own embedder.")
    sys.exit(0)

cols = ["t32_b1", "t32_b16", "t128_b1", "t128_b16"]
head = "| runtime | 32 tok, batch 1 | 32 tok, batch 16 | 128 tok, batch 1 | 128 tok, batch 16 | load ms | first embed ms | memory MB |"
print(head)
print("|" + "---|" * 8)


def mem(r):
    if "wasm_memory_mb" in r:
        return f"{r['wasm_memory_mb']:.0f} wasm heap / {r['peak_rss_mb']:.0f} peak RSS"
    return f"{r.get('rss_loaded_mb', 0):.0f} loaded / {r['peak_rss_mb']:.0f} peak RSS"


def stages(r):
    s = r.get("load_stages_ms")
    return "; ".join(f"{k} {v:.0f}" for k, v in s.items()) if s else ""


def line(r):
    ms = r["ms_per_passage"]
    return (f"| {r['runtime']} | " + " | ".join(f"{ms[c]:.2f}" for c in cols)
            + f" | {r['load_ms']:.0f} | {r['first_embed_ms']:.0f} | {mem(r)} |")


def ratio(a, b, label):
    ma, mb_ = a["ms_per_passage"], b["ms_per_passage"]
    return (f"| **{label}** | " + " | ".join(f"**{ma[c] / mb_[c]:.2f}×**" for c in cols)
            + f" | {a['load_ms'] / b['load_ms']:.2f}× | {to_first(a) / to_first(b):.2f}× to first embedding | |")


def to_first(r):
    """Bytes in hand to the first embedding: the load and the first call (tract optimises its
    plan lazily, on the first embedding)."""
    return r["load_ms"] + r["first_embed_ms"]


for prefix, peer in (("tract native", "onnxruntime"), ("tract wasm", "onnxruntime-web")):
    rb = next((r for r in rows if r["runtime"].startswith(peer)), None)
    if rb:
        print(line(rb))
    for ra in (r for r in rows if r["runtime"].startswith(prefix)):
        print(line(ra))
        if rb:
            print(ratio(ra, rb, "tract " + ra["runtime"].split(", ", 1)[1] + " / " + peer))
print("\nms per passage (median); single thread; same token ids on every side.")
print("\nLoad by stage, ms:")
for r in rows:
    if stages(r):
        print(f"- {r['runtime']}: {stages(r)}")
