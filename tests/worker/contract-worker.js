// Runs the JS storage contract on the Workers adapters inside workerd: `/do/check`,
// `/do/reopened` (Durable Object storage) and `/kv/check`, `/kv/reopened` (Workers KV).
import { checkStorage, checkReopened } from "../js/storage-contract.mjs";
import { DurableObjectStorage } from "../../pkg/src/adapters/durable-object.js";
import { WorkersKvStorage } from "../../pkg/src/adapters/workers-kv.js";

async function run(storage, phase) {
  try {
    if (phase === "check") await checkStorage(storage);
    else await checkReopened(storage);
    return new Response("ok");
  } catch (e) {
    return new Response(`${e.message}\n${e.stack}`, { status: 500 });
  }
}

export class Store {
  constructor(state) {
    this.state = state;
  }
  fetch(request) {
    const phase = new URL(request.url).pathname.split("/")[2];
    return run(new DurableObjectStorage(this.state.storage), phase);
  }
}

export default {
  async fetch(request, env) {
    const [, kind, phase] = new URL(request.url).pathname.split("/");
    if (kind === "kv") return run(await WorkersKvStorage.open(env.KV), phase);
    return env.STORE.get(env.STORE.idFromName("contract")).fetch(request);
  },
};
