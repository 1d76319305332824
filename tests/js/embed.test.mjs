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
