// The embedder runs off the main thread: a worker (worker_threads here, a Web Worker in a
// page) loads the wasm build and the model, embeds, and posts the vectors back, while the main
// thread's event loop keeps turning.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Worker } from "node:worker_threads";

import { modelDir, referenceCases, root } from "./model.mjs";

const workerSource = `
  const { parentPort, workerData } = require("node:worker_threads");
  const { readFileSync } = require("node:fs");
  const { join } = require("node:path");
  (async () => {
    const glue = await import(join(workerData.root, "pkg/wasm/mnemo.js"));
    glue.initSync({ module: readFileSync(join(workerData.root, "pkg/wasm/mnemo_bg.wasm")) });
    const e = new glue.Embedder(
      readFileSync(join(workerData.dir, "model.onnx")),
      readFileSync(join(workerData.dir, "tokenizer.json")),
    );
    const out = e.embed(workerData.texts, "passage");
    parentPort.postMessage({ vectors: out.vectors }, [out.vectors.buffer]);
  })().catch((err) => parentPort.postMessage({ error: String(err) }));
`;

test("the embedder runs in a worker while the main thread stays responsive", async () => {
  const cases = referenceCases().filter((c) => c.text.startsWith("passage: ")).slice(0, 3);
  const texts = cases.map((c) => c.text.slice("passage: ".length));
  const worker = new Worker(workerSource, { eval: true, workerData: { root, dir: modelDir(), texts } });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const msg = await new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  clearInterval(timer);
  await worker.terminate();
  assert.equal(msg.error, undefined, msg.error);
  assert.ok(ticks > 5, `main thread ran ${ticks} timer ticks while the worker loaded and embedded`);
  cases.forEach((c, i) => {
    const v = msg.vectors.subarray(i * 384, (i + 1) * 384);
    const cos = v.reduce((s, x, j) => s + x * c.embedding[j], 0);
    assert.ok(cos >= 0.9999, `cosine ${cos} for ${c.text}`);
  });
});
