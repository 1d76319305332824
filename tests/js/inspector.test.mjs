// The inspector (www/inspector) in Debian's Chromium with the real model: loads sample events,
// recalls with explanations, shows the timeline, facts and rules, and is screenshotted
// (MNEMO_SCREENSHOT names the file; default: the system's temp dir). A second test loads an
// old week, runs the nightly job and checks what compaction shows: the weekly summary with its
// evidence, the cold sources, the stats line, the nightly log and a recall of cold records.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../../www/serve.mjs";
import { launch } from "./chromium.mjs";
import { modelDir } from "./model.mjs";

const root = resolve(import.meta.dirname, "../..");

// Serves the repository, opens the inspector in Chromium (profile directory `profile`), waits
// until it is ready, runs `body(page)`, and checks the page raised no error.
async function withInspector(profile, body) {
  const server = await serve(root, { aliases: { "/model/": modelDir() } });
  const context = await launch(mkdtempSync(join(tmpdir(), profile)));
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.setViewportSize({ width: 1360, height: 1100 });
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/www/inspector/`);
    await page.waitForSelector("body[data-ready]", { timeout: 120_000 }).catch(() => {
      throw new Error(`the inspector did not get ready: ${errors.join("; ")}`);
    });
    await body(page);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    server.close();
  }
}

test("inspector: sample events, an explained recall, timeline, facts, rules, observations, export, import, erasure, screenshot", () =>
  withInspector("mnemo-inspector-", async (page) => {
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
  }));

test("inspector: an old week compacted by the nightly job — weekly summary with its evidence, cold sources, stats, nightly log, recall of cold records", () =>
  withInspector("mnemo-inspector-compaction-", async (page) => {
    const stat = async (key) => Number(await page.getAttribute(`#stats [data-stat=${key}]`, "data-value"));
    const ids = (texts) => texts.map((t) => Number(t.trim().replace(/^#/, ""))).sort((a, b) => a - b);

    // Nine events of one agent and contact, all in one week six weeks ago (www/inspector/sample.js).
    await page.click("#sample-old-week");
    await page.waitForFunction(() => document.querySelectorAll("#timeline tr").length === 9, null, { timeout: 60_000 });
    assert.equal(await stat("episodes"), 9);
    assert.equal(await stat("raw"), 9);
    assert.equal(await stat("weekly"), 0);
    assert.equal(await stat("cold"), 0);
    assert.equal(await page.locator("#timeline tr.summary").count(), 0);
    assert.equal(await page.locator("#nightly-log > li.run").count(), 0);

    await page.click("#nightly");
    await page.waitForSelector("#timeline tr.summary", { timeout: 60_000 });
    await page.waitForSelector("#nightly-log > li.run");
    assert.match(await page.textContent("#observations-note"), /\b1 summary written\b.*\bevicted\b/);

    // The weekly summary lists its sources, which are every other row of the timeline.
    const summary = page.locator("#timeline tr.summary");
    assert.equal(await summary.count(), 1);
    const summaryId = Number(await summary.locator("td.num").first().textContent());
    assert.equal((await summary.locator("td.tier").textContent()).trim(), "weekly");
    const sources = ids(await page.locator("#timeline tr:not(.summary) td:first-child").allTextContents());
    assert.equal(sources.length, 9);
    assert.ok(sources.every((id) => id < summaryId), `${sources} then #${summaryId}`);
    assert.deepEqual(ids(await summary.locator(".evidence-index a.ref").allTextContents()), sources);

    // Its sections open on demand.
    const details = summary.locator("details");
    assert.equal(await details.evaluate((d) => d.open), false);
    await details.locator("summary").click();
    assert.equal(await details.evaluate((d) => d.open), true);
    assert.equal(await summary.locator("dl.sections").isVisible(), true);
    const sections = await summary.locator("dl.sections dt").allTextContents();
    for (const s of ["period", "lessons", "decisions", "routine", "written by"]) {
      assert.ok(sections.includes(s), `section ${s} in ${sections.join(", ")}`);
    }
    assert.match(await summary.locator("dl.sections").textContent(), /bounced/, "the lesson is in the summary");

    // The sources are cold and point to the summary, except the lesson, which stays hot.
    const cold = page.locator("#timeline tr.cold");
    assert.equal(await cold.count(), 8);
    assert.equal(await cold.locator(".chip.cold").count(), 8);
    assert.deepEqual(ids(await cold.locator(".stands-for a.ref").allTextContents()), Array(8).fill(summaryId));
    const hot = page.locator("#timeline tr:not(.summary):not(.cold)");
    assert.equal(await hot.count(), 1);
    assert.match(await hot.textContent(), /bounced/);
    assert.deepEqual(ids(await hot.locator(".kept-hot a.ref").allTextContents()), [summaryId]);

    // The stats line, refreshed with the timeline.
    assert.equal(await stat("episodes"), 10);
    assert.equal(await stat("weekly"), 1);
    assert.equal(await stat("monthly"), 0);
    assert.equal(await stat("raw"), 9);
    assert.equal(await stat("cold"), 8);
    assert.equal(await stat("retrievable"), 2);
    assert.ok((await stat("bytes")) > 0);

    // The nightly log, newest run first, says what it compacted.
    const compacted = page.locator("#nightly-log > li.run").first().locator("li.compacted");
    assert.equal(await compacted.count(), 1);
    assert.equal(Number(await compacted.getAttribute("data-summary")), summaryId);
    assert.equal(await compacted.getAttribute("data-tier"), "1");
    assert.equal(await compacted.getAttribute("data-sources"), "9");

    // A recall reaches cold records only when asked to.
    await page.fill("#recall input[name=text]", "invoices for Acme GmbH");
    await page.click("#recall button");
    await page.waitForFunction(() => document.querySelector("#recall-note").textContent !== "", null, { timeout: 60_000 });
    assert.ok(!(await page.locator("#hits .chip").allTextContents()).includes("cold"), "no cold hit without include cold");
    await page.check("#recall input[name=cold]");
    await page.click("#recall button");
    await page.waitForFunction(() => [...document.querySelectorAll("#hits .chip")].some((c) => c.textContent === "cold"), null, { timeout: 60_000 });
    const coldHit = page.locator("#hits .hit", { has: page.locator(".chip", { hasText: /^cold$/ }) }).first();
    assert.deepEqual(ids(await coldHit.locator(".factors a.ref").allTextContents()), [summaryId]);
  }));

test("inspector: the mail agent's 90 days in the context tab — learned rules, facts, caps, withheld, one observation marked wrong and gone", () =>
  withInspector("mnemo-inspector-context-", async (page) => {
    await page.click("#scenario");
    await page.waitForFunction(() => /replayed 90 days into maria/.test(document.querySelector("#scenario-note").textContent), null, { timeout: 600_000 });
    await page.waitForFunction(() => document.querySelectorAll("#context-sections tbody tr").length === 7, null, { timeout: 60_000 });
    assert.equal(await page.inputValue("#ns"), "maria");
    const row = async (name) => (await page.locator(`#context-sections tr[data-section=${name}] td`).allTextContents()).map((t) => t.trim());
    const [, rulesTokens, rulesCap, rulesItems] = await row("rules");
    assert.equal(rulesItems, "4", "the four learned rules");
    assert.ok(Number(rulesTokens) <= Number(rulesCap));
    for (const name of ["system", "rules", "facts", "episodes", "observations", "working", "tools"]) {
      const [, tokens, cap] = await row(name);
      assert.ok(Number(tokens) <= Number(cap), `${name}: ${tokens} over ${cap}`);
    }
    const items = (await page.locator("#context-items li").allTextContents()).join("\n");
    for (const want of ["Never use semicolons", "no opening pleasantries", "don't draft", "defer", "Bertelli & Co", "formal, no exclamation marks"]) {
      assert.ok(items.includes(want), `${want} is not in the context:\n${items}`);
    }
    assert.ok(!(await page.textContent("#context-card")).includes("IT60"), "a sensitive fact was shown");
    assert.match((await row("observations"))[4], /active rules already/);
    assert.match(await page.textContent("#context-note"), /of 9600 tokens .* disclosure level 2/);
    // The sign-off observation is withheld (low confidence); Maria says it is wrong.
    const signoff = page.locator("#context-withheld li", { hasText: "sign-off" });
    const id = await signoff.getAttribute("data-id");
    assert.match(id, /^observation:\d+$/);
    assert.match(await signoff.textContent(), /low confidence/);
    await page.locator("#observations li", { hasText: "sign-off" }).locator("button.wrong").click();
    await page.waitForFunction(() => /rejected for good/.test(document.querySelector("#observations-note").textContent));
    await page.click("#context button");
    await page.waitForFunction((gone) => !document.querySelector(`#context-withheld li[data-id="${gone}"]`), id);
    assert.equal(await page.locator(`#context-items li[data-id="${id}"]`).count(), 0, "it is gone");
    // A withheld episode can be fetched whole.
    const first = page.locator("#context-withheld li").first();
    await first.locator("a.link").click();
    await page.waitForFunction(() => document.querySelector("#context-withheld li .history").textContent.length > 10);
    const shot = process.env.MNEMO_SCREENSHOT_CONTEXT ?? join(tmpdir(), "mnemo-inspector-context.png");
    await page.locator("#context-card").screenshot({ path: shot });
    assert.ok(statSync(shot).size > 20_000, "a real screenshot");
  }));
