// The wasm build (wasm32-unknown-unknown, simd128) loads the real model in Node and
// reproduces onnxruntime's reference embeddings.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { loadWasm, modelDir, referenceCases } from "./model.mjs";

const { Embedder } = await loadWasm();
const dir = modelDir();
const embedder = new Embedder(readFileSync(join(dir, "model.onnx")), readFileSync(join(dir, "tokenizer.json")));

function split(text) {
  const m = /^(query|passage): (.*)$/s.exec(text);
  assert.ok(m, `reference text without prefix: ${text}`);
  return [m[1], m[2]];
}

const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

test("token ids match the reference tokenizer", () => {
  for (const c of referenceCases()) {
    const [role, text] = split(c.text);
    assert.deepEqual(Array.from(embedder.tokenIds(text, role)), c.ids, c.text);
  }
});

test("embeddings reproduce onnxruntime (cosine >= 0.9999), one by one and batched", () => {
  const cases = referenceCases();
  for (const c of cases) {
    const [role, text] = split(c.text);
    const out = embedder.embed([text], role);
    assert.equal(out.dim, 384);
    const cos = dot(out.vectors, c.embedding);
    assert.ok(cos >= 0.9999, `cosine ${cos} for ${c.text}`);
    assert.equal(out.tokens[0], c.ids.length);
  }
  const passages = cases.filter((c) => c.text.startsWith("passage: "));
  const fresh = new Embedder(readFileSync(join(dir, "model.onnx")), readFileSync(join(dir, "tokenizer.json")));
  const out = fresh.embed(passages.map((c) => split(c.text)[1]), "passage");
  passages.forEach((c, i) => {
    const v = out.vectors.subarray(i * 384, (i + 1) * 384);
    const cos = dot(v, c.embedding);
    assert.ok(cos >= 0.9999, `batched cosine ${cos} for ${c.text}`);
  });
  fresh.free();
});

test("polarity and truncation are reported", () => {
  const out = embedder.embed(["Never use semicolons", "Use semicolons", "word ".repeat(1000)], "passage");
  assert.deepEqual(Array.from(out.negated), [1, 0, 0]);
  assert.deepEqual(Array.from(out.truncated), [0, 0, 1]);
  assert.equal(out.tokens[2], 512);
});

test("bad input is a JS Error with a stable code", () => {
  assert.throws(() => embedder.embed(["  "], "passage"), (e) => e instanceof Error && e.code === "INVALID_INPUT");
  assert.throws(() => embedder.embed(["x"], "sideways"), (e) => e.code === "INVALID_INPUT");
  assert.throws(() => new Embedder(new Uint8Array([1, 2, 3]), new Uint8Array()), (e) => e.code === "MODEL_LOAD" && /tokenizer.json/.test(e.message));
  assert.match(embedder.modelId, /^multilingual-e5-small-latin@[0-9a-f]{12}$/);
});

test("a model compiled to NNEF loads by stage, under the same id, and embeds the same", () => {
  const tok = readFileSync(join(dir, "tokenizer.json"));
  const archive = Embedder.compile(readFileSync(join(dir, "model.onnx")), tok);
  assert.ok(archive instanceof Uint8Array && archive.length > 1_000_000);
  const stages = [];
  const compiled = new Embedder(archive, tok, { onStage: (s) => stages.push(s) });
  assert.deepEqual(stages, ["model id", "tokenizer", "read archive"], "no parse, analysis or declutter");
  assert.equal(compiled.modelId, embedder.modelId);
  for (const c of referenceCases()) {
    const [role, text] = split(c.text);
    const cos = dot(compiled.embed([text], role).vectors, c.embedding);
    assert.ok(cos >= 0.9999, `compiled: cosine ${cos} for ${c.text}`);
  }
  const onnxStages = [];
  new Embedder(readFileSync(join(dir, "model.onnx")), tok, { onStage: (s) => onnxStages.push(s) });
  assert.deepEqual(onnxStages, ["model id", "tokenizer", "parse", "type analysis", "declutter", "fuse"]);
  assert.throws(() => new Embedder(archive, tok, { onStage: 3 }), /onStage must be a function/);
});

// model.q4.onnx keeps every weight Q4_0 (4.5 bits) in memory; in wasm its matmuls run on the
// f32 GEMM kernel, a 4-row panel widened to f32 at a time. Its weights are the 4-bit weights
// the reference was computed from, so the embeddings match as closely as model.onnx's.
test("model.q4.onnx and its compiled archive reproduce onnxruntime", () => {
  const tok = readFileSync(join(dir, "tokenizer.json"));
  const q4 = new Embedder(readFileSync(join(dir, "model.q4.onnx")), tok, { name: "e5-q4" });
  const archive = Embedder.compile(readFileSync(join(dir, "model.q4.onnx")), tok);
  const compiled = new Embedder(archive, tok, { name: "e5-q4" });
  assert.equal(compiled.modelId, q4.modelId);
  const cases = referenceCases();
  for (const [label, e] of [["model.q4.onnx", q4], ["model.q4.nnef.tar", compiled]]) {
    for (const c of cases) {
      const [role, text] = split(c.text);
      const cos = dot(e.embed([text], role).vectors, c.embedding);
      assert.ok(cos >= 0.9999, `${label}: cosine ${cos} for ${c.text}`);
    }
    const passages = cases.filter((c) => c.text.startsWith("passage: "));
    const batch = e.embed(passages.map((c) => split(c.text)[1]), "passage").vectors;
    passages.forEach((c, i) => {
      const cos = dot(batch.subarray(i * 384, (i + 1) * 384), c.embedding);
      assert.ok(cos >= 0.9999, `${label} batched: cosine ${cos} for ${c.text}`);
    });
  }
});

// The memory-capped configuration (an extension, a phone): a fresh wasm instance that loads the
// compiled Q4_0 archive and embeds a batch with a 512-token text stays within 128 MiB of linear
// memory, the peak, since wasm memory never shrinks. model.onnx needs about 390 MB, and the
// same call in one forward pass about 200 MB (each 512-token text ~25 MB of activations): the
// default padded-token bound per pass (maxBatchTokens, 1024) is what keeps it under.
test("the compiled Q4_0 model loads and embeds within 128 MiB of wasm memory", async () => {
  const { Worker } = await import("node:worker_threads");
  const tok = readFileSync(join(dir, "tokenizer.json"));
  const archive = Embedder.compile(readFileSync(join(dir, "model.q4.onnx")), tok);
  const texts = referenceCases().filter((c) => c.text.startsWith("passage: ")).map((c) => split(c.text)[1]);
  const long = Array.from({ length: 40 }, (_, i) => `Invoice ${i} for order ${i * 7} shipped late.`).join(" ");
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    const { readFileSync } = require("node:fs");
    (async () => {
      const glue = await import(workerData.glue);
      glue.initSync({ module: readFileSync(workerData.wasm) });
      const e = new glue.Embedder(workerData.archive, workerData.tok, { name: "e5-q4" });
      const out = e.embed([...workerData.texts, workerData.long], "passage");
      parentPort.postMessage({ bytes: glue.memoryBytes(), dim: out.dim, truncated: out.truncated });
    })().catch((err) => parentPort.postMessage({ error: String(err) }));
  `;
  const { root } = await import("./model.mjs");
  const worker = new Worker(source, {
    eval: true,
    workerData: { glue: join(root, "pkg/wasm/mnemo.js"), wasm: join(root, "pkg/wasm/mnemo_bg.wasm"), archive, tok, texts, long },
  });
  const msg = await new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  await worker.terminate();
  assert.equal(msg.error, undefined, msg.error);
  assert.equal(msg.dim, 384);
  assert.throws(() => new Embedder(archive, tok, { maxBatchTokens: -1 }), /maxBatchTokens must be a non-negative integer/);
  assert.ok(msg.bytes <= 128 * 2 ** 20, `wasm memory ${(msg.bytes / 2 ** 20).toFixed(1)} MiB`);
});
