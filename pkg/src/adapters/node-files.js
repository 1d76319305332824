// Node file storage: one append-only log of batch records (format in ../batchlog.js), fsync
// before a write resolves. The whole map is held in memory (the engine reads a namespace once,
// on open).
//
// Opening replays the log. When a record does not check out (cut short, malformed, or failing
// its checksum) at byte offset X:
//   - if everything from X on is zero bytes (a file system extended the file with zeros), or
//     no well-formed, checksummed record starts at any offset after X, the bad record is the
//     last write, torn by a crash and never acknowledged: the file is truncated to X, so a
//     batch is either whole or absent;
//   - otherwise a good record follows the bad one: that is damage in the middle of the log, and
//     `open` throws an Error with code "CORRUPT" naming offset X, without changing the file.
// The search for a later record is what keeps a damaged length field (which can make a record
// in the middle look cut short by pointing past the end of the file) from passing for a torn
// tail. Its limits: two faults at once, a damaged record right before a torn last one, look
// like one torn tail (the damaged batch is dropped too); and a torn record whose bytes happen to
// contain a whole valid record (a value that is itself a batch record) reads as CORRUPT.
//
// Compaction (`compact()`, and automatically, see BatchLog): the live data is written as
// records to `<path>.tmp`, fsynced, renamed over the log and the directory fsynced, so a crash
// leaves either the old log or the new one; the old file, and with it every byte of deleted
// values, is unlinked. (Whether the medium still holds freed blocks is up to the file system
// and the disk.) A `<path>.tmp` left by a crash is deleted on open.
import { open, mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { BatchLog, corrupt, readRecord } from "../batchlog.js";

// Whether the bytes from `at` on can be a torn last write (see the header).
function tornTail(bytes, at) {
  if (bytes.subarray(at).every((b) => b === 0)) return true;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let j = at + 1; j + 8 < bytes.length; j++) {
    const len = dv.getUint32(j, true);
    if (len > 0 && len <= bytes.length - j - 8 && readRecord(bytes.subarray(j))) return false;
  }
  return true;
}

async function writeAll(file, bytes, position) {
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await file.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

export class NodeFileStorage extends BatchLog {
  #path;
  #file;
  #size = 0;

  /** Opens (or creates) the log at `path`; rejects with code CORRUPT when it is damaged. */
  static async open(path) {
    await mkdir(dirname(path), { recursive: true });
    const s = new NodeFileStorage();
    s.#path = path;
    const file = await open(path, "a+");
    try {
      const bytes = new Uint8Array(await file.readFile());
      let at = 0;
      while (at < bytes.length) {
        const r = readRecord(bytes.subarray(at));
        if (r?.ops) {
          await s.apply(r);
          at += r.size;
        } else if (tornTail(bytes, at)) {
          break;
        } else {
          throw corrupt(`${path}: damaged record at byte ${at} of ${bytes.length}, with valid records after it`);
        }
      }
      if (at < bytes.length) {
        await file.truncate(at);
        await file.sync();
      }
      s.#size = at;
    } catch (e) {
      await file.close();
      throw e;
    }
    s.#file = file;
    await rm(`${path}.tmp`, { force: true }).catch(() => {}); // a compaction's, cut short
    return s;
  }

  async append(record) {
    try {
      await writeAll(this.#file, record, this.#size);
      await this.#file.sync();
    } catch (e) {
      // leave no partial record for the next append to land behind
      await this.#file.truncate(this.#size).catch(() => {});
      throw e;
    }
    this.#size += record.length;
  }

  async replace(records) {
    const tmp = `${this.#path}.tmp`;
    const file = await open(tmp, "w+");
    let size = 0;
    try {
      for (const r of records) {
        await writeAll(file, r, size);
        size += r.length;
      }
      await file.sync();
      await rename(tmp, this.#path);
    } catch (e) {
      await file.close().catch(() => {});
      await rm(tmp, { force: true }).catch(() => {});
      throw e;
    }
    try {
      const dir = await open(dirname(this.#path), "r");
      await dir.sync().finally(() => dir.close());
    } catch {
      // directory fsync is not possible everywhere (Windows)
    }
    const old = this.#file;
    this.#file = file; // the renamed file: the log from now on
    this.#size = size;
    await old.close().catch(() => {});
    return size;
  }

  /** Closes the file once pending writes have settled. */
  close() {
    return this.exclusive(() => this.#file?.close());
  }
}
