// A Durable Object holding a namespace that would not fit a Worker isolate's 128 MB if the
// package copied every stored byte into wasm memory (as it did until the lazy tables): the
// test fills it, builds its index in budgeted `maintain` calls, then, in a new workerd
// instance, opens it, answers recalls, and reports the wasm memory it took.
//   POST /fill?from=A&to=B   stores episodes A..B-1 (synthetic 384-d vectors)
//   POST /maintain           budgeted maintain calls until done: {calls, maxWork, budget}
//   GET  /stored             bytes of every stored key and value: what a full copy would hold
//   GET  /open?probe=I,J,…   opens, recalls each probe's own vector: {top, memoryBytes, ms}
import { Mnemo, DurableObjectStorage, memoryBytes } from "../../pkg/src/entry-workerd.js";

const DIM = 384;
const NS = "big";

/** Episode `i`'s vector: a pseudo-random unit vector (xorshift32 seeded by `i`, the same in
 * every run). */
function vectorOf(i) {
  let s = (Math.imul(i + 1, 0x9e3779b9) ^ 0x5bd1e995) >>> 0 || 1;
  const v = new Float32Array(DIM);
  for (let d = 0; d < DIM; d++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    v[d] = s / 2 ** 32 - 0.5;
  }
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const json = (v, status = 200) =>
  new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });

export class Big {
  #mem;
  constructor(state) {
    this.state = state;
  }

  async #memory() {
    this.#mem ??= await Mnemo.open(new DurableObjectStorage(this.state.storage), {
      vectorModel: "synthetic@1",
      dim: DIM,
    });
    return this.#mem;
  }

  async fetch(request) {
    const url = new URL(request.url);
    try {
      switch (url.pathname) {
        case "/fill": {
          const mem = await this.#memory();
          const [from, to] = ["from", "to"].map((k) => Number(url.searchParams.get(k)));
          for (let i = from; i < to; i++) {
            const text = `event ${i} about topic ${i % 50} and item ${i * 7} for customer ${i % 313}`;
            await mem.remember(NS, { text, createdAt: 1.7e12 + i * 6e4 }, { vector: vectorOf(i) });
          }
          return json({ stored: to - from });
        }
        case "/maintain": {
          const mem = await this.#memory();
          await mem.open(NS);
          const budget = 2_000_000;
          let calls = 0;
          let maxWork = 0;
          for (;;) {
            const m = await mem.maintain({ force: true, budget });
            calls += 1;
            maxWork = Math.max(maxWork, m.work);
            if (m.done) return json({ calls, maxWork, budget, segments: m.segments });
          }
        }
        case "/stored": {
          // Keys are stored hex-encoded by the adapter: half their length is their size.
          let [bytes, keys, startAfter] = [0, 0, undefined];
          for (;;) {
            const page = await this.state.storage.list({ startAfter, limit: 1000 });
            if (page.size === 0) return json({ keys, bytes });
            for (const [k, v] of page) {
              keys += 1;
              bytes += k.length / 2 + v.byteLength;
              startAfter = k;
            }
          }
        }
        case "/open": {
          const started = Date.now();
          const mem = await this.#memory();
          const opened = await mem.open(NS);
          const top = [];
          for (const i of url.searchParams.get("probe").split(",").map(Number)) {
            const r = await mem.recall(NS, { text: `item ${i * 7}`, k: 3 }, { vector: vectorOf(i) });
            top.push(r.hits[0]?.episode.text ?? null);
            if (url.searchParams.has("debug")) top.push(r.hits.map((h) => [h.episode.id, h.episode.text, h.score, h.explanation.sources]));
          }
          return json({ top, opened, memoryBytes: memoryBytes(), ms: Date.now() - started });
        }
        default:
          return json({ error: "unknown route" }, 404);
      }
    } catch (e) {
      return json({ error: e.message, code: e.code, stack: e.stack }, 500);
    }
  }
}

export default {
  fetch(request, env) {
    return env.BIG.get(env.BIG.idFromName("big")).fetch(request);
  },
};
