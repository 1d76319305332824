// The npm package in Debian's Chromium: the storage contract on IndexedDB, and the engine on
// IndexedDB keeping its memories across a browser restart (same profile).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../../www/serve.mjs";
import { launch } from "./chromium.mjs";

const root = resolve(import.meta.dirname, "../..");

async function page(context, url, { fresh = false } = {}) {
  const p = (!fresh && context.pages()[0]) || (await context.newPage());
  const errors = [];
  p.on("pageerror", (e) => errors.push(e.message));
  await p.goto(`${url}/tests/browser/harness.html`);
  await p.waitForFunction(() => document.title === "ready" || document.title === "", null, {
    timeout: 30_000,
  });
  await p.waitForFunction(() => window.t !== undefined, null, { timeout: 30_000 }).catch(() => {
    throw new Error(`the harness did not load: ${errors.join("; ")}`);
  });
  return p;
}

test("IndexedDB: storage contract, engine, and persistence across a browser restart", async () => {
  const server = await serve(root);
  const profile = mkdtempSync(join(tmpdir(), "mnemo-chromium-"));
  try {
    let context = await launch(profile);
    let p = await page(context, server.url);
    const ids = await p.evaluate(async () => {
      const { mnemo, contract, bow } = window.t;
      await contract.checkStorage(await mnemo.IndexedDbStorage.open("contract"));
      const mem = await mnemo.Mnemo.open(await mnemo.IndexedDbStorage.open("memory"), {
        vectorModel: "test-bow@1",
        dim: bow.DIM,
      });
      const ids = [];
      for (const [text, outcome] of bow.EVENTS) {
        ids.push((await mem.remember("ana", { text, outcome }, { vector: bow.vec(text) })).id);
      }
      await mem.setFact("ana", { key: "language", value: "Italian" });
      return ids;
    });
    assert.deepEqual(ids, [1, 2, 3]);
    // fetchModel: progress events, then the Cache API (read again with the server's file
    // gone from the URL it had: the second read must come from the cache).
    const fetched = await p.evaluate(async () => {
      const { mnemo } = window.t;
      const files = { bytes: "/tests/fixtures/bench-items.jsonl" };
      const events = [];
      const first = await mnemo.fetchModel(files, { onProgress: (e) => events.push(e) });
      const again = await mnemo.fetchModel(files, { onProgress: (e) => events.push(e) });
      return {
        sizes: [first.bytes.length, again.bytes.length],
        sources: [...new Set(events.map((e) => e.cached))],
        last: events.at(-1),
      };
    });
    assert.equal(fetched.sizes[0], fetched.sizes[1]);
    assert.ok(fetched.sizes[0] > 1000);
    assert.deepEqual(fetched.sources, [false, true], "network first, cache second");
    assert.equal(fetched.last.loaded, fetched.sizes[0]);
    await context.close();

    context = await launch(profile);
    p = await page(context, server.url);
    const after = await p.evaluate(async () => {
      const { mnemo, contract, bow } = window.t;
      await contract.checkReopened(await mnemo.IndexedDbStorage.open("contract"));
      const mem = await mnemo.Mnemo.open(await mnemo.IndexedDbStorage.open("memory"), {
        vectorModel: "test-bow@1",
        dim: bow.DIM,
      });
      const q = "stale lockfile";
      const r = await mem.recall("ana", { text: q, k: 1 }, { vector: bow.vec(q) });
      return {
        top: r.hits[0].episode.text,
        explained: r.hits[0].explanation.sources,
        episodes: (await mem.timeline("ana")).length,
        fact: (await mem.fact("ana", "language")).value,
      };
    });
    assert.equal(after.top, "npm install failed: stale lockfile in the cache");
    assert.ok(after.explained.includes("bm25"));
    assert.equal(after.episodes, 3);
    assert.equal(after.fact, "Italian");
    await context.close();
  } finally {
    server.close();
  }
});

test("two tabs on one IndexedDB store: the second is refused (LOCKED) or waits until the first closes", async () => {
  const server = await serve(root);
  const profile = mkdtempSync(join(tmpdir(), "mnemo-chromium-"));
  try {
    const context = await launch(profile);
    const a = await page(context, server.url);
    const b = await page(context, server.url, { fresh: true });
    const open = async (wait) => {
      const { mnemo, bow } = window.t;
      const storage = await mnemo.IndexedDbStorage.open("shared");
      window.mem = await mnemo.Mnemo.open(storage, { vectorModel: "test-bow@1", dim: bow.DIM, waitForLock: wait });
      return storage.lockName;
    };
    assert.equal(await a.evaluate(open, false), "mnemo:indexeddb:shared");
    await a.evaluate(async () => {
      const { bow } = window.t;
      const text = "the deploy key rotates on Mondays";
      await window.mem.remember("ana", { text }, { vector: bow.vec(text) });
    });
    const refused = await b.evaluate(open, false).catch((e) => e.message);
    assert.match(String(refused), /LOCKED|another context/);
    const refusedCode = await b.evaluate(async () => {
      const { mnemo, bow } = window.t;
      const storage = await mnemo.IndexedDbStorage.open("shared");
      return mnemo.Mnemo.open(storage, { vectorModel: "test-bow@1", dim: bow.DIM }).then(
        () => "opened",
        (e) => e.code,
      );
    });
    assert.equal(refusedCode, "LOCKED");
    // The second tab waits; the first writes once more, closes, and the second sees both.
    await b.evaluate(() => {
      window.opening = (async () => {
        const { mnemo, bow } = window.t;
        const storage = await mnemo.IndexedDbStorage.open("shared");
        window.mem = await mnemo.Mnemo.open(storage, { vectorModel: "test-bow@1", dim: bow.DIM, waitForLock: true });
        return Date.now();
      })();
    });
    const closedAt = await a.evaluate(async () => {
      const { bow } = window.t;
      const text = "staging uses the blue cluster";
      await window.mem.remember("ana", { text }, { vector: bow.vec(text) });
      const at = Date.now();
      await window.mem.close();
      const after = await window.mem.timeline("ana").then(() => "answered", (e) => e.code);
      return { at, after };
    });
    assert.equal(closedAt.after, "CLOSED");
    const seen = await b.evaluate(async () => {
      const openedAt = await window.opening;
      return { openedAt, texts: (await window.mem.timeline("ana")).map((e) => e.text) };
    });
    assert.ok(seen.openedAt >= closedAt.at, "opened only after the first tab closed");
    assert.deepEqual(seen.texts, ["the deploy key rotates on Mondays", "staging uses the blue cluster"]);
    await context.close();
  } finally {
    server.close();
  }
});
