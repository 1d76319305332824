// Workers KV storage. KV has no multi-key transactions, so each batch is stored as one value
// (a batch record, ../batchlog.js) under its own key `b/<sequence>`, which KV writes
// atomically; opening lists and replays them in order.
//
// Consistency, and what it means for mnemo: KV is eventually consistent — another location may
// read a namespace up to about a minute stale — and it has no compare-and-set, so two Workers
// writing the same namespace at once can both take the same sequence number and one batch is
// lost. Use it only where one writer owns a namespace and staleness is acceptable (a cache of
// memories, read-mostly use); where writes matter, use Durable Objects (./durable-object.js).
// KV's limit of one write per key per second does not bite, since every batch has its own key.
// The log is never compacted here, so opening costs one read per batch ever written.
import { BatchLog } from "../batchlog.js";

const key = (seq) => `b/${String(seq).padStart(12, "0")}`;

export class WorkersKvStorage extends BatchLog {
  #kv;
  #next = 0;

  /** Opens the batch log in KV namespace binding `kv`, replaying it. */
  static async open(kv) {
    const s = new WorkersKvStorage();
    s.#kv = kv;
    const names = [];
    let cursor;
    do {
      const page = await kv.list({ prefix: "b/", cursor });
      names.push(...page.keys.map((k) => k.name));
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    names.sort();
    for (const name of names) {
      await s.replay(new Uint8Array(await kv.get(name, "arrayBuffer")), `KV ${name}`);
      s.#next = Number(name.slice(2)) + 1;
    }
    return s;
  }

  async append(record) {
    await this.#kv.put(key(this.#next), record);
    this.#next += 1;
  }
}
