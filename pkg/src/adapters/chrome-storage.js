// chrome.storage.local (MV3 extensions: pages, service worker). chrome.storage has no
// multi-key delete-and-set transaction, but one `set` of one item is applied whole, so each
// batch is stored as one item (a batch record, ../batchlog.js, base64) under its own name
// `<prefix><sequence>` (sequence: 12 decimal digits; default prefix `mnemo/b/`); opening replays
// them in order. Extension pages and the service worker share the area, and a second writer
// could take the same sequence number: a Mnemo holds the Web Lock `lockName` while it has the
// log open, so a second context is refused (LOCKED) or waits (`waitForLock`).
//
// Compaction (`compact()`, and automatically once the log holds more than twice the live data
// and at least 1 MiB more than it): the live data is written as new items after the last one, in records of at most
// 1 MiB, then a checkpoint marker item, then every older item is removed, so no deleted value
// stays in the area. A crash at any step leaves a usable log (the scheme is ItemLog's, in
// ../batchlog.js). Compacting needs room for the live data twice for a moment:
// `unlimitedStorage` in the manifest lifts the 10 MB quota.
import { ItemLog } from "../batchlog.js";

function toBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return btoa(s);
}

function fromBase64(text) {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export class ChromeStorage extends ItemLog {
  /** What erasure does here: the log's items are rewritten and the old ones removed; Chromium's
   * own database (LevelDB) keeps the freed bytes on disk until it compacts itself. */
  get erasure() {
    return { rewrites: true, note: "items rewritten and old items removed; Chromium's database frees the bytes when it compacts" };
  }

  #area;
  #prefix;
  #items = null; // every item of the area, while opening

  /**
   * Opens the log in `area` (default chrome.storage.local) under item names starting with
   * `prefix` (several logs may share an area), replaying it.
   */
  static async open(area = globalThis.chrome.storage.local, prefix = "mnemo/b/") {
    const s = new ChromeStorage();
    s.#area = area;
    s.#prefix = prefix;
    s.#items = await area.get(null);
    const seqs = Object.keys(s.#items)
      .filter((k) => k.startsWith(prefix) && /^\d{12}$/.test(k.slice(prefix.length)))
      .map((k) => Number(k.slice(prefix.length)));
    try {
      await s.load(seqs);
    } finally {
      s.#items = null;
    }
    return s;
  }

  /** The Web Lock a Mnemo holds while it has this log open (one context at a time). */
  get lockName() {
    return `mnemo:chrome.storage:${this.#prefix}`;
  }

  itemName(seq) {
    return this.#prefix + String(seq).padStart(12, "0");
  }

  async getItem(name) {
    const v = this.#items?.[name];
    return typeof v === "string" ? fromBase64(v) : null;
  }

  putItem(name, bytes) {
    return this.#area.set({ [name]: toBase64(bytes) });
  }

  removeItems(names) {
    return this.#area.remove(names);
  }
}
