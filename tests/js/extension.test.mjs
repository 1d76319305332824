// The MV3 example extension in Debian's Chromium: the real model from the extension bundle,
// the engine on chrome.storage.local, memories kept across a browser restart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { launch } from "./chromium.mjs";

const root = resolve(import.meta.dirname, "../..");

async function popup(context) {
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  const id = new URL(worker.url()).host;
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`chrome-extension://${id}/popup.html`);
  await page.waitForFunction(() => document.title === "mnemo ready", null, { timeout: 120_000 }).catch(() => {
    throw new Error(`the popup did not get ready: ${errors.join("; ")}`);
  });
  return page;
}

test("MV3 extension: chrome.storage.local and the bundled model, across a browser restart", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mnemo-ext-"));
  const ext = execFileSync(join(root, "tools/build-extension"), [join(dir, "extension")]).toString().trim();
  // The shared storage contract runs in the extension too (a test-only copy of the suite).
  copyFileSync(join(root, "tests/js/storage-contract.mjs"), join(ext, "storage-contract.mjs"));
  const contract = (page, phase) =>
    page.evaluate(async (phase) => {
      const suite = await import("./storage-contract.mjs");
      const { ChromeStorage } = await import("./mnemo/src/adapters/chrome-storage.js");
      const s = await ChromeStorage.open(chrome.storage.local, "contract/");
      await (phase === "check" ? suite.checkStorage(s) : suite.checkReopened(s));
      return "ok";
    }, phase);
  const profile = join(dir, "profile");
  let context = await launch(profile, { extension: ext });
  let page = await popup(context);
  const stored = await page.evaluate(async () => {
    const out = [];
    for (const text of [
      "The invoice INV-2025-0042 was paid by Marco on March 3rd",
      "npm install failed because of a stale lockfile in the cache",
      "Lunch with the design team is on Fridays",
    ]) {
      out.push((await globalThis.memory.remember(text)).stored);
    }
    return out;
  });
  assert.deepEqual(stored, [true, true, true]);
  assert.equal(await contract(page, "check"), "ok");
  await context.close();

  context = await launch(profile, { extension: ext });
  page = await popup(context);
  const after = await page.evaluate(async () => {
    const r = await globalThis.memory.recall("why did the package installation break?");
    return { top: r.hits[0].episode.text, n: (await globalThis.memory.timeline()).length };
  });
  assert.equal(after.top, "npm install failed because of a stale lockfile in the cache");
  assert.equal(after.n, 3);
  assert.equal(await contract(page, "reopened"), "ok");
  await context.close();
});
