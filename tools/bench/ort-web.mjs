// onnxruntime-web, wasm backend (SIMD, 1 thread) under Node: the browser-world peer.
import { args, corpus, measure, mb, print, readFileSync } from "./common.mjs";
import { join } from "node:path";
import * as ort from "onnxruntime-web";

const { model, texts, iters } = args();
ort.env.wasm.numThreads = 1;
ort.env.wasm.simd = true;
const t0 = performance.now();
const session = await ort.InferenceSession.create(readFileSync(join(model, "model.onnx")), {
  executionProviders: ["wasm"],
  graphOptimizationLevel: "all",
});
const load = performance.now() - t0;
const c = corpus(texts);

function feeds(ids) {
  const b = ids.length;
  const s = Math.max(...ids.map((x) => x.length));
  const idt = new BigInt64Array(b * s);
  const mask = new BigInt64Array(b * s);
  ids.forEach((row, i) => row.forEach((v, j) => { idt[i * s + j] = BigInt(v); mask[i * s + j] = 1n; }));
  return {
    input_ids: new ort.Tensor("int64", idt, [b, s]),
    attention_mask: new ort.Tensor("int64", mask, [b, s]),
    token_type_ids: new ort.Tensor("int64", new BigInt64Array(b * s), [b, s]),
  };
}
const t1 = performance.now();
await session.run(feeds([c["32"].ids[0]]), ["sentence_embedding"]);
const first = performance.now() - t1;
const res = await measure(c, iters, (set, batch) => session.run(feeds(set.ids.slice(0, batch)), ["sentence_embedding"]));
print({
  runtime: "onnxruntime-web (Node, wasm SIMD)",
  load_ms: load,
  first_embed_ms: first,
  ms_per_passage: res,
  peak_rss_mb: mb(process.resourceUsage().maxRSS * 1024),
});
