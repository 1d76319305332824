// The wasm build in Debian's Chromium (V8 as in Node, but the browser's own build and flags):
// model.onnx and model.q4.onnx, fetched by the page, reproduce onnxruntime's reference
// embeddings, one by one and batched.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../../www/serve.mjs";
import { launch } from "./chromium.mjs";
import { modelDir } from "./model.mjs";

const root = resolve(import.meta.dirname, "../..");

test("Chromium: model.onnx and model.q4.onnx reproduce onnxruntime (cosine >= 0.9999)", async () => {
  const server = await serve(root, { aliases: { "/model/": modelDir() } });
  const context = await launch(mkdtempSync(join(tmpdir(), "mnemo-embed-chromium-")));
  try {
    const p = context.pages()[0] ?? (await context.newPage());
    const errors = [];
    p.on("pageerror", (e) => errors.push(e.message));
    await p.goto(`${server.url}/tests/browser/harness.html`);
    await p.waitForFunction(() => window.t !== undefined, null, { timeout: 60_000 }).catch(() => {
      throw new Error(`the harness did not load: ${errors.join("; ")}`);
    });
    const results = await p.evaluate(async () => {
      const { mnemo } = window.t;
      const { cases } = await (await fetch("/tests/fixtures/e5-small-latin-reference.json")).json();
      const split = (t) => /^(query|passage): (.*)$/s.exec(t).slice(1);
      const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
      const out = {};
      for (const file of ["model.onnx", "model.q4.onnx"]) {
        const { model, tokenizer } = await mnemo.fetchModel({ model: `/model/${file}`, tokenizer: "/model/tokenizer.json" });
        const e = new mnemo.Embedder(model, tokenizer);
        const single = cases.map((c) => {
          const [role, text] = split(c.text);
          return dot(e.embed([text], role).vectors, c.embedding);
        });
        const passages = cases.filter((c) => c.text.startsWith("passage: "));
        const batch = e.embed(passages.map((c) => split(c.text)[1]), "passage").vectors;
        const batched = passages.map((c, i) => dot(batch.subarray(i * 384, (i + 1) * 384), c.embedding));
        e.free();
        out[file] = { single, batched, texts: cases.map((c) => c.text) };
      }
      return out;
    });
    assert.deepEqual(errors, []);
    for (const [file, r] of Object.entries(results)) {
      assert.ok(r.single.length >= 4 && r.batched.length >= 2, `${file}: too few reference cases`);
      r.single.forEach((cos, i) => assert.ok(cos >= 0.9999, `${file}: cosine ${cos} for ${r.texts[i]}`));
      r.batched.forEach((cos) => assert.ok(cos >= 0.9999, `${file} batched: cosine ${cos}`));
    }
  } finally {
    await context.close();
    await server.close();
  }
});
