// Workers entry: workerd cannot compile wasm at run time, so the module is imported
// statically (the bundler or Miniflare turns the .wasm import into a WebAssembly.Module).
import * as glue from "../wasm/mnemo.js";
import module from "../wasm/mnemo_bg.wasm";
import { setWasm } from "./core.js";

glue.initSync({ module });
setWasm(glue);

export { Mnemo } from "./core.js";
export { MemoryStorage } from "./adapters/memory.js";
export const Embedder = glue.Embedder;
