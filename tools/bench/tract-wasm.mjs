// tract in wasm (mnemo's wasm32-unknown-unknown simd128 build) under Node, one thread.
import { join } from "node:path";
import { args, corpus, measure, mb, print, readFileSync } from "./common.mjs";

const { model, texts, iters, root, file } = args();
const glue = await import(join(root, "pkg/wasm/mnemo.js"));
const wasmBytes = readFileSync(join(root, "pkg/wasm/mnemo_bg.wasm"));
const t0 = performance.now();
const exports = glue.initSync({ module: wasmBytes });
const compiled = performance.now() - t0;
const onnx = readFileSync(join(model, file));
const tok = readFileSync(join(model, "tokenizer.json"));
const stages = { "compile + instantiate": compiled, "read files": performance.now() - t0 - compiled };
let last = performance.now();
const e = new glue.Embedder(onnx, tok, {
  name: "e5",
  cacheCapacity: 0,
  onStage: (name) => {
    stages[name] = performance.now() - last;
    last = performance.now();
  },
});
const load = performance.now() - t0;
// linear memory never shrinks: its size now is the load's peak (the file bytes copied in, the
// parse, type analysis and declutter)
const loadPeak = exports.memory.buffer.byteLength;
const t1 = performance.now();
e.embed(["warm"], "passage");
const first = performance.now() - t1;
const c = corpus(texts);
const res = await measure(c, iters, (set, batch) => e.embed(set.texts.slice(0, batch), "passage"));
print({
  runtime: `tract wasm (Node), ${file}`,
  load_ms: load,
  load_stages_ms: stages,
  first_embed_ms: first,
  ms_per_passage: res,
  wasm_memory_after_load_mb: mb(loadPeak),
  wasm_memory_mb: mb(exports.memory.buffer.byteLength),
  peak_rss_mb: mb(process.resourceUsage().maxRSS * 1024),
});
