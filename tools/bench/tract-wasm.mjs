// tract in wasm (mnemo's wasm32-unknown-unknown simd128 build) under Node, one thread.
import { join } from "node:path";
import { args, corpus, measure, mb, print, readFileSync } from "./common.mjs";

const { model, texts, iters, root, file } = args();
const glue = await import(join(root, `pkg/${process.env.MNEMO_PKG ?? "wasm"}/mnemo.js`));
const wasmBytes = readFileSync(join(root, `pkg/${process.env.MNEMO_PKG ?? "wasm"}/mnemo_bg.wasm`));
const t0 = performance.now();
const exports = glue.initSync({ module: wasmBytes });
const onnx = readFileSync(join(model, file));
const tok = readFileSync(join(model, "tokenizer.json"));
const e = new glue.Embedder(onnx, tok, { name: "e5", cacheCapacity: 0 });
const load = performance.now() - t0;
const t1 = performance.now();
e.embed(["warm"], "passage");
const first = performance.now() - t1;
const c = corpus(texts);
const res = await measure(c, iters, (set, batch) => e.embed(set.texts.slice(0, batch), "passage"));
print({
  runtime: `tract wasm (Node), ${file}`,
  load_ms: load,
  first_embed_ms: first,
  ms_per_passage: res,
  wasm_memory_mb: mb(exports.memory.buffer.byteLength),
  peak_rss_mb: mb(process.resourceUsage().maxRSS * 1024),
});
