// The package as its users get it: `npm pack` of pkg/, installed from that tarball into fresh
// consumer projects, each calling remember, recall and context with host vectors —
//   - a Node ESM script;
//   - a page bundled by Vite (the wasm as a hashed asset), run in Debian's Chromium;
//   - a Worker bundled the way wrangler bundles (esbuild, the `workerd` export condition, the
//     .wasm import kept as a module), run in workerd by Miniflare.
// The bundlers come from this folder's node_modules; only the tarball is installed into the
// consumers (no registry involved).
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build as vite } from "vite";
import { build as esbuild } from "esbuild";
import { Miniflare } from "miniflare";
import { serve } from "../../www/serve.mjs";
import { launch } from "./chromium.mjs";

const root = resolve(import.meta.dirname, "../..");
const work = mkdtempSync(join(tmpdir(), "mnemo-consumers-"));
let tarball;

// What every consumer runs: three memories with 3-d host vectors, a recall, a context.
const USE = `
const v = (t) => { const h = [0, 0, 0]; for (const w of t.toLowerCase().split(/\\W+/)) if (w) h[w.length % 3] += 1; return h; };
async function use(memory) {
  for (const text of ["Quote Q-7 for Bertelli & Co sent", "Deploy failed: stale lockfile", "Marco prefers the Como warehouse"]) {
    await memory.remember("maria", { text, createdAt: 1717200000000 }, { vector: v(text) });
  }
  const r = await memory.recall("maria", { text: "Q-7", k: 1 }, { vector: v("Q-7"), now: 1717300000000 });
  const c = await memory.context("maria", { task: "Reply to Marco about Q-7", total: 200 }, { vector: v("Reply to Marco about Q-7"), now: 1717300000000 });
  return { top: r.hits[0].episode.text, tokens: c.tokens.total, sections: c.sections.length };
}
`;

function check(result, where) {
  assert.equal(result.top, "Quote Q-7 for Bertelli & Co sent", `${where}: ${JSON.stringify(result)}`);
  assert.equal(result.sections, 7, where);
  assert.ok(result.tokens > 0 && result.tokens <= 200, `${where}: ${JSON.stringify(result)}`);
}

function consumer(name) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `consumer-${name}`, private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--offline", tarball], { cwd: dir, stdio: "pipe" });
  return dir;
}

before(() => {
  const out = execFileSync("npm", ["pack", join(root, "pkg"), "--pack-destination", work, "--json"], { encoding: "utf8" });
  const [info] = JSON.parse(out);
  tarball = join(work, info.filename);
  const files = info.files.map((f) => f.path);
  for (const want of ["src/index.d.ts", "src/worker/client.js", "wasm/mnemo_bg.wasm", "wasm-engine/mnemo_bg.wasm"]) {
    assert.ok(files.includes(want), `the tarball lacks ${want}`);
  }
});

test("npm pack → a Node ESM project", () => {
  const dir = consumer("node");
  writeFileSync(
    join(dir, "app.mjs"),
    `import { Mnemo, MemoryStorage } from "mnemo";\n${USE}\nconst m = await Mnemo.open(new MemoryStorage(), { vectorModel: "toy@1", dim: 3 });\nconsole.log(JSON.stringify(await use(m)));\n`,
  );
  check(JSON.parse(execFileSync(process.execPath, ["app.mjs"], { cwd: dir, encoding: "utf8" })), "node");
});

test("npm pack → a page bundled by Vite, in Chromium", async () => {
  const dir = consumer("vite");
  writeFileSync(join(dir, "index.html"), `<!doctype html><meta charset="utf-8"><title>loading</title><script type="module" src="./main.js"></script>`);
  writeFileSync(
    join(dir, "main.js"),
    `import { Mnemo, MemoryStorage } from "mnemo";\n${USE}\nconst m = await Mnemo.open(new MemoryStorage(), { vectorModel: "toy@1", dim: 3 });\nuse(m).then((r) => (document.title = JSON.stringify(r)), (e) => (document.title = "error: " + e.message));\n`,
  );
  await vite({ root: dir, logLevel: "error", build: { target: "esnext", outDir: join(dir, "dist") } });
  const assets = readdirSync(join(dir, "dist/assets"));
  assert.ok(assets.some((f) => f.endsWith(".wasm")), `Vite emitted the wasm as an asset: ${assets}`);
  const server = await serve(join(dir, "dist"));
  const context = await launch(mkdtempSync(join(tmpdir(), "mnemo-vite-")));
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => document.title !== "loading", null, { timeout: 60_000 }).catch((e) => {
      throw new Error(`${e.message}: ${errors.join("; ")}`);
    });
    const title = await page.title();
    assert.ok(!title.startsWith("error"), title);
    check(JSON.parse(title), "vite + chromium");
  } finally {
    await context.close();
    server.close();
  }
});

test("npm pack → a Worker bundled as wrangler does (esbuild, workerd condition), in workerd", async () => {
  const dir = consumer("worker");
  writeFileSync(
    join(dir, "worker.js"),
    `import { Mnemo, MemoryStorage } from "mnemo";\n${USE}\nexport default { async fetch() { const m = await Mnemo.open(new MemoryStorage(), { vectorModel: "toy@1", dim: 3 }); return Response.json(await use(m)); } };\n`,
  );
  const out = join(dir, "dist");
  await esbuild({
    entryPoints: [join(dir, "worker.js")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    loader: { ".wasm": "copy" },
    outdir: out,
    logLevel: "error",
  });
  assert.ok(readdirSync(out).some((f) => f.endsWith(".wasm")), "the wasm stays a module next to the bundle");
  const mf = new Miniflare({
    scriptPath: join(out, "worker.js"),
    modules: true,
    modulesRoot: out,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-01-01",
  });
  try {
    const res = await mf.dispatchFetch("http://localhost/");
    check(await res.json(), "esbuild + workerd");
  } finally {
    await mf.dispose();
  }
});
