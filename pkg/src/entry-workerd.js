// Workers entry: workerd cannot compile wasm at run time, so the module is imported
// statically (the bundler or Miniflare turns the .wasm import into a WebAssembly.Module). This
// is the engine-only build (no in-process embedder: host vectors, e.g. from an AI binding),
// which fits Workers' size limits.
import * as glue from "../wasm-engine/mnemo.js";
import module from "../wasm-engine/mnemo_bg.wasm";
import { setWasm } from "./core.js";

glue.initSync({ module });
setWasm(glue);

export { Mnemo } from "./core.js";
export { fetchModel } from "./model.js";
/** Bytes of wasm linear memory in use (it only grows). */
export const memoryBytes = () => glue.memoryBytes();
export { MemoryStorage } from "./adapters/memory.js";
export { DurableObjectStorage } from "./adapters/durable-object.js";
export { WorkersKvStorage } from "./adapters/workers-kv.js";
