// Browser / extension / Web Worker entry: streams and compiles the .wasm next to the package
// (extensions need CSP `script-src 'self' 'wasm-unsafe-eval'`).
import init, * as glue from "../wasm/mnemo.js";
import { setWasm } from "./core.js";

await init({ module_or_path: new URL("../wasm/mnemo_bg.wasm", import.meta.url) });
setWasm(glue);

export { Mnemo } from "./core.js";
export { MnemoWorker } from "./worker/client.js";
export { fetchModel } from "./model.js";
/** Bytes of wasm linear memory in use (it only grows). */
export const memoryBytes = () => glue.memoryBytes();
export { MemoryStorage } from "./adapters/memory.js";
export { IndexedDbStorage } from "./adapters/indexeddb.js";
export { ChromeStorage } from "./adapters/chrome-storage.js";
export const Embedder = glue.Embedder;
