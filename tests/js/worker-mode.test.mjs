// MnemoWorker in Debian's Chromium with the real model: the Mnemo API with the engine in a Web
// Worker the package starts itself. The page keeps running while the worker embeds: the
// longest pause between a 5 ms timer's ticks during a long embedding is compared with the
// same call made by Mnemo on the page's own thread, in the same run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../../www/serve.mjs";
import { launch } from "./chromium.mjs";
import { modelDir } from "./model.mjs";
import { METHODS } from "../../pkg/src/worker/client.js";
import { Mnemo } from "../../pkg/src/entry-node.js";

const root = resolve(import.meta.dirname, "../..");

test("MnemoWorker forwards every method Mnemo has", () => {
  const own = Object.getOwnPropertyNames(Mnemo.prototype).filter((n) => n !== "constructor");
  assert.deepEqual([...own].sort(), [...METHODS].sort());
});

test("MnemoWorker: the Mnemo API off the page's thread, which stays responsive while it embeds", async () => {
  const server = await serve(root, { aliases: { "/model/": modelDir() } });
  const context = await launch(mkdtempSync(join(tmpdir(), "mnemo-worker-mode-")));
  try {
    const p = context.pages()[0] ?? (await context.newPage());
    const errors = [];
    p.on("pageerror", (e) => errors.push(e.message));
    await p.goto(`${server.url}/tests/browser/harness.html`);
    await p.waitForFunction(() => window.t !== undefined, null, { timeout: 60_000 });
    const r = await p.evaluate(async () => {
      const { mnemo } = window.t;
      const files = { model: "/model/model.onnx", tokenizer: "/model/tokenizer.json" };
      const progress = [];
      const worker = await mnemo.MnemoWorker.open({ storage: { indexedDb: "worker-mode" }, model: files, onProgress: (e) => progress.push(e.file) });
      const { model, tokenizer } = await mnemo.fetchModel(files);
      const page = await mnemo.Mnemo.open(new mnemo.MemoryStorage(), { embedder: new mnemo.Embedder(model, tokenizer) });
      // A long passage (past 300 tokens): one embedding is a long synchronous computation.
      const long = Array.from({ length: 60 }, (_, i) => `Order ${i} for Bertelli and Co shipped with invoice INV-${1000 + i} on time.`).join(" ");
      async function longestPause(call) {
        let last = performance.now();
        let worst = 0;
        const timer = setInterval(() => {
          const now = performance.now();
          worst = Math.max(worst, now - last);
          last = now;
        }, 5);
        for (let i = 0; i < 3; i++) {
          await call(i);
          await new Promise((r) => setTimeout(r, 20)); // the page's turn between calls
        }
        clearInterval(timer);
        return Math.max(worst, performance.now() - last);
      }
      const onPage = await longestPause((i) => page.remember("ana", { text: `${long} (${i})`, createdAt: 1_717_200_000_000 + i }));
      const inWorker = await longestPause((i) => worker.remember("ana", { text: `${long} (${i})`, createdAt: 1_717_200_000_000 + i }));
      await worker.remember("ana", { text: "Marco Bertelli asked for the Como warehouse", createdAt: 1_717_300_000_000 });
      const recall = await worker.recall("ana", { text: "which warehouse does Marco want?", k: 1 }, { now: 1_717_400_000_000 });
      const ctx = await worker.context("ana", { task: "Reply to Marco about the delivery", total: 300 }, { now: 1_717_400_000_000 });
      const scenario = await worker.demoScenario({ days: 7 });
      const refused = await worker.replayScenario(scenario, { onNight: () => {} }).catch((e) => e.code);
      const badStorage = await mnemo.MnemoWorker.open({ storage: { kv: {} } }).catch((e) => e.code);
      const badOption = await mnemo.MnemoWorker.open({ embed: async () => [] }).catch((e) => e.code);
      const stats = await worker.stats("ana");
      worker.terminate();
      const afterTerminate = await worker.stats("ana").then(() => "answered", (e) => e.code);
      return {
        onPage, inWorker, modelId: worker.modelId, top: recall.hits[0]?.episode.text, ctxTokens: ctx.tokens.total,
        days: scenario.days.length, refused, badStorage, badOption, episodes: stats.episodes, progress: [...new Set(progress)], afterTerminate,
      };
    });
    assert.deepEqual(errors, []);
    assert.match(r.modelId, /multilingual-e5-small/);
    assert.deepEqual(r.progress.sort(), ["model", "tokenizer"]);
    assert.match(r.top, /Como warehouse/);
    assert.ok(r.ctxTokens > 0 && r.ctxTokens <= 300, JSON.stringify(r));
    assert.equal(r.days, 7);
    assert.equal(r.refused, "INVALID_INPUT", "a callback cannot cross into the worker");
    assert.equal(r.badStorage, "INVALID_INPUT");
    assert.equal(r.badOption, "INVALID_INPUT");
    assert.equal(r.episodes, 4);
    assert.equal(r.afterTerminate, "WORKER");
    // On the page's thread one embedding stalls the page; in the worker the page keeps ticking.
    assert.ok(r.onPage >= 40, `the same call on the page should stall it (longest pause ${r.onPage.toFixed(0)} ms)`);
    assert.ok(r.inWorker < r.onPage / 2, `longest pause: ${r.inWorker.toFixed(0)} ms with the worker, ${r.onPage.toFixed(0)} ms on the page`);
    console.log(`longest pause of the page while embedding: ${r.onPage.toFixed(0)} ms in-thread, ${r.inWorker.toFixed(0)} ms with MnemoWorker`);
  } finally {
    await context.close();
    server.close();
  }
});
