// Wasm memory held by a reopened namespace, through the npm package in Node (not a test;
// prints one JSON line):
//   node tools/bench/memory.mjs [N] [BUILD]   (N episodes, default 20000; BUILD: wasm-engine,
//                                             the engine-only build hosts with their own
//                                             vectors use (default), or wasm, the package's
//                                             build with the embedder)
// A first process stores N episodes (short synthetic texts with 384-d synthetic host vectors)
// in a NodeFileStorage and snapshots them (maintain, forced); a second process opens the
// store, answers one recall, and reports its wasm linear memory (which only grows, so it is
// the peak) and that divided by N, and what the JS side holds then: the V8 heap in use and the
// bytes of ArrayBuffers outside it, after a full garbage collection when node runs with
// --expose-gc (the two-phase form passes it). Needs the package's wasm (tools/build-wasm).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");
const DIM = 384;
const [phase, dir, count, build] = process.argv.slice(2);

function vectors(seed) {
  let s = seed;
  return () => {
    const v = Float32Array.from({ length: DIM }, () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
}

if (phase === "fill" || phase === "open") {
  const glue = await import(join(root, `pkg/${build}/mnemo.js`));
  glue.initSync({ module: readFileSync(join(root, `pkg/${build}/mnemo_bg.wasm`)) });
  const core = await import(join(root, "pkg/src/core.js"));
  core.setWasm(glue);
  const { Mnemo } = core;
  const { NodeFileStorage } = await import(join(root, "pkg/src/adapters/node-files.js"));
  const memoryBytes = () => glue.memoryBytes();
  const n = Number(count);
  const mem = await Mnemo.open(await NodeFileStorage.open(join(dir, "mnemo.log")), { vectorModel: "synthetic@1", dim: DIM });
  if (phase === "fill") {
    const v = vectors(7);
    for (let i = 0; i < n; i++) {
      const text = `event ${i} about topic ${i % 50} and item ${i * 7} for customer ${i % 313}`;
      await mem.remember("bench", { text, createdAt: 1.7e12 + i * 6e7 }, { vector: v() });
    }
    await mem.maintain({ force: true, budget: Infinity });
  } else {
    const started = performance.now();
    const r = await mem.recall("bench", { text: "item about topic 7", k: 10 }, { vector: vectors(99)() });
    const ms = performance.now() - started;
    const bytes = memoryBytes();
    globalThis.gc?.();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    const mb = (b) => +(b / 1e6).toFixed(1);
    console.log(JSON.stringify({ n, build, hits: r.hits.length, open_and_first_recall_ms: Math.round(ms), wasm_memory_mb: mb(bytes), bytes_per_episode: Math.round(bytes / n), js_heap_mb: mb(heapUsed), array_buffers_mb: mb(arrayBuffers), gc: typeof globalThis.gc === "function" }));
  }
} else {
  const n = Number(process.argv[2] ?? 20000);
  const build = process.argv[3] ?? "wasm-engine";
  const store = mkdtempSync(join(tmpdir(), "mnemo-memory-"));
  try {
    execFileSync(process.execPath, [import.meta.filename, "fill", store, String(n), build], { stdio: "inherit" });
    execFileSync(process.execPath, ["--expose-gc", import.meta.filename, "open", store, String(n), build], { stdio: "inherit" });
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}
