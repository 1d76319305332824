// Workers KV storage. KV has no multi-key transactions, so each batch is stored as one value
// (a batch record, ../batchlog.js) under its own key `b/<sequence>` (12 decimal digits), which
// KV writes atomically; opening lists and replays them in order.
//
// Consistency, and what it means for mnemo: KV is eventually consistent — another location may
// read a namespace up to about a minute stale — and it has no compare-and-set, so two Workers
// writing the same namespace at once can both take the same sequence number and one batch is
// lost. Use it only where one writer owns a namespace and staleness is acceptable (a cache of
// memories, read-mostly use); where writes matter, use Durable Objects (./durable-object.js).
// KV's limit of one write per key per second does not bite, since every item is written once.
//
// Compaction (`compact()`, and automatically once the log holds more than twice the live data
// and at least 1 MiB more than it): the live data is written as new values after the last one, in records of at most
// 4 MiB (KV takes up to 25 MiB), then a checkpoint marker value, then every older value is
// deleted, so no deleted memory stays in the namespace and opening costs about one read per
// 4 MiB of live data plus the batches since. A crash at any step leaves a usable log (the scheme
// is ItemLog's, in ../batchlog.js); a stale reader elsewhere may still miss recent values.
import { ItemLog } from "../batchlog.js";

export class WorkersKvStorage extends ItemLog {
  /** What erasure does here: the log's values are rewritten and the old keys deleted through
   * the KV API; how soon Cloudflare's storage drops them is the platform's. */
  get erasure() {
    return { rewrites: true, note: "values rewritten and old keys deleted through the KV API" };
  }

  #kv;
  recordCap = 4 << 20;

  /** Opens the batch log in KV namespace binding `kv`, replaying it. */
  static async open(kv) {
    const s = new WorkersKvStorage();
    s.#kv = kv;
    const seqs = [];
    let cursor;
    do {
      const page = await kv.list({ prefix: "b/", cursor });
      for (const { name } of page.keys) if (/^b\/\d{12}$/.test(name)) seqs.push(Number(name.slice(2)));
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    await s.load(seqs);
    return s;
  }

  itemName(seq) {
    return `b/${String(seq).padStart(12, "0")}`;
  }

  async getItem(name) {
    const v = await this.#kv.get(name, "arrayBuffer");
    return v === null ? null : new Uint8Array(v);
  }

  putItem(name, bytes) {
    return this.#kv.put(name, bytes);
  }

  async removeItems(names) {
    for (const name of names) await this.#kv.delete(name);
  }
}
