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

test("inspector: sample events, an explained recall, timeline, facts, rules, screenshot", async () => {
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
