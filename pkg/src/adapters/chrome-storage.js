// chrome.storage.local (MV3 extensions: pages, service worker). chrome.storage has no
// multi-key delete-and-set transaction, but one `set` call is applied whole, so each batch is
// stored as one item (a batch record, ../batchlog.js, base64) under its own key
// `<prefix><sequence>` (default prefix `mnemo/b/`); opening replays them in order. Extension pages and the service worker
// share the area: let one context own a namespace (a second writer could take the same
// sequence number). The log is never compacted here (weak: opening reads every batch ever
// written); `unlimitedStorage` in the manifest lifts the 10 MB quota.
import { BatchLog } from "../batchlog.js";


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

export class ChromeStorage extends BatchLog {
  #area;
  #prefix;
  #next = 0;

  /**
   * Opens the log in `area` (default chrome.storage.local) under item names starting with
   * `prefix` (several logs may share an area), replaying it.
   */
  static async open(area = globalThis.chrome.storage.local, prefix = "mnemo/b/") {
    const s = new ChromeStorage();
    s.#area = area;
    s.#prefix = prefix;
    const all = await area.get(null);
    const names = Object.keys(all).filter((k) => k.startsWith(prefix)).sort();
    for (const name of names) {
      await s.replay(fromBase64(all[name]), `chrome.storage ${name}`);
      s.#next = Number(name.slice(prefix.length)) + 1;
    }
    return s;
  }

  async append(record) {
    await this.#area.set({ [this.#prefix + String(this.#next).padStart(12, "0")]: toBase64(record) });
    this.#next += 1;
  }
}
