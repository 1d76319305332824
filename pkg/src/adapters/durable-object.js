// Durable Object storage (Cloudflare Workers): the adapter to use on Workers. A Durable Object
// is single-threaded and strongly consistent, and a batch is one storage transaction, so it is
// applied whole or not at all and `write` resolves once it is durable.
//
// Keys are stored as lowercase hex (DO keys are strings; hex keeps byte order), values as
// Uint8Array. Values are limited to 128 KiB: mnemo's snapshot chunks default to 120 KiB.
import { checkOps } from "./memory.js";

const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const unhex = (s) => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));

export class DurableObjectStorage {
  #storage;

  /** Wraps `state.storage` of a Durable Object. */
  constructor(storage) {
    this.#storage = storage;
  }

  async get(key) {
    const v = await this.#storage.get(hex(key));
    return v === undefined ? null : new Uint8Array(v);
  }

  async scan(prefix, after, limit) {
    const p = hex(prefix);
    const options = { prefix: p, limit };
    if (after && hex(after) >= p) options.startAfter = hex(after);
    const page = await this.#storage.list(options);
    return [...page].map(([k, v]) => [unhex(k), new Uint8Array(v)]);
  }

  async write(ops) {
    checkOps(ops);
    await this.#storage.transaction(async (txn) => {
      for (const [k, v] of ops) {
        if (v === null) await txn.delete(hex(k));
        else await txn.put(hex(k), v.slice());
      }
    });
  }

  /** Nothing to do: a delete removes the value from the Durable Object's storage. */
  async compact() {}

  /** What erasure does here (see the package README): keys deleted in one transaction. */
  get erasure() {
    return { rewrites: false, note: "keys deleted; Durable Object storage (SQLite) frees their pages itself" };
  }
}
