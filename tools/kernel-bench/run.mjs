// Runs the kernel bench's wasm32-wasip1 build under Node's WASI (V8, the engine of Node and
// Chromium): node run.mjs FILE.wasm [KERNEL ...]
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
const [file, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: ['kernel-bench', ...args], env: {} });
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
wasi.start(instance);
