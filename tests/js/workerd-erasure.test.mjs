// Erasure in workerd (Miniflare 4), through the package's Workers adapters: on Durable Object
// storage and on Workers KV, two namespaces name the same person; erasing the subject in one
// leaves not one occurrence of it in what the runtime's own API hands back (state.storage.list()
// inside the object; KV list + get of every value) for that namespace, while the other
// namespace's copy and answers stay, also in a second workerd instance on the same persisted
// storage. The Worker is tests/js/erasure-worker.js; the stored bytes are read by the test's
// own decoder (erasure-scan.mjs). A third namespace holds the subject spelled every way
// (erasure-scan.mjs's spellings): erasing it leaves no byte of any spelling on either storage. It also reports, without failing, whether the subject's bytes
// survive in Miniflare's files on disk (the local simulator's business, not the package's).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBase64, markers, occurrences, replay, spellings, tally } from "./erasure-scan.mjs";
import { worker } from "./workerd.mjs";

const config = { durableObjects: { STORE: "Store" }, kvNamespaces: ["KV"] };
const start = (persist) => worker("tests/js/erasure-worker.js", persist, config);

async function call(mf, path) {
  const r = await mf.dispatchFetch(`http://x${path}`);
  const body = await r.json();
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(body)}`);
  return body;
}

const unhex = (s) => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));

/** What the runtime's API returns, tallied by namespace. */
async function scan(mf, kind) {
  const dump = (await call(mf, `/${kind}/dump`)).map(([k, v]) => [k, fromBase64(v)]);
  const raw = dump.reduce((n, [k, v]) => n + occurrences(new TextEncoder().encode(k)) + occurrences(v), 0);
  if (kind === "do") {
    // Durable Object keys are mnemo's keys in hex (pkg/src/adapters/durable-object.js).
    const pairs = dump.map(([k, v]) => [unhex(k), v]);
    return { items: dump.length, stored: tally(pairs), live: tally(pairs), raw };
  }
  // KV: one batch record per value, `b/<12 digits>`.
  const items = dump.filter(([k]) => /^b\/\d{12}$/.test(k)).sort(([a], [b]) => (a < b ? -1 : 1));
  assert.equal(items.length, dump.length, `only log values in KV: ${dump.map(([k]) => k)}`);
  const { live, all } = replay(items.map(([, v]) => v));
  return { items: items.length, stored: tally(all), live: tally(live), raw };
}

/** Occurrences of the subject in the files under `dir` (Miniflare's SQLite and blob files). */
function onDisk(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { recursive: true })) {
    const p = join(dir, e);
    if (statSync(p).isFile()) n += occurrences(readFileSync(p));
  }
  return n;
}

test("erasure in workerd: Durable Object storage and Workers KV keep no byte of the subject for that namespace", async (t) => {
  const persist = mkdtempSync(join(tmpdir(), "mnemo-workerd-erase-"));
  let mf = start(persist);
  t.after(() => mf.dispose().catch(() => {}));
  const report = {};
  const checks = [];
  for (const kind of ["do", "kv"]) {
    await call(mf, `/${kind}/fill?ns=ana`);
    await call(mf, `/${kind}/fill?ns=bo`);
    const before = { ana: await call(mf, `/${kind}/answers?ns=ana`), bo: await call(mf, `/${kind}/answers?ns=bo`) };
    const full = await scan(mf, kind);
    assert.ok(full.stored.byNamespace.ana > 0 && full.stored.byNamespace.bo > 0, `${kind}: ${JSON.stringify(full)}`);
    assert.ok(full.stored.snapshot.ana > 0, `${kind}: the subject is in ana's snapshot too`);
    const diskBefore = onDisk(join(persist, kind));

    const receipt = await call(mf, `/${kind}/erase?ns=ana`);
    assert.equal(receipt.format, "mnemo-erasure/1");
    // A log in KV is rewritten; Durable Object storage only deletes keys (the platform frees them).
    assert.deepEqual([receipt.verification.occurrences, receipt.verification.leftoverKeys, receipt.vacuumed], [0, 0, kind === "kv"]);
    assert.match(receipt.storage, kind === "kv" ? /rewritten/ : /keys deleted/);
    assert.equal(receipt.episodeIds.length, 3, `${kind}: ${JSON.stringify(receipt)}`);
    assert.ok(!JSON.stringify(receipt).includes("Zephyrine"), "the receipt names the subject by a hash only");

    const check = async (mf, when) => {
      const after = await scan(mf, kind);
      const at = `${kind}, ${when}`;
      assert.equal(after.stored.byNamespace.ana ?? 0, 0, `${at}: no occurrence for ana in any stored value: ${JSON.stringify(after)}`);
      assert.ok(after.live.keys.ana > 0, `${at}: ana's other memories are stored`);
      assert.equal(after.stored.byNamespace.bo, full.live.byNamespace.bo, `${at}: bo's copy is all there`);
      assert.equal(after.raw, after.stored.byNamespace.bo + after.stored.other, `${at}: nothing else names the subject`);
      assert.equal(await call(mf, `/${kind}/answers?ns=bo`), before.bo, `${at}: bo answers as before`);
      const ana = await call(mf, `/${kind}/answers?ns=ana`);
      assert.equal(occurrences(new TextEncoder().encode(ana)), 0, `${at}: ana's answers do not name the subject`);
      assert.notEqual(ana, before.ana);
      return after;
    };
    const after = await check(mf, "after the erase");
    checks.push(check);

    // The subject however it is spelled: no marker of any spelling left in any stored byte.
    const spelled = await call(mf, `/${kind}/spell?ns=spell`);
    assert.equal(spelled.episodeIds.length, spellings().length, `${kind}: every spelling found`);
    const dump = (await call(mf, `/${kind}/dump`)).map(([k, v]) => [new TextEncoder().encode(k), fromBase64(v)]);
    const left = dump.reduce((m, [k, v]) => { const a = markers(k), b = markers(v); return { spelled: m.spelled + a.spelled + b.spelled, kept: m.kept + a.kept + b.kept }; }, { spelled: 0, kept: 0 });
    assert.equal(left.spelled, 0, `${kind}: a spelling's marker is still stored`);
    assert.ok(left.kept > 0, `${kind}: another person is not erased`);
    report[kind] = { items: [full.items, after.items], disk: [diskBefore, onDisk(join(persist, kind))] };
  }
  await mf.dispose();

  mf = start(persist);
  for (const check of checks) await check(mf, "in a second workerd instance");
  for (const kind of ["do", "kv"]) report[kind].disk.push(onDisk(join(persist, kind)));
  // Informational: occurrences of the subject (both namespaces) in Miniflare's files before
  // the erase, after it, and after a restart.
  console.log(`workerd erasure: stored items before/after and on-disk occurrences ${JSON.stringify(report)}`);
});
