// The log-shaped adapters (NodeFileStorage, ChromeStorage, WorkersKvStorage) in plain Node:
// damage in the middle of a file log is CORRUPT and leaves the file alone, a torn tail is cut
// off; compaction leaves no byte of a deleted value in storage, and a compaction cut short at
// any call (chrome.storage and KV fakes that fail on cue) loses nothing; the file log compacts
// itself as it grows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, statSync, existsSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NodeFileStorage } from "../../pkg/src/adapters/node-files.js";
import { ChromeStorage } from "../../pkg/src/adapters/chrome-storage.js";
import { WorkersKvStorage } from "../../pkg/src/adapters/workers-kv.js";
import { MemoryStorage } from "../../pkg/src/adapters/memory.js";
import { checkStorage, checkReopened } from "./storage-contract.mjs";

const enc = (s) => new TextEncoder().encode(s);
const dec = (b) => new TextDecoder().decode(b);
const tmpLog = () => join(mkdtempSync(join(tmpdir(), "mnemo-log-")), "log");
const SECRET = "SECRET-7f3a9c-do-not-keep";

/** Everything a storage holds, as text, for comparing. */
async function dump(s) {
  const all = await s.scan(new Uint8Array(0), null, Infinity);
  return all.map(([k, v]) => `${Buffer.from(k).toString("hex")}=${Buffer.from(v).toString("hex")}`).join("\n");
}

const count = (haystack, needle) => haystack.toString("latin1").split(needle).length - 1;

// ---- NodeFileStorage: damage and torn tails --------------------------------------------------

/** A log of three one-put batches; returns the path and the byte offsets of the records. */
async function threeBatches() {
  const path = tmpLog();
  const s = await NodeFileStorage.open(path);
  const ends = [];
  for (const i of [1, 2, 3]) {
    await s.write([[enc(`k${i}`), enc(`value of batch ${i}`)]]);
    ends.push(statSync(path).size);
  }
  await s.close();
  return { path, starts: [0, ends[0], ends[1]], ends };
}

async function keys(path) {
  const s = await NodeFileStorage.open(path);
  const got = (await s.scan(enc("k"), null, 10)).map(([k]) => dec(k));
  await s.close();
  return got;
}

function patch(path, offset, byte) {
  const b = readFileSync(path);
  b[offset] = byte ?? b[offset] ^ 0xff;
  writeFileSync(path, b);
  return b;
}

test("file log: a damaged record in the middle is CORRUPT and the file stays byte for byte", async () => {
  // a payload byte, the checksum, and the length field (made huge, and made smaller: a damaged
  // length must not pass for a torn tail)
  for (const [what, at, byte] of [
    ["payload", 12, undefined],
    ["checksum", 5, undefined],
    ["length made huge", 3, 0x7f],
    ["length made smaller", 0, 3],
  ]) {
    const { path, starts } = await threeBatches();
    const before = patch(path, starts[1] + at, byte);
    await assert.rejects(NodeFileStorage.open(path), (e) => {
      assert.equal(e.code, "CORRUPT", `${what}: ${e.message}`);
      assert.match(e.message, new RegExp(`byte ${starts[1]}\\b`), what);
      return true;
    });
    assert.ok(readFileSync(path).equals(before), `${what}: the file is unchanged`);
    assert.ok(!existsSync(`${path}.tmp`));
  }
});

test("file log: a damaged or torn last record is dropped and cut off", async () => {
  for (const [what, at, byte] of [
    ["payload", 12, undefined],
    ["checksum", 4, undefined],
    ["length past the end", 3, 0x7f],
    ["length made smaller", 0, 3],
  ]) {
    const { path, starts } = await threeBatches();
    patch(path, starts[2] + at, byte);
    assert.deepEqual(await keys(path), ["k1", "k2"], what);
    assert.equal(statSync(path).size, starts[2], `${what}: truncated to the valid prefix`);
  }
  const { path, starts, ends } = await threeBatches();
  writeFileSync(path, readFileSync(path).subarray(0, starts[2] + Math.floor((ends[2] - starts[2]) / 2)));
  assert.deepEqual(await keys(path), ["k1", "k2"], "a record cut in the middle");
  assert.equal(statSync(path).size, starts[2]);
  writeFileSync(path, readFileSync(path).subarray(0, starts[1] + 5));
  assert.deepEqual(await keys(path), ["k1"], "a cut header");
  assert.equal(statSync(path).size, starts[1]);
});

test("file log: a tail of zero bytes counts as torn", async () => {
  const { path, ends } = await threeBatches();
  appendFileSync(path, Buffer.alloc(4096));
  assert.deepEqual(await keys(path), ["k1", "k2", "k3"]);
  assert.equal(statSync(path).size, ends[2]);
  // a record cut short and the rest of its block zeros
  const b = readFileSync(path);
  writeFileSync(path, Buffer.concat([b.subarray(0, ends[1] + 10), Buffer.alloc(4096)]));
  assert.deepEqual(await keys(path), ["k1", "k2"]);
  assert.equal(statSync(path).size, ends[1]);
});

// ---- fakes of chrome.storage.local and a KV namespace that fail on cue ----------------------

/**
 * Call counting for the fakes: `arm({failAt, applied, crash})` starts counting calls at 0, and
 * call number `failAt` throws: with `applied`, after doing its work. With `crash` (default),
 * every later call throws too (the process is gone); otherwise only that one fails.
 */
function faults(fake) {
  let calls = 0;
  let plan = { failAt: Infinity };
  fake.arm = (p) => {
    calls = 0;
    plan = { crash: true, ...p };
  };
  const call = (work) => {
    const n = calls++;
    if (n === plan.failAt) {
      if (plan.applied) work();
      throw new Error(`injected failure at call ${n}`);
    }
    if (n > plan.failAt && plan.crash) throw new Error(`crashed (call ${n})`);
    return work();
  };
  return call;
}

/** chrome.storage.local over `data` (item name → string). */
function fakeArea(data) {
  const area = {};
  const call = faults(area);
  return Object.assign(area, {
    get: async (keys) => call(() => (assert.equal(keys, null), structuredClone(data))),
    set: async (items) => call(() => Object.assign(data, structuredClone(items))),
    remove: async (names) => call(() => [names].flat().forEach((n) => delete data[n])),
  });
}

/** A KV namespace over `data` (Map name → Uint8Array), listing two keys per page. */
function fakeKv(data) {
  const kv = {};
  const call = faults(kv);
  return Object.assign(kv, {
    list: async ({ prefix, cursor }) =>
      call(() => {
        const names = [...data.keys()].filter((n) => n.startsWith(prefix)).sort();
        const at = Number(cursor ?? 0);
        const keys = names.slice(at, at + 2).map((name) => ({ name }));
        const done = at + 2 >= names.length;
        return { keys, list_complete: done, ...(done ? {} : { cursor: String(at + 2) }) };
      }),
    get: async (name, type) =>
      call(() => {
        assert.equal(type, "arrayBuffer");
        const v = data.get(name);
        return v === undefined ? null : v.slice().buffer;
      }),
    put: async (name, value) => call(() => void data.set(name, new Uint8Array(value).slice())),
    delete: async (name) => call(() => void data.delete(name)),
  });
}

const rawArea = (data) => Buffer.concat(Object.values(data).map((v) => Buffer.from(v, "base64")));
const rawKv = (data) => Buffer.concat([...data.values()].map((v) => Buffer.from(v)));

const armed = (fake, plan) => (plan && fake.arm(plan), fake);

// The two item logs, each as: fresh backing data, an opener over it, and its raw bytes.
const itemLogs = [
  {
    name: "ChromeStorage",
    fresh: () => ({}),
    open: (data, plan) => ChromeStorage.open(armed(fakeArea(data), plan), "t/"),
    fake: fakeArea,
    wrap: (area) => ChromeStorage.open(area, "t/"),
    raw: rawArea,
    copy: (data) => structuredClone(data),
  },
  {
    name: "WorkersKvStorage",
    fresh: () => new Map(),
    open: (data, plan) => WorkersKvStorage.open(armed(fakeKv(data), plan)),
    fake: fakeKv,
    wrap: (kv) => WorkersKvStorage.open(kv),
    raw: rawKv,
    copy: (data) => new Map([...data].map(([k, v]) => [k, v.slice()])),
  },
];

/** Batches with puts, overwrites and deletes; values holding SECRET are all deleted. */
async function history(s) {
  for (let i = 0; i < 12; i++) {
    await s.write([
      [enc(`keep/${i}`), enc(`kept value ${i} `.repeat(8))],
      [enc(`gone/${i}`), enc(`${SECRET} ${i}`)],
    ]);
  }
  for (let i = 0; i < 12; i += 2) await s.write([[enc(`keep/${i}`), enc(`overwritten ${i}`)]]);
  for (let i = 0; i < 12; i++) await s.write([[enc(`gone/${i}`), null]]);
}

// ---- compaction: erasure ------------------------------------------------------------------

test("compaction leaves no byte of a deleted value (file, chrome.storage, KV)", async () => {
  const path = tmpLog();
  let f = await NodeFileStorage.open(path);
  await history(f);
  assert.ok(count(readFileSync(path), SECRET) > 0, "the log holds deleted values before");
  const before = await dump(f);
  await f.compact();
  assert.equal(count(readFileSync(path), SECRET), 0);
  assert.ok(!existsSync(`${path}.tmp`));
  await f.write([[enc("after"), enc("compaction")]]); // appends go to the new file
  await f.close();
  f = await NodeFileStorage.open(path);
  assert.equal(dec(await f.get(enc("after"))), "compaction");
  await f.write([[enc("after"), null]]);
  assert.equal(await dump(f), before);
  await f.close();

  for (const log of itemLogs) {
    const data = log.fresh();
    const s = await log.open(data);
    s.recordCap = 300; // several checkpoint records
    await history(s);
    assert.ok(count(log.raw(data), SECRET) > 0, log.name);
    const contents = await dump(s);
    await s.compact();
    assert.equal(count(log.raw(data), SECRET), 0, `${log.name}: no deleted value left`);
    assert.equal(await dump(await log.open(data)), contents, log.name);
    await s.compact(); // again, over a compacted log
    assert.equal(await dump(await log.open(data)), contents, log.name);
  }
});

test("file log: a compaction that cannot finish leaves the log as it was", async () => {
  const path = tmpLog();
  writeFileSync(`${path}.tmp`, "the rest of a compaction cut short by a crash");
  const s = await NodeFileStorage.open(path);
  assert.ok(!existsSync(`${path}.tmp`), "open deletes a leftover temporary file");
  await history(s);
  const contents = await dump(s);
  const before = readFileSync(path);
  mkdirSync(join(`${path}.tmp`, "in-the-way"), { recursive: true }); // the temporary file cannot be made
  await assert.rejects(s.compact());
  assert.ok(readFileSync(path).equals(before), "the log is untouched");
  // automatic compactions fail from here on, and writes still succeed
  for (let i = 0; i < 1200; i++) await s.write([[enc("big"), enc(`${i}:`.padEnd(1000, "z"))]]);
  assert.ok(statSync(path).size > 1 << 20);
  await s.write([[enc("big"), null]]);
  assert.equal(await dump(s), contents);
  rmSync(`${path}.tmp`, { recursive: true });
  await s.compact();
  assert.equal(count(readFileSync(path), SECRET), 0);
  await s.close();
  const again = await NodeFileStorage.open(path);
  assert.equal(await dump(again), contents);
  await again.close();
});

test("storage contract on ChromeStorage and WorkersKvStorage fakes, and after compaction", async () => {
  for (const log of itemLogs) {
    const data = log.fresh();
    const s = await log.open(data);
    await checkStorage(s);
    await checkReopened(await log.open(data));
    await s.compact();
    await checkReopened(await log.open(data));
  }
  const path = tmpLog();
  const f = await NodeFileStorage.open(path);
  await checkStorage(f);
  await f.compact();
  await f.close();
  const g = await NodeFileStorage.open(path);
  await checkReopened(g);
  await g.close();
  await new MemoryStorage().compact();
});

// ---- compaction: crash safety -------------------------------------------------------------

test("a compaction cut short at any call, then a reopen cut short at any call, loses nothing", async () => {
  for (const log of itemLogs) {
    const base = log.fresh();
    const s0 = await log.open(base);
    await history(s0);
    const contents = await dump(s0);
    let n = 0;
    for (let done = false; !done; n++) {
      for (const applied of [false, true]) {
        const data = log.copy(base);
        const fake = log.fake(data);
        const s = await log.wrap(fake);
        s.recordCap = 300;
        fake.arm({ failAt: n, applied });
        done = await s.compact().then(() => true, () => false);
        // reopening may itself be cut short (while deleting leftovers): then open again
        for (let m = 0; ; m++) {
          const copy = log.copy(data);
          const r = await log.open(copy, { failAt: m, applied }).catch(() => null);
          if (r) assert.equal(await dump(r), contents, `${log.name}: compaction failed at ${n}, reopen at ${m}`);
          const clean = await log.open(copy);
          assert.equal(await dump(clean), contents, `${log.name}: compaction failed at ${n}, reopen at ${m}, then clean`);
          if (r) break;
        }
        const last = await log.open(data);
        last.recordCap = 300;
        await last.compact();
        assert.equal(count(log.raw(data), SECRET), 0, `${log.name}: failed at ${n}, then compacted`);
        assert.equal(await dump(await log.open(data)), contents, `${log.name}: failed at ${n}, compacted`);
      }
    }
    assert.ok(n > 5, `${log.name}: the compaction took ${n} calls`);
  }
});

test("a compaction that fails, followed by more writes on the same store, loses nothing", async () => {
  for (const log of itemLogs) {
    for (let n = 0; n < 12; n++) {
      const data = log.fresh();
      const fake = log.fake(data);
      const s = await log.wrap(fake);
      s.recordCap = 300;
      await history(s);
      fake.arm({ failAt: n, crash: false, applied: n % 2 === 1 });
      await s.compact().catch(() => {});
      fake.arm({}); // no more failures
      await s.write([[enc("keep/1"), enc("later")], [enc("keep/2"), null]]);
      await s.write([[enc("new"), enc("batch")]]);
      const expected = await dump(s);
      assert.equal(await dump(await log.open(data)), expected, `${log.name}: failure at ${n}`);
      await s.compact();
      assert.equal(await dump(await log.open(data)), expected, `${log.name}: compacted after failure at ${n}`);
      assert.equal(count(log.raw(data), SECRET), 0);
    }
  }
});

// ---- automatic compaction -------------------------------------------------------------------

test("the file log compacts itself: 5,000 overwrites stay within max(2x live, live + 1 MiB) + a record", async () => {
  const path = tmpLog();
  let s = await NodeFileStorage.open(path);
  const key = enc("the/key");
  let max = 0;
  let threshold = 0;
  let record = 0;
  for (let i = 0; i < 5000; i++) {
    const value = enc(`${i}:`.padEnd(1000, "x"));
    await s.write([[key, value]]);
    const live = 9 + key.length + value.length;
    record = 8 + live;
    threshold = Math.max(2 * live, live + (1 << 20));
    const size = statSync(path).size;
    max = Math.max(max, size);
    assert.ok(size <= threshold + record, `after write ${i}: ${size} bytes`);
  }
  assert.ok(max > threshold - record, `the log did grow to the threshold (at most ${max} bytes)`);
  await s.close();
  s = await NodeFileStorage.open(path);
  assert.equal(dec(await s.get(key)).split(":")[0], "4999");
  await s.close();
});

test("item logs compact themselves, and a failing compaction does not fail the write", async () => {
  for (const log of itemLogs) {
    const data = log.fresh();
    const s = await log.open(data);
    for (let i = 0; i < 1500; i++) await s.write([[enc("k"), enc(`${i}:`.padEnd(1000, "y"))]]);
    const items = log.name === "WorkersKvStorage" ? data.size : Object.keys(data).length;
    assert.ok(items < 1200, `${log.name}: ${items} items`);
    assert.equal(dec(await (await log.open(data)).get(enc("k"))).split(":")[0], "1499");
  }
  // deletes always fail: every automatic compaction fails after its commit point
  const data = new Map();
  const kv = fakeKv(data);
  kv.delete = async () => {
    throw new Error("no deletes today");
  };
  const s = await WorkersKvStorage.open(kv);
  for (let i = 0; i < 1500; i++) await s.write([[enc("k"), enc(`${i}:`.padEnd(1000, "y"))]]);
  assert.equal(dec(await s.get(enc("k"))).split(":")[0], "1499");
  assert.equal(dec(await (await WorkersKvStorage.open(fakeKv(data))).get(enc("k"))).split(":")[0], "1499");
});
