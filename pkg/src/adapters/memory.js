// In-memory storage: the reference adapter (nothing survives the process).
import { toKey, fromKey } from "../keys.js";

/** Throws a typed error unless `ops` is a list of [Uint8Array, Uint8Array | null]. */
export function checkOps(ops) {
  const ok =
    Array.isArray(ops) &&
    ops.every(
      (op) =>
        Array.isArray(op) &&
        op[0] instanceof Uint8Array &&
        (op[1] === null || op[1] instanceof Uint8Array),
    );
  if (!ok) {
    throw Object.assign(new TypeError("write takes a list of [Uint8Array, Uint8Array | null]"), {
      code: "INVALID_INPUT",
    });
  }
}

export class MemoryStorage {
  #map = new Map();
  #bytes = 0; // of the live keys and values

  /** The number of live entries (log compaction sizes the live data with these two). */
  get size() {
    return this.#map.size;
  }

  /** The bytes of the live keys and values. */
  get bytes() {
    return this.#bytes;
  }

  async get(key) {
    const v = this.#map.get(toKey(key));
    return v === undefined ? null : v.slice();
  }

  async scan(prefix, after, limit) {
    const p = toKey(prefix);
    const a = after ? toKey(after) : null;
    const keys = [...this.#map.keys()]
      .filter((k) => k.startsWith(p) && (a === null || k > a))
      .sort();
    return keys.slice(0, limit).map((k) => [fromKey(k), this.#map.get(k).slice()]);
  }

  // Atomic: ops are checked before any is applied.
  async write(ops) {
    checkOps(ops);
    for (const [k, v] of ops) {
      const key = toKey(k);
      const old = this.#map.get(key);
      if (old !== undefined) this.#bytes -= k.length + old.length;
      if (v === null) {
        this.#map.delete(key);
      } else {
        this.#map.set(key, v.slice());
        this.#bytes += k.length + v.length;
      }
    }
  }

  /** Nothing to do: a deleted value is dropped at once (the storage contract's `compact`). */
  async compact() {}

  /** What erasure does here: the values are dropped from memory. */
  get erasure() {
    return { rewrites: true, note: "values dropped from memory" };
  }
}
