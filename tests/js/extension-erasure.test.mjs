// Erasure in the MV3 example extension (Debian's Chromium), on chrome.storage.local through
// ChromeStorage: two namespaces name the same person; erasing the subject in one leaves not
// one occurrence of it in what chrome.storage.local.get(null) hands back for that namespace
// (every item base64-decoded and read as batch records by the test's own decoder,
// erasure-scan.mjs), while the other namespace's copy and answers stay, also after a browser
// restart. A test-only blank page (erasure.html, added to the built extension) runs the
// package, so the popup's model is not loaded. A third namespace holds the subject spelled every
// way (erasure-scan.mjs's spellings): erasing it leaves no byte of any spelling in the area.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { launch } from "./chromium.mjs";
import { fromBase64, markers, occurrences, replay, spellings, tally } from "./erasure-scan.mjs";

const root = resolve(import.meta.dirname, "../..");
const PREFIX = "erasure/"; // the test's log in the area, next to the popup's mnemo/b/

async function page(context) {
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  const p = await context.newPage();
  await p.goto(`chrome-extension://${new URL(worker.url()).host}/erasure.html`);
  return p;
}

// Runs `step` in the page on a Mnemo over ChromeStorage(chrome.storage.local, PREFIX), opened
// afresh (the log replayed from the area). No eval: the extension's CSP forbids it.
const inPage = (p, step) =>
  p.evaluate(
    async ([step, prefix]) => {
      const { Mnemo, ChromeStorage } = await import("./mnemo/src/entry-browser.js");
      const kit = await import("./erasure-scan.mjs");
      const mem = await Mnemo.open(await ChromeStorage.open(chrome.storage.local, prefix), kit.OPTIONS);
      try {
        if (step === "fill") {
          await kit.fill(mem, "ana");
          await kit.fill(mem, "bo");
        }
        if (step === "erase") return await mem.erase("ana", { scope: "subject", subject: kit.SUBJECT });
        if (step === "spell") return await kit.eraseSpellings(mem, "spell");
        return { ana: await kit.answers(mem, "ana"), bo: await kit.answers(mem, "bo") };
      } finally {
        // One context at a time holds the log: the next step opens it afresh.
        await mem.close();
      }
    },
    [step, PREFIX],
  );

// The parts of base64 text that encode `needle` whatever its alignment in the encoded bytes.
const cores = (needle) =>
  [0, 1, 2].map((k) => {
    const n = k + needle.length;
    return Buffer.concat([Buffer.alloc(k), Buffer.from(needle)]).toString("base64").slice(k ? 4 : 0, Math.floor(n / 3) * 4);
  });

/**
 * Occurrences of the subject's first name (as written, and in capitals) in the files of the
 * profile's extension storage (Chromium's LevelDB), as text and as base64 text, the form items
 * are stored in. A lower bound: LevelDB may compress its tables.
 */
function onDisk(profile) {
  const dir = join(profile, "Default", "Local Extension Settings");
  if (!existsSync(dir)) return null;
  const needles = ["Zephyrine", "ZEPHYRINE"].flatMap((w) => [w, ...cores(w)]);
  let n = 0;
  for (const e of readdirSync(dir, { recursive: true })) {
    const p = join(dir, e);
    if (!statSync(p).isFile()) continue;
    const text = readFileSync(p).toString("latin1");
    for (const needle of needles) n += text.split(needle).length - 1;
  }
  return n;
}

/** The whole area through its API: {name: base64 string}. */
const area = (p) => p.evaluate(() => chrome.storage.local.get(null));

/** The test log's items, decoded and tallied by namespace; every item of the area searched. */
function scan(items) {
  const names = Object.keys(items).filter((k) => k.startsWith(PREFIX)).sort();
  const records = names.map((k) => fromBase64(items[k]));
  const { live, all } = replay(records);
  let raw = 0;
  for (const v of Object.values(items)) {
    const text = new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));
    let decoded = new Uint8Array(0);
    try {
      decoded = typeof v === "string" ? fromBase64(v) : decoded;
    } catch {
      // not base64: searched as text only
    }
    raw += occurrences(text) + occurrences(decoded);
  }
  return { items: names.length, stored: tally(all), live: tally(live), raw };
}

test("MV3 extension: erasing a subject leaves no byte of it in chrome.storage.local for that namespace", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "mnemo-ext-erase-"));
  const ext = execFileSync(join(root, "tools/build-extension"), [join(dir, "extension")]).toString().trim();
  for (const f of ["bow.mjs", "erasure-scan.mjs"]) copyFileSync(join(root, "tests/js", f), join(ext, f));
  writeFileSync(join(ext, "erasure.html"), "<!doctype html><meta charset=utf-8><title>erasure test</title>\n");
  const profile = join(dir, "profile");

  // A failed assertion must not leave Chromium running (the test process would never end).
  let context = await launch(profile, { extension: ext });
  t.after(() => context.close().catch(() => {})); // whichever context is open last
  let p = await page(context);
  const before = await inPage(p, "fill");
  const disk = [onDisk(profile)];
  const full = scan(await area(p));
  assert.ok(full.stored.byNamespace.ana > 0 && full.stored.byNamespace.bo > 0, JSON.stringify(full));
  assert.ok(full.stored.snapshot.ana > 0, "the subject is in ana's snapshot too");
  assert.equal(full.raw, full.stored.byNamespace.ana + full.stored.byNamespace.bo + full.stored.other);

  const receipt = await inPage(p, "erase");
  assert.equal(receipt.format, "mnemo-erasure/1");
  assert.deepEqual([receipt.verification.occurrences, receipt.verification.leftoverKeys, receipt.vacuumed], [0, 0, true]);
  assert.equal(receipt.episodeIds.length, 3, JSON.stringify(receipt));
  assert.ok(!JSON.stringify(receipt).includes("Zephyrine"), "the receipt names the subject by a hash only");

  const check = async (p, when) => {
    const after = scan(await area(p));
    assert.equal(after.stored.byNamespace.ana ?? 0, 0, `${when}: no occurrence in any item for ana: ${JSON.stringify(after)}`);
    assert.ok(after.live.keys.ana > 0, `${when}: ana's other memories are stored`);
    assert.equal(after.stored.byNamespace.bo, full.live.byNamespace.bo, `${when}: bo's copy is all there`);
    assert.equal(after.raw, after.stored.byNamespace.bo + after.stored.other, `${when}: and nothing else in the area names the subject`);
    const now = await inPage(p, "answers");
    assert.equal(now.bo, before.bo, `${when}: bo answers as before`);
    assert.equal(occurrences(new TextEncoder().encode(now.ana)), 0, `${when}: ana's answers do not name the subject`);
    assert.notEqual(now.ana, before.ana);
    return after;
  };
  const after = await check(p, "after the erase");
  assert.ok(after.items < full.items, `the log was compacted (${full.items} items, then ${after.items})`);

  // The subject however it is spelled: no marker of any spelling left in any item of the area.
  const spelled = await inPage(p, "spell");
  assert.equal(spelled.episodeIds.length, spellings().length, "every spelling found");
  const left = { spelled: 0, kept: 0 };
  for (const v of Object.values(await area(p))) {
    for (const bytes of [new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v)), typeof v === "string" ? fromBase64(v) : new Uint8Array(0)]) {
      const m = markers(bytes);
      left.spelled += m.spelled;
      left.kept += m.kept;
    }
  }
  assert.equal(left.spelled, 0, "a spelling's marker is still in chrome.storage.local");
  assert.ok(left.kept > 0, "another person is not erased");
  disk.push(onDisk(profile));
  await context.close();
  disk.push(onDisk(profile));

  context = await launch(profile, { extension: ext }); // closed by t.after
  p = await page(context);
  await check(p, "after a browser restart");
  // Informational: occurrences of the subject (both namespaces) in Chromium's LevelDB files of
  // the extension's storage before the erase, after it, after closing the browser, and after a
  // restart (deleted values stay in its log and tables until LevelDB compacts them: that is
  // Chromium's business, not the package's).
  disk.push(onDisk(profile));
  console.log(`chrome.storage items ${full.items} -> ${after.items}; on-disk occurrences ${JSON.stringify(disk)}`);
});
