// IndexedDB storage (browsers, extension pages, Web Workers). Keys are stored as binary
// (ArrayBuffer keys sort bytewise, the order prefix scans need); a batch is one readwrite
// transaction, so it is applied whole or not at all, and `write` resolves only when the
// transaction has completed (committed).
import { checkOps } from "./memory.js";

const STORE = "kv";

function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

// The smallest key greater than every key starting with `prefix` (null: none).
function prefixEnd(prefix) {
  const end = prefix.slice();
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.slice(0, i + 1);
    }
  }
  return null;
}

export class IndexedDbStorage {
  #db;
  #name;

  /** Opens (or creates) database `name`. */
  static async open(name = "mnemo") {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    const s = new IndexedDbStorage();
    s.#db = await request(req);
    s.#name = name;
    return s;
  }

  /** The Web Lock a Mnemo holds while it has this database open (one context at a time). */
  get lockName() {
    return `mnemo:indexeddb:${this.#name}`;
  }

  async get(key) {
    const tx = this.#db.transaction(STORE, "readonly");
    const v = await request(tx.objectStore(STORE).get(key.slice().buffer));
    return v === undefined ? null : new Uint8Array(v);
  }

  async scan(prefix, after, limit) {
    const lower = after && compare(after, prefix) >= 0 ? after : prefix;
    const open = lower === after;
    const end = prefixEnd(prefix);
    const range = end
      ? IDBKeyRange.bound(lower.slice().buffer, end.buffer, open, true)
      : IDBKeyRange.lowerBound(lower.slice().buffer, open);
    const tx = this.#db.transaction(STORE, "readonly");
    const store = tx.objectStore(STORE);
    const [keys, values] = await Promise.all([
      request(store.getAllKeys(range, limit)),
      request(store.getAll(range, limit)),
    ]);
    return keys.map((k, i) => [new Uint8Array(k), new Uint8Array(values[i])]);
  }

  async write(ops) {
    checkOps(ops);
    const tx = this.#db.transaction(STORE, "readwrite", { durability: "strict" });
    const store = tx.objectStore(STORE);
    for (const [k, v] of ops) {
      if (v === null) store.delete(k.slice().buffer);
      else store.put(v.slice().buffer, k.slice().buffer);
    }
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error("transaction aborted"));
    });
  }

  /**
   * Nothing to do: a delete removes the value from the database. (When its bytes leave the disk
   * is up to the browser's database engine, which compacts its files on its own.)
   */
  async compact() {}

  /** What erasure does here: keys deleted in one transaction. */
  get erasure() {
    return { rewrites: false, note: "keys deleted; the browser's database reclaims their space when it compacts" };
  }

  close() {
    this.#db.close();
  }
}

function compare(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
