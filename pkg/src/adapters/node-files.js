// Node file storage: one append-only log, one record per batch, fsync before a write resolves.
//
// record := len:u32 crc32:u32 payload         (LE; crc32 IEEE of payload)
// payload := op*    op := 1 klen:u32 key vlen:u32 value  |  0 klen:u32 key
//
// Opening replays the log; a torn or damaged last record (a crash mid-write) is cut off, so a
// batch is either whole or absent. The whole map is held in memory (the engine reads a
// namespace once, on open).
import { open, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { MemoryStorage, checkOps } from "./memory.js";

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

function encode(ops) {
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

function decode(payload) {
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

export class NodeFileStorage {
  #mem = new MemoryStorage();
  #file;
  #size = 0;

  /** Opens (or creates) the log at `path`. */
  static async open(path) {
    await mkdir(dirname(path), { recursive: true });
    const s = new NodeFileStorage();
    s.#file = await open(path, "a+");
    const bytes = new Uint8Array(await s.#file.readFile());
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = 0;
    while (at + 8 <= bytes.length) {
      const len = dv.getUint32(at, true);
      if (at + 8 + len > bytes.length) break; // torn tail
      const payload = bytes.subarray(at + 8, at + 8 + len);
      if (crc32(payload) !== dv.getUint32(at + 4, true)) break; // damaged tail
      await s.#mem.write(decode(payload));
      at += 8 + len;
    }
    if (at < bytes.length) await s.#file.truncate(at);
    s.#size = at;
    return s;
  }

  get(key) {
    return this.#mem.get(key);
  }

  scan(prefix, after, limit) {
    return this.#mem.scan(prefix, after, limit);
  }

  async write(ops) {
    if (ops.length === 0) return;
    const record = encode(ops); // throws on bad input before anything is written
    await this.#file.write(record, 0, record.length, this.#size);
    await this.#file.sync();
    this.#size += record.length;
    await this.#mem.write(ops);
  }

  async close() {
    await this.#file?.close();
  }
}
