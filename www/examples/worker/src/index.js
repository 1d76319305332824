// mnemo in a Cloudflare Worker: one Durable Object per user holds that user's memory (strongly
// consistent, one writer), on Durable Object storage. Vectors come from the host: Workers AI
// (`env.AI`, bge-small-en-v1.5, 384-d) when bound, or the request's own `vector`.
//
// Background work runs in the Durable Object's alarm, in slices with a bounded work budget (a
// Worker has a CPU limit per request, and Date.now() does not advance during CPU work, so
// budgets count work units, not time); the alarm re-arms itself until the work is done:
// - the index's background step (`maintain`: vector graphs built a slice at a time, a
//   snapshot when due), armed by every write;
// - the learning loop (`nightly`), which POST /nightly schedules.
//
// In your project: import { Mnemo, DurableObjectStorage } from "mnemo" (the package's
// `workerd` condition picks the engine-only build, imported statically as workerd requires).
import { Mnemo, DurableObjectStorage, WorkersKvStorage } from "../../../../pkg/src/entry-workerd.js";

const MODEL = "@cf/baai/bge-small-en-v1.5";

async function vectorOf(env, body) {
  if (body.vector) return body.vector;
  if (!env.AI) throw new Error("send a `vector`, or bind Workers AI as AI");
  const out = await env.AI.run(MODEL, { text: [body.text ?? body.query] });
  return out.data[0];
}

const json = (v, status = 200) =>
  new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });

async function handle(mem, env, request) {
  const url = new URL(request.url);
  const ns = url.searchParams.get("user") ?? "default";
  const body = request.method === "POST" ? await request.json() : {};
  try {
    switch (url.pathname) {
      case "/remember":
        return json(await mem.remember(ns, body, { vector: await vectorOf(env, body) }));
      case "/recall":
        return json(await mem.recall(ns, body, { vector: await vectorOf(env, body) }));
      case "/facts":
        if (request.method === "POST") return json(await mem.setFact(ns, body));
        return json(await mem.facts(ns));
      case "/timeline":
        return json(await mem.timeline(ns));
      case "/maintain":
        return json(await mem.maintain({ budget: body.budget }));
      case "/signals":
        return json(await mem.signals(ns, Array.isArray(body) ? body : [body]));
      case "/observations":
        return json(await mem.observations(ns, ["open"]));
      case "/feedback":
        return json(await mem.feedback(ns, body.id, body.verdict));
      case "/rules":
        return json(await mem.rules(ns, ["active"]));
      case "/outcome":
        return json(await mem.outcome(ns, body.retrievalId, body.outcome));
      // Privacy: erase (`{scope: "namespace"}`, `{scope: "subject", subject}` or
      // `{scope: "episode", id}`; the receipt comes back), correct one memory, export.
      case "/erase":
        return json(await mem.erase(ns, body.scope ? body : { scope: "namespace" }));
      case "/correct":
        return json(await mem.correct(ns, body.id, { ...body, vector: await vectorOf(env, body) }));
      case "/export":
        return json(await mem.exportReadable(ns));
      default:
        return json({ error: "unknown route" }, 404);
    }
  } catch (e) {
    return json({ error: e.message, code: e.code ?? "ERROR" }, e.code === "INVALID_INPUT" ? 400 : 500);
  }
}

/** One per user: the user's memory. */
export class Memory {
  #mem;
  constructor(state, env) {
    this.state = state;
    this.env = env;
  }

  // Opened on first use (no randomness or wasm work at global scope).
  async #memory() {
    this.#mem ??= await Mnemo.open(new DurableObjectStorage(this.state.storage), {
      vectorModel: MODEL,
      dim: Number(this.env.DIM ?? 384),
    });
    return this.#mem;
  }

  async fetch(request) {
    const url = new URL(request.url);
    const user = url.searchParams.get("user") ?? "default";
    const storage = this.state.storage;
    if (url.pathname === "/nightly") {
      if (request.method === "POST") {
        // Keys outside mnemo's `u/` prefix are the example's own.
        await storage.put("nightly/user", user);
        await storage.put("nightly/budget", Number(url.searchParams.get("budget") ?? 5000));
        await storage.setAlarm(Date.now());
        return json({ scheduled: true });
      }
      return json((await storage.get("nightly/last")) ?? null);
    }
    if (url.pathname === "/maintain" && request.method === "GET") {
      return json((await storage.get("maintain/last")) ?? null);
    }
    const mem = await this.#memory();
    const response = await handle(mem, this.env, request);
    // A write may make the background step due: arm the alarm unless one is set.
    if (request.method === "POST" && (await storage.getAlarm()) === null) {
      await storage.setAlarm(Date.now() + 1000);
    }
    return response;
  }

  /** One slice of each background job per alarm, re-armed until both are done. */
  async alarm() {
    const storage = this.state.storage;
    const mem = await this.#memory();
    // The budget is in work units (distances computed, snapshot bytes / 24): the default,
    // 2,000,000, is 0.2–0.3 s of graph building, leaving room for a snapshot.
    const step = await mem.maintain({ budget: Number(this.env.MAINTAIN_BUDGET ?? 2_000_000) });
    const calls = ((await storage.get("maintain/last"))?.calls ?? 0) + 1;
    await storage.put("maintain/last", { ...step, calls });
    let again = !step.done;
    const user = await storage.get("nightly/user");
    if (user) {
      const report = await mem.nightly(user, { budget: await storage.get("nightly/budget") });
      const alarms = ((await storage.get("nightly/last"))?.alarms ?? 0) + 1;
      await storage.put("nightly/last", { ...report, alarms });
      if (report.done) await storage.delete("nightly/user");
      else again = true;
    }
    if (again) await storage.setAlarm(Date.now() + 10);
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/kv/")) {
      // The same API on Workers KV (eventually consistent, single writer only: see the adapter).
      const mem = await Mnemo.open(await WorkersKvStorage.open(env.MEMORY_KV), {
        vectorModel: MODEL,
        dim: Number(env.DIM ?? 384),
      });
      const inner = new Request(new URL(url.pathname.slice(3) + url.search, url), request);
      return handle(mem, env, inner);
    }
    const user = url.searchParams.get("user") ?? "default";
    const stub = env.MEMORY.get(env.MEMORY.idFromName(user));
    return stub.fetch(request);
  },
};
