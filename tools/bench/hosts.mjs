// Sizes and cold starts of the JS hosts (not a test; prints JSON lines):
//   node tools/bench/hosts.mjs [N]     (N episodes stored before the cold start, default 2000)
// - sizes: both wasm builds, raw and gzip -9
// - Chromium (Debian's, playwright-core): a new page over an IndexedDB that already holds N
//   episodes: import + wasm compile, open + load the namespace, first recall; wasm memory
// - workerd (Miniflare): a new instance over Durable Object storage holding N episodes: first
//   request (recall) and its wall time, and the workerd processes' RSS; the engine-only build
// Vectors are the 384-d synthetic ones the store bench uses, supplied by the host.
import { readFileSync, mkdtempSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readdirSync } from "node:fs";

// Peak and current RSS (MB) of the workerd processes Miniflare started.
function workerdMemory() {
  let hwm = 0;
  let rss = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd")) continue;
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      hwm += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    } catch {}
  }
  return { workerd_peak_rss_mb: Math.round(hwm), workerd_rss_mb: Math.round(rss) };
}

const root = resolve(import.meta.dirname, "../..");
const { serve } = await import(join(root, "www/serve.mjs"));
const { launch } = await import(join(root, "tests/js/chromium.mjs"));
const { worker } = await import(join(root, "tests/js/workerd.mjs"));
const n = Number(process.argv[2] ?? 2000);
const DIM = 384;

for (const d of ["wasm", "wasm-engine"]) {
  const bytes = readFileSync(join(root, `pkg/${d}/mnemo_bg.wasm`));
  console.log(JSON.stringify({ build: d, bytes: bytes.length, gzip9: gzipSync(bytes, { level: 9 }).length }));
}

// Chromium
{
  const server = await serve(root);
  const profile = mkdtempSync(join(tmpdir(), "mnemo-bench-"));
  const fill = async () => {
    const ctx = await launch(profile);
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.goto(`${server.url}/tests/browser/harness.html`);
    await page.waitForFunction(() => window.t !== undefined);
    await page.evaluate(async ({ n, DIM }) => {
      const { mnemo } = window.t;
      const mem = await mnemo.Mnemo.open(await mnemo.IndexedDbStorage.open("bench"), { vectorModel: "synthetic@1", dim: DIM });
      let s = 7;
      const v = () => Float32Array.from({ length: DIM }, () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5);
      for (let i = 0; i < n; i++) await mem.remember("bench", { text: `event ${i} about topic ${i % 50} and item ${i * 7}`, createdAt: 1.7e12 + i * 6e7 }, { vector: v() });
      await mem.maintain({ force: true, budget: Infinity });
    }, { n, DIM });
    await ctx.close();
  };
  await fill();
  const ctx = await launch(profile);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${server.url}/tests/browser/bench.html`);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 120_000 });
  const r = await page.evaluate(() => window.result);
  console.log(JSON.stringify({ host: "chromium", n, ...r }));
  await ctx.close();
  server.close();
}

// workerd
{
  const persist = mkdtempSync(join(tmpdir(), "mnemo-bench-"));
  const make = () =>
    worker("www/examples/worker/src/index.js", persist, {
      durableObjects: { MEMORY: "Memory" },
      kvNamespaces: ["MEMORY_KV"],
      bindings: { DIM: String(DIM) },
    });
  let s = 7;
  const v = () => Array.from({ length: DIM }, () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5);
  let mf = make();
  for (let i = 0; i < n; i++) {
    await mf.dispatchFetch("http://x/remember?user=bench", {
      method: "POST",
      body: JSON.stringify({ text: `event ${i} about topic ${i % 50} and item ${i * 7}`, createdAt: 1.7e12 + i * 6e7, vector: v() }),
    });
  }
  await mf.dispatchFetch("http://x/maintain?user=bench");
  await mf.dispose();
  mf = make();
  await mf.ready;
  const t0 = performance.now();
  const res = await mf.dispatchFetch("http://x/recall?user=bench", {
    method: "POST",
    body: JSON.stringify({ text: "topic 7", k: 10, touch: false, vector: v() }),
  });
  const hits = (await res.json()).hits.length;
  const first = performance.now() - t0;
  const t1 = performance.now();
  await mf.dispatchFetch("http://x/recall?user=bench", { method: "POST", body: JSON.stringify({ text: "topic 9", k: 10, touch: false, vector: v() }) });
  const second = performance.now() - t1;
  console.log(JSON.stringify({ host: "workerd", n, first_recall_ms: first, hits, second_recall_ms: second, ...workerdMemory() }));
  await mf.dispose();
}
