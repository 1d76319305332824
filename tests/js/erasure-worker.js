// Test-only Worker for workerd-erasure.test.mjs: the package on Durable Object storage (one
// object, "erasure", holding both namespaces) and on Workers KV (binding KV), with routes
//   /<do|kv>/fill?ns=     remember, facts, rules naming the subject (erasure-scan.mjs), snapshot
//   /<do|kv>/erase?ns=    erase the subject; the receipt
//   /<do|kv>/spell?ns=    ingest the subject's spellings (erasure-scan.mjs), erase it; the receipt
//   /<do|kv>/answers?ns=  what the namespace answers
//   /<do|kv>/dump         every stored key and value, read through the runtime's own API
//                         (state.storage.list() / KV list + get), as [[key, base64 value]]
// KV requests open a new Mnemo each time (the log replayed from KV); the Durable Object keeps
// its engine while it lives, like www/examples/worker.
import { Mnemo, DurableObjectStorage, WorkersKvStorage } from "../../pkg/src/entry-workerd.js";
import { OPTIONS, SUBJECT, answers, eraseSpellings, fill, toBase64 } from "./erasure-scan.mjs";

const json = (v, status = 200) => new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });

async function route(mem, dump, url) {
  const ns = url.searchParams.get("ns");
  switch (url.pathname.split("/")[2]) {
    case "fill":
      await fill(mem, ns);
      return json({ ok: true });
    case "erase":
      return json(await mem.erase(ns, { scope: "subject", subject: SUBJECT }));
    case "spell":
      return json(await eraseSpellings(mem, ns));
    case "answers":
      return json(await answers(mem, ns));
    case "dump":
      return json(await dump());
    default:
      return json({ error: "unknown route" }, 404);
  }
}

const bytes = (v) => (v instanceof Uint8Array ? v : v instanceof ArrayBuffer ? new Uint8Array(v) : new TextEncoder().encode(JSON.stringify(v)));

export class Store {
  #mem;
  constructor(state) {
    this.state = state;
  }
  async fetch(request) {
    try {
      this.#mem ??= await Mnemo.open(new DurableObjectStorage(this.state.storage), OPTIONS);
      const dump = async () => [...(await this.state.storage.list())].map(([k, v]) => [k, toBase64(bytes(v))]);
      return await route(this.#mem, dump, new URL(request.url));
    } catch (e) {
      return json({ error: `${e.message}\n${e.stack}`, code: e.code }, 500);
    }
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/do/")) return env.STORE.get(env.STORE.idFromName("erasure")).fetch(request);
    try {
      const mem = await Mnemo.open(await WorkersKvStorage.open(env.KV), OPTIONS);
      const dump = async () => {
        const out = [];
        let cursor;
        do {
          const page = await env.KV.list({ cursor });
          for (const { name } of page.keys) out.push([name, toBase64(new Uint8Array(await env.KV.get(name, "arrayBuffer")))]);
          cursor = page.list_complete ? undefined : page.cursor;
        } while (cursor);
        return out;
      };
      return await route(mem, dump, url);
    } catch (e) {
      return json({ error: `${e.message}\n${e.stack}`, code: e.code }, 500);
    }
  },
};
