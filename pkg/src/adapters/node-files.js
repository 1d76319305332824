// Node file storage: one append-only log of batch records (../batchlog.js), fsync before a
// write resolves.
//
// Opening replays the log; a torn or damaged last record (a crash mid-write) is cut off, so a
// batch is either whole or absent. The whole map is held in memory (the engine reads a
// namespace once, on open).
import { open, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { MemoryStorage } from "./memory.js";
import { crc32, decode, encode } from "../batchlog.js";

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
