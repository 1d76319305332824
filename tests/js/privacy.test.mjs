// Erasure and encrypted export through the npm package in Node, on NodeFileStorage: a subject
// leaves every layer and every byte of the log file, other users answer as before, the export
// round-trips into another storage, and a wrong passphrase or a damaged file imports nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Mnemo, MemoryStorage, NodeFileStorage } from "../../pkg/src/entry-node.js";
import { DIM, vec } from "./bow.mjs";

const DAY = 86_400_000;
const T0 = Date.parse("2025-03-01T00:00:00Z");
const opts = { vectorModel: "test-bow@1", dim: DIM, now: () => T0 + 30 * DAY };
const SUBJECT = "Zephyrine Okonkwo";

const count = (bytes, text) => {
  const hay = Buffer.from(bytes).toString("latin1").toLowerCase();
  return hay.split(text.toLowerCase()).length - 1;
};

async function fill(mem, ns) {
  const texts = [
    `${SUBJECT} ${ns} asked for the quarterly invoice`,
    `the deploy of the billing service failed for ${ns}`,
    `${SUBJECT} ${ns} prefers calls after lunch`,
    `the team approved the offsite budget for ${ns}`,
  ];
  for (const [i, text] of texts.entries()) {
    await mem.remember(ns, { text, createdAt: T0 + i * DAY, source: "agent" }, { vector: vec(text) });
  }
  await mem.setFact(ns, { key: "contact.name", value: `${SUBJECT} ${ns}`, source: "explicit", origin: "user" });
  await mem.setFact(ns, { key: "language", value: "Italian", origin: "user" });
  await mem.addRule(ns, `Always copy ${SUBJECT} ${ns} on invoices`, { origin: "user" });
}

async function answers(mem, ns) {
  const out = [];
  for (const q of ["invoice", "deploy", "budget", "lunch"]) {
    const r = await mem.recall(ns, { text: q, k: 5, touch: false }, { vector: vec(q) });
    out.push(r.hits.map((h) => `${h.episode.id} ${h.episode.text} ${h.explanation.finalScore.toFixed(6)}`));
  }
  out.push(await mem.facts(ns, { all: true }), await mem.rules(ns));
  return JSON.stringify(out);
}

test("a subject leaves every layer and every byte of the log; other users are untouched", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "mnemo-erase-")), "log");
  const storage = await NodeFileStorage.open(path);
  const mem = await Mnemo.open(storage, opts);
  await fill(mem, "ana");
  await fill(mem, "bo");
  const before = await answers(mem, "bo");
  assert.ok(count(readFileSync(path), `${SUBJECT} ana`) > 0);

  const r = await mem.erase("ana", { scope: "subject", subject: `${SUBJECT} ana` });
  assert.equal(r.format, "mnemo-erasure/1");
  assert.deepEqual([r.verification.occurrences, r.verification.leftoverKeys, r.vacuumed], [0, 0, true]);
  assert.equal(r.episodeIds.length, 2, JSON.stringify(r));
  assert.ok(!JSON.stringify(r).includes("Zephyrine"), "the receipt names the subject by a hash only");
  assert.equal(count(readFileSync(path), `${SUBJECT} ana`), 0, "not one byte left in the file");
  assert.ok(count(readFileSync(path), `${SUBJECT} bo`) > 0, "the other user's copy stays");
  assert.equal(await answers(mem, "bo"), before);
  assert.equal((await mem.fact("ana", "language")).value, "Italian");
  await storage.close();

  const reopened = await NodeFileStorage.open(path);
  const again = await Mnemo.open(reopened, opts);
  assert.equal(await answers(again, "bo"), before, "and after a reopen");
  const [first] = (await again.recall("ana", { text: "deploy billing", k: 1, touch: false }, { vector: vec("deploy billing") })).hits;
  const wrong = first.episode.text;
  const right = "the corrected note: Quattrocento was never involved";
  const fixed = await again.correct("ana", first.episode.id, { text: right, vector: vec(right) });
  assert.equal(fixed.scope, "correction");
  assert.deepEqual([fixed.verification.occurrences, fixed.vacuumed], [0, true], JSON.stringify(fixed));
  assert.equal((await again.timeline("ana")).find((e) => e.id === first.episode.id).text, right);
  if (wrong.length >= 24) assert.equal(count(readFileSync(path), wrong), 0, "the wrong text left the file");
  const whole = await again.erase("ana");
  assert.equal(whole.verification.leftoverKeys, 0);
  assert.equal(count(readFileSync(path), "u/ana/"), 0, "no key of the user is left");
  await reopened.close();
});

test("an encrypted export round-trips; a wrong passphrase or a flipped bit imports nothing", async () => {
  const mem = await Mnemo.open(new MemoryStorage(), opts);
  await fill(mem, "ana");
  const file = await mem.exportEncrypted("ana", "correct horse", { logN: 10 });
  assert.ok(file instanceof Uint8Array && count(file, "Zephyrine") === 0);
  const readable = await mem.exportReadable("ana");
  assert.equal(readable.format, "mnemo-access/1");
  assert.equal(readable.episodes.length, 4);

  const target = new MemoryStorage();
  const other = await Mnemo.open(target, opts);
  await assert.rejects(other.importEncrypted("copy", "wrong horse", file), (e) => e.code === "DECRYPT");
  const bad = file.slice();
  bad[bad.length - 40] ^= 1;
  await assert.rejects(other.importEncrypted("copy", "correct horse", bad), (e) => e.code === "CORRUPT");
  await assert.rejects(other.importEncrypted("copy", "correct horse", file.subarray(0, file.length - 1)), (e) => e.code === "CORRUPT");
  assert.equal((await target.scan(new TextEncoder().encode("u/copy/"), null, 10)).length, 0, "nothing imported");
  const moved = await other.importEncrypted("copy", "correct horse", file);
  assert.ok(moved.records > 0);
  assert.equal(await answers(other, "copy"), await answers(mem, "ana"));
});
