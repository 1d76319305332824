// Crash images of the engine on NodeFileStorage. A seeded workload (remember with host vectors
// from bow.mjs, recall that touches, setStatus, setFact, addRule, signals, the nightly job,
// maintain with a small snapshotAfter so snapshots are written, and the erasure of a subject)
// runs through Mnemo on one log file. After every acknowledged operation the test records the
// file's length and the answers an engine gives (recall of fixed queries with touch:false,
// timeline, facts, rules, for every namespace). Then it makes crash images: the first N bytes
// of the log, for every write boundary (every length the file had after a batch) and for
// random offsets inside writes, as a bare cut, with the rest of the torn record zeroed (a file
// system that extended the file but never wrote the data) and with it filled with garbage.
// Each image must open (a torn tail is dropped, never CORRUPT), be truncated to the last whole
// record, and answer exactly as the engine did right after the last operation whose writes all
// lie within the first N bytes: no acknowledged write lost, nothing half-applied.
//
// Limits, on purpose:
//   - Only prefixes of one file generation are crash images. NodeFileStorage replaces the
//     whole file (tmp + fsync + rename) when it compacts, so a prefix of a compacted file never
//     exists on disk. Compaction runs automatically once the log holds more than 2x the live
//     data and at least 1 MiB more than it, and on every erase. The workload is kept far below
//     the automatic threshold (the test asserts that the file never shrinks and keeps its inode except at the erase, so
//     raising MNEMO_CRASH_OPS far enough to trigger it fails loudly instead of testing
//     nonsense: with seed 1, 1200 operations pass and 4000 compact at about operation 1100).
//     The reference answers come from the live engine, so the check is also that a reopened
//     engine answers exactly like the one that wrote the log (snapshots, sealed vectors).
//   - The erase runs in the middle of the workload and ends the first generation: its delete
//     batch is appended to the old file, then the file is compacted. The old generation (read
//     through a descriptor held open across the rename) is cut up to and including that
//     delete batch; the new one only from its compacted length on (appends after the erase).
//     A crash inside the compaction itself is covered by one image: the whole old generation
//     plus a half-written `<path>.tmp`, which must open as the erased state and lose the tmp.
//   - A crash between the delete batch and the compaction leaves the erased subject's bytes in
//     the old file (the erasure was not acknowledged); the test checks that repeating the
//     erase on that image removes them from the file.
//   - Writes are cut at byte granularity within one record; reordered or lost writes of an
//     fsynced earlier record (a lying disk) are not modelled.
//   - Operations writing more than one batch (maintain snapshots each namespace in a batch of
//     its own) are cut at their inner batch boundaries too; there the answers must equal the
//     ones before the operation (a snapshot changes no answer).
//
// MNEMO_CRASH_OPS (default 300) sets the number of operations, MNEMO_CRASH_CUTS (default 200)
// the number of random cuts inside writes, MNEMO_CRASH_SEED (default 1) the seed.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Mnemo, NodeFileStorage } from "../../pkg/src/entry-node.js";
import { DIM, vec } from "./bow.mjs";

const OPS = Number(process.env.MNEMO_CRASH_OPS ?? 300);
const CUTS = Number(process.env.MNEMO_CRASH_CUTS ?? 200);
const SEED = Number(process.env.MNEMO_CRASH_SEED ?? 1);

const MIN = 60_000;
const DAY = 86_400_000;
const T0 = Date.parse("2025-03-01T00:00:00Z");
const NOW = T0 + 30 * DAY;
const opts = { vectorModel: "test-bow@1", dim: DIM, now: () => NOW, snapshotAfter: 12 };
const SUBJECT = "Zephyrine Okonkwo";
const NAMESPACES = ["ana", "bo"];
const QUERIES = ["invoice refund", "deploy cache lockfile", `${SUBJECT} lunch`];
const WORDS = (
  "invoice deploy budget lunch cache lockfile meeting report server design contract travel " +
  "refund release backup calendar payroll migration outage review"
).split(" ");

// mulberry32
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const count = (bytes, text) => Buffer.from(bytes).toString("latin1").split(text).length - 1;

/** What an engine answers about every namespace, as one string. */
async function answers(mem) {
  const out = [];
  // A namespace nothing was written to yet answers UNKNOWN_NAMESPACE.
  const ask = (p) => p.catch((e) => (e.code === "UNKNOWN_NAMESPACE" ? e.code : Promise.reject(e)));
  for (const ns of NAMESPACES) {
    for (const q of QUERIES) {
      const r = await ask(mem.recall(ns, { text: q, k: 5, touch: false }, { vector: vec(q) }));
      out.push(r.hits?.map((h) => ({ episode: h.episode, explanation: h.explanation })) ?? r);
    }
    out.push(await ask(mem.timeline(ns, { limit: 10_000 })));
    out.push(await ask(mem.facts(ns, { all: true })), await ask(mem.rules(ns)));
  }
  return JSON.stringify(out);
}

/** The seeded workload: a list of named operations on `mem`. */
function workload(seed, n) {
  const r = rng(seed);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const ids = { ana: 0, bo: 0 };
  const eraseAt = Math.floor(n * 0.7);
  const ops = [];
  for (let i = 0; i < n; i++) {
    const ns = pick(NAMESPACES);
    const at = T0 + i * MIN;
    const x = r();
    if (i === eraseAt) {
      ops.push({ kind: "erase", run: (m) => m.erase("ana", { scope: "subject", subject: SUBJECT }, { now: at }) });
    } else if (i % 25 === 24) {
      ops.push({ kind: "maintain", run: (m) => m.maintain() });
    } else if (x < 0.45 || ids[ns] < 3) {
      const named = ns === "ana" && r() < 0.25 ? `${SUBJECT} ` : "";
      const text = `${named}${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} note ${i}`;
      const outcome = pick(["success", "failure", "unknown"]);
      ids[ns] += 1;
      ops.push({
        kind: "remember",
        run: (m) => m.remember(ns, { text, createdAt: at, outcome, source: "agent" }, { vector: vec(text) }),
      });
    } else if (x < 0.52) {
      const q = `${pick(WORDS)} ${pick(WORDS)}`;
      ops.push({ kind: "recall", run: (m) => m.recall(ns, { text: q, k: 3 }, { vector: vec(q), now: at }) });
    } else if (x < 0.6) {
      const id = 1 + Math.floor(r() * ids[ns]);
      const status = pick(["active", "superseded", "rejected", "raw"]);
      ops.push({ kind: "setStatus", run: (m) => m.setStatus(ns, id, status) });
    } else if (x < 0.74) {
      const key = pick(["language", "city", "timezone", "contact.name", "editor"]);
      const value = key === "contact.name" && ns === "ana" && r() < 0.5 ? `${SUBJECT} ${i}` : `${pick(WORDS)} ${i}`;
      const trusted = r() < 0.7;
      const fact = trusted ? { key, value, source: "explicit", origin: "user" } : { key, value, origin: "agent" };
      ops.push({ kind: "setFact", run: (m) => m.setFact(ns, fact, { now: at }) });
    } else if (x < 0.8) {
      const text = `Always mention the ${pick(WORDS)} in ${pick(WORDS)} messages (${i})`;
      ops.push({ kind: "addRule", run: (m) => m.addRule(ns, text, { origin: "user", now: at }) });
    } else if (x < 0.97) {
      const k = Math.floor(r() * 1000);
      const signal = {
        ts: new Date(at).toISOString(),
        kind: "edited",
        agent: "email",
        before: `Order ${k} is confirmed; it ships soon.`,
        after: `Order ${k} is confirmed, it ships soon.`,
      };
      ops.push({ kind: "signal", run: (m) => m.signal(ns, signal) });
    } else {
      ops.push({ kind: "nightly", run: (m) => m.nightly(ns, { now: at }) });
    }
  }
  return ops;
}

/** The whole content of the file open as `fd` (which may have been renamed over or unlinked). */
function readFd(fd) {
  const out = Buffer.alloc(fstatSync(fd).size);
  for (let done = 0; done < out.length; ) done += readSync(fd, out, done, out.length - done, done);
  return out;
}

let cases = 0;
const opened = {}; // how the namespaces of crash images opened: snapshot, records, UNKNOWN_NAMESPACE
/** Opens `bytes` as a log (plus `extra` files); returns the answers and the size it kept. */
async function reopen(dir, bytes, extra = {}) {
  const path = join(dir, `image-${cases++}`);
  writeFileSync(path, bytes);
  for (const [suffix, b] of Object.entries(extra)) writeFileSync(path + suffix, b);
  const storage = await NodeFileStorage.open(path);
  try {
    const mem = await Mnemo.open(storage, opts);
    for (const ns of NAMESPACES) {
      const from = await mem.open(ns).then((o) => o.from, (e) => e.code);
      opened[from] = (opened[from] ?? 0) + 1;
    }
    const got = await answers(mem);
    return { path, got, size: statSync(path).size };
  } finally {
    await storage.close();
  }
}

test("crash images of a seeded workload on NodeFileStorage: every acknowledged write, nothing half-applied", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mnemo-crash-"));
  const path = join(dir, "log");
  const storage = await NodeFileStorage.open(path);
  // Every batch: the file length after it (one record each), and the inode it went to.
  const batches = [];
  const write = storage.write.bind(storage);
  storage.write = async (ops) => {
    await write(ops);
    const st = statSync(path);
    batches.push({ end: st.size, ino: st.ino });
  };
  const mem = await Mnemo.open(storage, opts);

  // Generation 1 is read through this descriptor once the erase has renamed a new file over it.
  const gen1 = openSync(path, "r");
  const ino1 = statSync(path).ino;
  const states = [{ kind: "start", batches: [], digest: await answers(mem) }];
  const kinds = {};
  let compacted = null; // {size, ino} of the file the erase compacted into
  let prev = { size: 0, ino: ino1 };
  for (const op of workload(SEED, OPS)) {
    const first = batches.length;
    let failed = null;
    try {
      await op.run(mem);
    } catch (e) {
      failed = e; // a refused operation (e.g. a status change the engine does not allow)
    }
    const st = statSync(path);
    if (op.kind === "erase") {
      assert.equal(failed, null, `erase failed: ${failed?.stack}`);
      assert.notEqual(st.ino, ino1, "the erase compacted the log into a new file");
      compacted = { size: st.size, ino: st.ino };
    } else {
      assert.equal(st.ino, prev.ino, `op ${states.length} (${op.kind}): the log was compacted; lower MNEMO_CRASH_OPS`);
      assert.ok(st.size >= prev.size, `op ${states.length} (${op.kind}): the file shrank`);
    }
    if (batches.length === first) {
      // Nothing was written, so nothing a reopened engine answers may have changed.
      assert.equal(await answers(mem), states.at(-1).digest, `op ${states.length} (${op.kind}) changed answers without a write`);
    }
    prev = { size: st.size, ino: st.ino };
    kinds[op.kind + (failed ? " (refused)" : "")] = (kinds[op.kind + (failed ? " (refused)" : "")] ?? 0) + 1;
    states.push({ kind: op.kind, batches: batches.slice(first), size: st.size, digest: await answers(mem) });
  }
  const finalDigest = states.at(-1).digest;
  await storage.close();
  assert.ok(compacted, "the workload erased");
  const old = readFd(gen1);
  closeSync(gen1);
  const final = readFileSync(path);
  assert.ok(count(old, SUBJECT) > 0, "the subject was in the first generation");
  // (later operations name the subject again)
  assert.equal(count(final.subarray(0, compacted.size), SUBJECT), 0, "and in no byte of the compacted log");
  assert.ok((kinds.maintain ?? 0) > 0 && (kinds.remember ?? 0) > OPS / 4, JSON.stringify(kinds));

  // Each generation: its bytes, the length it starts from, and its states (state 0: the one
  // it starts in); every write boundary in it maps to the state a crash image cut there holds.
  const eraseIdx = states.findIndex((s) => s.kind === "erase");
  const gens = [
    { name: "before the erase", bytes: old, from: 0, ino: ino1, states: states.slice(0, eraseIdx + 1) },
    { name: "after the erase", bytes: final, from: compacted.size, ino: compacted.ino, states: states.slice(eraseIdx) },
  ];
  let snapshotBatches = 0;
  for (const g of gens) {
    g.bounds = new Map(); // write boundary -> the index (in g.states) of the state it holds
    g.bounds.set(g.from, 0);
    g.inner = new Map(); // inner batch boundary of a multi-batch op -> the state before it
    for (let i = 1; i < g.states.length; i++) {
      const bs = g.states[i].batches.filter((b) => b.ino === g.ino);
      bs.forEach((b, j) => {
        if (j === bs.length - 1) g.bounds.set(b.end, i);
        else g.inner.set(b.end, i - 1);
      });
      snapshotBatches += g.states[i].kind === "maintain" ? bs.length : 0;
    }
    const ends = [...g.bounds.keys(), ...g.inner.keys()].sort((a, b) => a - b);
    assert.equal(ends.at(-1), g.bytes.length, `${g.name}: the last batch ends the file`);
    g.ends = ends;
  }
  assert.ok(snapshotBatches > 0, "maintain wrote snapshots");
  // The state a crash image of `g` cut at `n` must show.
  const expected = (g, n) => {
    const b = g.ends.filter((e) => e <= n).at(-1);
    return { size: b, digest: g.states[g.bounds.has(b) ? g.bounds.get(b) : g.inner.get(b)].digest };
  };

  // A whole image of each generation answers as the engine did.
  assert.equal((await reopen(dir, old)).got, states[eraseIdx].digest);
  assert.equal((await reopen(dir, final)).got, finalDigest);

  // Every write boundary.
  let checked = 0;
  for (const g of gens) {
    for (const n of g.ends) {
      const { got, size } = await reopen(dir, g.bytes.subarray(0, n));
      const want = expected(g, n);
      assert.equal(size, n, `${g.name}: the image cut at boundary ${n} kept every byte`);
      assert.equal(got, want.digest, `${g.name}: cut at boundary ${n}`);
      checked += 1;
    }
  }

  // Random offsets inside records: a bare cut, the rest of the record zeroed, or garbage.
  const r = rng(SEED ^ 0x9e3779b9);
  const torn = { cut: 0, zeros: 0, garbage: 0 };
  for (let c = 0; c < CUTS; c++) {
    const g = gens[c % 5 === 4 ? 1 : 0]; // most writes are in the first generation
    const i = 1 + Math.floor(r() * (g.ends.length - 1));
    const [start, end] = [g.ends[i - 1], g.ends[i]];
    if (end - start < 2) continue;
    const n = start + 1 + Math.floor(r() * (end - start - 1)); // strictly inside the record
    const mode = ["cut", "zeros", "garbage"][c % 3];
    const image = Buffer.from(g.bytes.subarray(0, mode === "cut" ? n : end));
    if (mode === "zeros") image.fill(0, n);
    if (mode === "garbage") for (let k = n; k < end; k++) image[k] = Math.floor(r() * 256);
    const want = expected(g, n);
    assert.equal(want.size, start);
    let got;
    try {
      got = await reopen(dir, image);
    } catch (e) {
      assert.fail(`${g.name}: torn write (${mode}) at ${n} in record ${start}..${end}: ${e.code} ${e.message}`);
    }
    assert.equal(got.size, start, `${g.name}: torn write (${mode}) at ${n}: truncated to the last whole record`);
    assert.equal(got.got, want.digest, `${g.name}: torn write (${mode}) at ${n} in record ${start}..${end}`);
    torn[mode] += 1;
  }
  assert.equal(torn.cut + torn.zeros + torn.garbage, CUTS, JSON.stringify(torn));
  assert.ok(opened.snapshot > 0 && opened.records > 0, `images opened from snapshots and from records: ${JSON.stringify(opened)}`);

  // A crash inside the erase's compaction: the old generation and a half-written tmp file.
  const half = final.subarray(0, Math.floor(compacted.size / 2));
  const mid = await reopen(dir, old, { ".tmp": half });
  assert.equal(mid.got, states[eraseIdx].digest, "a crash mid-compaction opens the erased state");
  assert.equal(existsSync(`${mid.path}.tmp`), false, "and deletes the half-written tmp file");

  // A crash after the delete batch, before the compaction: the subject's bytes are still in
  // the old file (the erase was never acknowledged); erasing again removes them.
  const again = join(dir, "retry");
  copyFileSync(mid.path, again);
  assert.ok(count(readFileSync(again), SUBJECT) > 0);
  const s = await NodeFileStorage.open(again);
  const receipt = await (await Mnemo.open(s, opts)).erase("ana", { scope: "subject", subject: SUBJECT });
  await s.close();
  assert.equal(receipt.verification.occurrences, 0);
  assert.equal(count(readFileSync(again), SUBJECT), 0, "the repeated erase vacuumed the file");

  console.log(
    `crash: ${OPS} ops ${JSON.stringify(kinds)}; ${states.length - 1} states, ` +
      `${checked} boundaries (${gens[0].inner.size + gens[1].inner.size} inside an operation), ` +
      `torn ${JSON.stringify(torn)}, namespaces opened ${JSON.stringify(opened)}, log ${old.length} B then ${final.length} B`,
  );
});
