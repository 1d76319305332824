// Ingest throughput in Debian's Chromium: passages/s with 1 and with 2 Web Workers, each its
// own wasm instance and embedder, on the passages `cargo bench --bench embed -- --ingest
// --texts FILE` wrote (the native side's workload). Prints one JSON object. Not a test.
//   node tools/bench/ingest-chromium.mjs --root ROOT --model DIR --texts FILE
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../www/serve.mjs";
import { launch } from "../../tests/js/chromium.mjs";
import { args } from "./common.mjs";

const { root, model, texts } = args();
const passages = JSON.parse(readFileSync(texts, "utf8")).texts;
const server = await serve(root, { aliases: { "/model/": model } });
const context = await launch(mkdtempSync(join(tmpdir(), "mnemo-ingest-")));
try {
  const page = await context.newPage();
  await page.goto(`${server.url}/pkg/package.json`); // any page of this origin
  const out = await page.evaluate(async (passages) => {
    const run = async (n) => {
      const workers = Array.from({ length: n }, () =>
        new Worker("/tools/bench/ingest-worker.js", { type: "module" }));
      const reply = (w) => new Promise((ok, fail) => {
        w.onmessage = ({ data }) => (data.error ? fail(new Error(data.error)) : ok(data));
      });
      const ready = workers.map(reply);
      workers.forEach((w) => w.postMessage({ model: "/model/model.onnx", tokenizer: "/model/tokenizer.json" }));
      await Promise.all(ready);
      const t = performance.now();
      const done = workers.map(reply);
      workers.forEach((w, i) => w.postMessage({ texts: passages.filter((_, j) => j % n === i) }));
      await Promise.all(done);
      const perS = passages.length / ((performance.now() - t) / 1000);
      workers.forEach((w) => w.terminate());
      return perS;
    };
    const one = await run(1);
    const two = await run(2);
    return { one, two };
  }, passages);
  console.log(JSON.stringify({
    runtime: "tract wasm (Chromium Web Workers), model.onnx, ingest (same passages, batches of 16)",
    passages_per_s: { workers_1: out.one, workers_2: out.two },
    two_over_one: out.two / out.one,
  }));
} finally {
  await context.close();
  server.close();
}
