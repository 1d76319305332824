// Node entry: reads the .wasm next to the package and instantiates it synchronously.
import { readFileSync } from "node:fs";
import * as glue from "../wasm/mnemo.js";
import { setWasm } from "./core.js";

glue.initSync({ module: readFileSync(new URL("../wasm/mnemo_bg.wasm", import.meta.url)) });
setWasm(glue);

export { Mnemo } from "./core.js";
export { fetchModel } from "./model.js";
/** Bytes of wasm linear memory in use (it only grows). */
export const memoryBytes = () => glue.memoryBytes();
export { MemoryStorage } from "./adapters/memory.js";
export { NodeFileStorage } from "./adapters/node-files.js";
export const Embedder = glue.Embedder;
