// Node file storage: one append-only log of batch records (../batchlog.js), fsync before a
// write resolves.
//
// Opening replays the log; a torn or damaged last record (a crash mid-write) is cut off, so a
// batch is either whole or absent. The whole map is held in memory (the engine reads a
// namespace once, on open).
import { open, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { BatchLog, readRecord } from "../batchlog.js";

export class NodeFileStorage extends BatchLog {
  #file;
  #size = 0;

  /** Opens (or creates) the log at `path`. */
  static async open(path) {
    await mkdir(dirname(path), { recursive: true });
    const s = new NodeFileStorage();
    s.#file = await open(path, "a+");
    const bytes = new Uint8Array(await s.#file.readFile());
    let at = 0;
    for (let r = readRecord(bytes); r; r = readRecord(bytes.subarray(at))) {
      await s.apply(r.payload);
      at += r.size;
    } // stops at a torn or damaged tail
    if (at < bytes.length) await s.#file.truncate(at);
    s.#size = at;
    return s;
  }

  async append(record) {
    await this.#file.write(record, 0, record.length, this.#size);
    await this.#file.sync();
    this.#size += record.length;
  }

  async close() {
    await this.#file?.close();
  }
}
