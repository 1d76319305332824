// The batch record the log-shaped adapters store (Node files, Workers KV, chrome.storage): one
// record per atomic batch, and what they share: `BatchLog`, a mirror in memory that records are
// replayed into, that reads are served from and that compaction rewrites the log from; and
// `ItemLog`, a log kept as one item per record in a store without transactions.
//
// Byte format (integers little-endian, crc32 = IEEE, as zlib):
//
//   record  := len:u32 crc32:u32 payload       (crc32 of the payload; len > 0: an empty record
//                                               is never written, so 8 zero bytes are no record)
//   payload := op+
//   op      := 1 klen:u32 key vlen:u32 value   put
//            | 0 klen:u32 key                  delete
//            | 2 klen:u32 digits               checkpoint marker (ItemLog only, alone in its
//                                               record; digits: a sequence number in ASCII)
//
// A record is accepted only when its ops are well formed (they end exactly at `len`) and its
// checksum matches.
import { checkOps, MemoryStorage } from "./adapters/memory.js";

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const view = (b) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** A record of `ops` ([key, value | null] pairs); tags are 1 (put), 0 (delete) or 2 (marker). */
function record(ops, tagOf) {
  let size = 0;
  for (const [k, v] of ops) size += 5 + k.length + (v === null ? 0 : 4 + v.length);
  const out = new Uint8Array(8 + size);
  const dv = view(out);
  let at = 8;
  for (const op of ops) {
    const [k, v] = op;
    out[at] = tagOf(op);
    dv.setUint32(at + 1, k.length, true);
    out.set(k, at + 5);
    at += 5 + k.length;
    if (v !== null) {
      dv.setUint32(at, v.length, true);
      out.set(v, at + 4);
      at += 4 + v.length;
    }
  }
  dv.setUint32(0, size, true);
  dv.setUint32(4, crc32(out.subarray(8)), true);
  return out;
}

/** The record of a batch (throws INVALID_INPUT on a bad batch). */
export function encode(ops) {
  checkOps(ops);
  return record(ops, ([, v]) => (v === null ? 0 : 1));
}

/** The checkpoint marker record: "the live data was rewritten from item `from` on". */
export function encodeCheckpoint(from) {
  return record([[new TextEncoder().encode(String(from)), null]], () => 2);
}

// Whether `p` is a well-formed payload: ops that end exactly at its end, a marker only alone
// and holding digits. Reads lengths only, so garbage is refused before anything is copied.
function wellFormed(p) {
  const dv = view(p);
  let at = 0;
  let ops = 0;
  let marker = false;
  while (at < p.length) {
    if (at + 5 > p.length || p[at] > 2) return false;
    const tag = p[at];
    const klen = dv.getUint32(at + 1, true);
    if (tag === 2) {
      const digits = p.subarray(at + 5, at + 5 + klen);
      if (klen === 0 || klen > 15 || digits.length !== klen || digits.some((d) => d < 48 || d > 57)) return false;
      marker = true;
    }
    at += 5 + klen;
    if (tag === 1) {
      if (at + 4 > p.length) return false;
      at += 4 + dv.getUint32(at, true);
    }
    if (at > p.length) return false;
    ops += 1;
  }
  return ops > 0 && (!marker || ops === 1);
}

function decode(p) {
  const dv = view(p);
  if (p[0] === 2) return { from: Number(new TextDecoder().decode(p.subarray(5))) };
  const ops = [];
  let at = 0;
  while (at < p.length) {
    const tag = p[at];
    const klen = dv.getUint32(at + 1, true);
    const key = p.slice(at + 5, at + 5 + klen);
    at += 5 + klen;
    if (tag === 1) {
      const vlen = dv.getUint32(at, true);
      ops.push([key, p.slice(at + 4, at + 4 + vlen)]);
      at += 4 + vlen;
    } else {
      ops.push([key, null]);
    }
  }
  return { ops };
}

/**
 * The record at the start of `bytes`: `{size, ops}` for a batch, `{size, from}` for a checkpoint
 * marker, or null when it is cut short, empty, malformed or fails its checksum.
 */
export function readRecord(bytes) {
  if (bytes.length < 8) return null;
  const dv = view(bytes);
  const len = dv.getUint32(0, true);
  if (len === 0 || len > bytes.length - 8) return null;
  const payload = bytes.subarray(8, 8 + len);
  if (!wellFormed(payload) || crc32(payload) !== dv.getUint32(4, true)) return null;
  return { size: 8 + len, ...decode(payload) };
}

/** The error opening throws when stored data does not check out. */
export const corrupt = (message) => Object.assign(new Error(message), { code: "CORRUPT" });

/** `pairs` ([key, value]) as put records of at most `cap` bytes (one pair bigger than that gets
 * a record of its own). */
function* recordsOf(pairs, cap) {
  let ops = [];
  let size = 8;
  for (const pair of pairs) {
    const n = 9 + pair[0].length + pair[1].length;
    if (ops.length > 0 && size + n > cap) {
      yield encode(ops);
      ops = [];
      size = 8;
    }
    ops.push(pair);
    size += n;
  }
  if (ops.length > 0) yield encode(ops);
}

const MIB = 1 << 20;

/**
 * A storage whose batches are records in a log. Subclasses store records (`append(record)`),
 * replace the whole log by new records (`replace(records)`, resolving to the bytes the log then
 * holds), and hand the records they read on open to `apply`.
 *
 * Compaction: `compact()` rewrites the log as the live data only (records of at most
 * `recordCap` bytes), so no byte of a deleted or overwritten value stays in it. It also runs
 * after a write once the log holds more than twice the live data and at least 1 MiB more than
 * it (the rule of the Rust FileStore), so opening reads at most twice the live data once that
 * passes 1 MiB. An automatic compaction that fails does
 * not fail the write (the batch is stored); it is tried again once the log has grown 1 MiB more.
 * Writes and compactions run one at a time, in call order.
 */
export class BatchLog {
  #mem = new MemoryStorage();
  #logBytes = 0; // bytes of the records the log holds: what opening reads
  #retryAt = 0; // after a failed automatic compaction: the log size to try again past
  #queue = Promise.resolve();

  /** The largest record a compaction writes, in bytes. */
  recordCap = MIB;

  /** Runs `fn` once every earlier write and compaction has settled. */
  exclusive(fn) {
    const next = this.#queue.then(fn);
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Serves a record read back from the log (a `readRecord` result) and counts its bytes. */
  async apply(record) {
    this.#logBytes += record.size;
    if (record.ops) await this.#mem.write(record.ops);
  }

  get(key) {
    return this.#mem.get(key);
  }

  scan(prefix, after, limit) {
    return this.#mem.scan(prefix, after, limit);
  }

  /** Stores the batch as one record (`append`), then serves it. */
  write(ops) {
    return this.exclusive(async () => {
      checkOps(ops);
      if (ops.length === 0) return;
      const record = encode(ops); // throws on bad input before anything is written
      await this.append(record);
      await this.#mem.write(ops);
      this.#logBytes += record.length;
      const live = this.#mem.bytes + 9 * this.#mem.size; // the live data as put ops
      if (this.#logBytes > Math.max(2 * live, live + MIB) && this.#logBytes > this.#retryAt) {
        await this.#compact().catch(() => {
          this.#retryAt = this.#logBytes + MIB;
        });
      }
    });
  }

  /** Rewrites the log as records of the live data only. */
  /** What erasure does here: the log is rewritten with the live data only. */
  get erasure() {
    return { rewrites: true, note: "log rewritten with the live records only" };
  }

  compact() {
    return this.exclusive(() => this.#compact());
  }

  /** The live data as put records of at most `cap` bytes each, in key order. */
  async liveRecords(cap = this.recordCap) {
    return recordsOf(await this.#mem.scan(new Uint8Array(0), null, Infinity), cap);
  }

  async #compact() {
    this.#logBytes = await this.replace(await this.liveRecords());
    this.#retryAt = 0;
  }
}

/**
 * A BatchLog kept as one item per record, in a store that writes one item atomically but has
 * no transactions (chrome.storage, Workers KV). Items are named by sequence number
 * (`itemName(seq)`), 0, 1, 2, … in write order. Subclasses provide `itemName(seq)`,
 * `getItem(name)` (the bytes or null), `putItem(name, bytes)`, `removeItems(names)`, and call
 * `load(seqs)` with the sequence numbers present when opening.
 *
 * Compaction writes a checkpoint after the current last item, then deletes what it supersedes:
 *   1. the live data as put records, items C, C+1, …, C+n-1 (C = the next sequence number);
 *   2. a checkpoint marker item C+n whose record says "from C": the commit point;
 *   3. deletes every item before C.
 * Opening replays from the latest marker's C (from item 0, the oldest, when there is none) and
 * deletes leftover items before it. A crash at any point leaves a usable log: before the marker
 * exists, the new items are ordinary batches that put each live key to the value it already
 * has, so replaying old log + new items gives the same contents; once it exists, every item of
 * the checkpoint was written before it (each write is awaited), so items from C on hold
 * everything and the ones before C are ignored, whichever of them a cut-short deletion left.
 * Items from C on must be contiguous: a missing one is CORRUPT, never skipped.
 */
export class ItemLog extends BatchLog {
  #next = 0; // the sequence number of the next item
  #first = 0; // items before this are deleted

  /** Replays the log whose items have sequence numbers `seqs`, then deletes superseded ones. */
  async load(seqs) {
    seqs = [...seqs].sort((a, b) => a - b);
    if (seqs.length === 0) return;
    const last = seqs[seqs.length - 1];
    let start = seqs[0];
    let marked = false;
    const records = new Map();
    // read from the end back to the latest marker's start (items before it are never read)
    for (let i = seqs.length - 1; i >= 0 && seqs[i] >= start; i--) {
      const name = this.itemName(seqs[i]);
      const bytes = await this.getItem(name);
      if (bytes === null) throw corrupt(`batch ${name} is missing`);
      const r = readRecord(bytes);
      if (!r || r.size !== bytes.length) throw corrupt(`batch ${name} is damaged`);
      if (r.from > seqs[i]) throw corrupt(`checkpoint ${name} starts after itself`);
      if (r.from !== undefined && !marked) {
        marked = true;
        start = r.from;
      }
      records.set(seqs[i], r);
    }
    for (let seq = start; seq <= last; seq++) {
      if (!records.has(seq)) throw corrupt(`batch ${this.itemName(seq)} is missing`);
      await this.apply(records.get(seq));
    }
    this.#next = last + 1;
    this.#first = seqs[0];
    const old = seqs.filter((s) => s < start).map((s) => this.itemName(s));
    try {
      if (old.length > 0) await this.removeItems(old); // leftovers of a deletion cut short
      this.#first = start;
    } catch {
      // they stay ignored; the next compaction deletes them
    }
  }

  async append(record) {
    await this.putItem(this.itemName(this.#next), record);
    this.#next += 1;
  }

  async replace(records) {
    const from = this.#next;
    let bytes = 0;
    for (const r of records) {
      await this.append(r);
      bytes += r.length;
    }
    const marker = encodeCheckpoint(from);
    await this.append(marker); // the commit point
    const old = [];
    for (let s = this.#first; s < from; s++) old.push(this.itemName(s));
    if (old.length > 0) await this.removeItems(old);
    this.#first = from;
    return bytes + marker.length;
  }
}
