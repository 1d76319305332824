// The batch record the log-shaped adapters store (Node files, Workers KV, chrome.storage): one
// record per atomic batch, and `BatchLog`, what they share: a mirror in memory that records
// are replayed into and that reads are served from.
//
// record  := len:u32 crc32:u32 payload         (LE; crc32 IEEE of payload)
// payload := op*    op := 1 klen:u32 key vlen:u32 value  |  0 klen:u32 key
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

export function encode(ops) {
  checkOps(ops);
  let size = 0;
  for (const [k, v] of ops) size += 5 + k.length + (v === null ? 0 : 4 + v.length);
  const out = new Uint8Array(8 + size);
  const dv = new DataView(out.buffer);
  let at = 8;
  for (const [k, v] of ops) {
    out[at] = v === null ? 0 : 1;
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

export function decode(payload) {
  const dv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const ops = [];
  let at = 0;
  while (at < payload.length) {
    const tag = payload[at];
    const klen = dv.getUint32(at + 1, true);
    const key = payload.slice(at + 5, at + 5 + klen);
    at += 5 + klen;
    if (tag === 1) {
      const vlen = dv.getUint32(at, true);
      ops.push([key, payload.slice(at + 4, at + 4 + vlen)]);
      at += 4 + vlen;
    } else {
      ops.push([key, null]);
    }
  }
  return ops;
}


/** The payload of the record at the start of `bytes` and its length, or null when it is torn
 * or damaged. */
export function readRecord(bytes) {
  if (bytes.length < 8) return null;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = dv.getUint32(0, true);
  if (8 + len > bytes.length) return null;
  const payload = bytes.subarray(8, 8 + len);
  return crc32(payload) === dv.getUint32(4, true) ? { payload, size: 8 + len } : null;
}

/** A storage whose batches are records in a log: subclasses store them (`append`). */
export class BatchLog {
  #mem = new MemoryStorage();

  /** Applies a stored record; throws CORRUPT when it does not check out (`name` says where). */
  async replay(bytes, name) {
    const r = readRecord(bytes);
    if (!r || r.size !== bytes.length) {
      throw Object.assign(new Error(`batch ${name} is damaged`), { code: "CORRUPT" });
    }
    await this.#mem.write(decode(r.payload));
  }

  /** Applies a payload already checked. */
  apply(payload) {
    return this.#mem.write(decode(payload));
  }

  get(key) {
    return this.#mem.get(key);
  }

  scan(prefix, after, limit) {
    return this.#mem.scan(prefix, after, limit);
  }

  /** Stores the batch as one record (`append`), then serves it. */
  async write(ops) {
    if (ops.length === 0) return;
    const record = encode(ops); // throws on bad input before anything is written
    await this.append(record);
    await this.#mem.write(ops);
  }
}
