// The inspector (www/inspector) in Debian's Chromium with the real model: loads sample events,
// recalls with explanations, shows the timeline, facts and rules, and is screenshotted
// (MNEMO_SCREENSHOT names the file; default: the system's temp dir).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../../www/serve.mjs";
import { launch } from "./chromium.mjs";
import { modelDir } from "./model.mjs";

const root = resolve(import.meta.dirname, "../..");

test("inspector: sample events, an explained recall, timeline, facts, rules, observations, export, import, erasure, screenshot", async () => {
  const server = await serve(root, { aliases: { "/model/": modelDir() } });
  const context = await launch(mkdtempSync(join(tmpdir(), "mnemo-inspector-")));
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.setViewportSize({ width: 1360, height: 1100 });
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/www/inspector/`);
    await page.waitForSelector("body[data-ready]", { timeout: 120_000 }).catch(() => {
      throw new Error(`the inspector did not get ready: ${errors.join("; ")}`);
    });
    await page.click("#sample");
    await page.waitForFunction(() => document.querySelectorAll("#timeline tr").length === 8, null, { timeout: 60_000 });
    await page.fill("#recall input[name=text]", "what did we learn about the lockfile?");
    await page.click("#recall button");
    await page.waitForSelector("#hits .hit");
    const top = await page.textContent("#hits .hit .text");
    assert.match(top, /lockfile/);
    assert.match(await page.textContent("#hits .hit .factors"), /relevance.*recency.*importance/s);
    assert.equal(await page.locator("#facts li").count(), 2);
    assert.equal(await page.locator("#rules li").count(), 1);
    // Observations: signals, a nightly run, "You are right" (promotes with its evidence),
    // "You are wrong" (rejected for good).
    await page.click("#sample-signals");
    await page.waitForFunction(() => /stored 20 signals/.test(document.querySelector("#observations-note").textContent));
    await page.click("#nightly");
    await page.waitForFunction(() => document.querySelectorAll("#observations li").length === 2, null, { timeout: 60_000 });
    const quotes = await page.locator("#observations .quote").allTextContents();
    assert.ok(quotes.some((q) => /semicolons/.test(q)), quotes.join(" | "));
    assert.ok(quotes.some((q) => /pleasantries/.test(q)), quotes.join(" | "));
    await page.locator("#observations li", { hasText: "semicolons" }).locator("button.right").click();
    await page.waitForFunction(() => /confirmed/.test(document.querySelector("#observations-note").textContent));
    await page.click("#nightly");
    await page.waitForFunction(() => [...document.querySelectorAll("#rules li")].some((li) => /semicolons/.test(li.textContent)));
    assert.match(await page.locator("#rules li", { hasText: "semicolons" }).textContent(), /removed in 10 of 10 drafts/);
    await page.locator("#observations li", { hasText: "pleasantries" }).locator("button.wrong").click();
    await page.waitForFunction(() => /rejected for good/.test(document.querySelector("#observations-note").textContent));
    assert.equal(await page.locator("#observations li", { hasText: "pleasantries" }).count(), 0, "a rejected observation leaves the open list");
    // Privacy: download an encrypted export, import it into another namespace, erase a person
    // there with a receipt, and check through IndexedDB's own API that no value names them.
    await page.fill("#export input[name=passphrase]", "correct horse battery");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export button")]);
    const file = join(mkdtempSync(join(tmpdir(), "mnemo-export-")), download.suggestedFilename());
    await download.saveAs(file);
    assert.ok(statSync(file).size > 1000, "an encrypted export was downloaded");
    await page.setInputFiles("#import input[name=file]", file);
    await page.fill("#import input[name=passphrase]", "wrong horse");
    await page.fill("#import input[name=into]", "restored");
    await page.click("#import button");
    await page.waitForFunction(() => /DECRYPT/.test(document.querySelector("#privacy-note").textContent));
    await page.fill("#import input[name=passphrase]", "correct horse battery");
    await page.click("#import button");
    await page.waitForFunction(() => /imported \d+ records into restored/.test(document.querySelector("#privacy-note").textContent));
    await page.waitForFunction(() => document.querySelectorAll("#timeline tr").length === 8, null, { timeout: 60_000 });
    await page.fill("#forget input[name=subject]", "Marco Bertelli");
    await page.click("#forget button");
    await page.waitForFunction(() => /0 occurrences, 0 leftover keys/.test(document.querySelector("#privacy-note").textContent));
    assert.match(await page.textContent("#receipt"), /"subjectSha256": "[0-9a-f]{64}"/);
    await page.waitForFunction(() => document.querySelectorAll("#timeline tr").length === 7);
    const firstId = await page.textContent("#timeline tr:last-child td.num");
    await page.fill("#correct input[name=id]", firstId);
    await page.fill("#correct input[name=text]", "Corrected in the inspector: the Quattrocento order");
    await page.click("#correct button");
    await page.waitForFunction(() => /corrected #\d+; .*: 0 occurrences/.test(document.querySelector("#privacy-note").textContent));
    await page.waitForFunction(() => [...document.querySelectorAll("#timeline td")].some((td) => /Quattrocento/.test(td.textContent)));
    const found = await page.evaluate(async () => {
      const db = await new Promise((ok, no) => {
        const r = indexedDB.open("mnemo-inspector");
        r.onsuccess = () => ok(r.result);
        r.onerror = () => no(r.error);
      });
      const all = await new Promise((ok, no) => {
        const out = [];
        const c = db.transaction("kv").objectStore("kv").openCursor();
        c.onsuccess = () => {
          const cur = c.result;
          if (!cur) return ok(out);
          out.push([new Uint8Array(cur.key), new Uint8Array(cur.value)]);
          cur.continue();
        };
        c.onerror = () => no(c.error);
      });
      const text = (b) => new TextDecoder("latin1").decode(b).toLowerCase();
      const restored = all.filter(([k]) => text(k).startsWith("u/restored/"));
      const mentions = restored.filter(([k, v]) => (text(k) + text(v)).includes("marco bertelli"));
      const original = all.filter(([k, v]) => text(k).startsWith("u/demo/") && text(v).includes("marco bertelli"));
      return { restored: restored.length, mentions: mentions.length, original: original.length };
    });
    assert.ok(found.restored > 0, JSON.stringify(found));
    assert.equal(found.mentions, 0, "IndexedDB holds no value naming the erased person in that namespace");
    assert.ok(found.original > 0, "the namespace exported from keeps its own copy");
    await page.fill("#ns", "demo");
    await page.dispatchEvent("#ns", "change");
    await page.waitForFunction(() => document.querySelectorAll("#timeline tr").length === 8);
    const decay = await page.locator("#timeline td.num").allTextContents();
    assert.ok(decay.some((t) => /^0\.\d\d$|^1\.00$/.test(t.trim())), "decay shown");
    const shot = process.env.MNEMO_SCREENSHOT ?? join(tmpdir(), "mnemo-inspector.png");
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 20_000, "a real screenshot");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    server.close();
  }
});
