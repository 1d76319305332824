// Shared by the JS sides of tools/bench-embed.
import { readFileSync, writeFileSync } from "node:fs";

export function args() {
  const a = process.argv.slice(2);
  const get = (k, d) => (a.includes(k) ? a[a.indexOf(k) + 1] : d);
  return {
    model: get("--model"),
    file: get("--file", "model.onnx"),
    texts: get("--texts"),
    iters: Number(get("--iters", "10")),
    root: get("--root"),
  };
}

export const corpus = (path) => JSON.parse(readFileSync(path, "utf8"));

export function median(v) {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Runs `fn(batch)` for each length and batch size; returns ms per passage (median). */
export async function measure(c, iters, fn) {
  const out = {};
  for (const tokens of ["32", "128"]) {
    for (const batch of [1, 16]) {
      await fn(c[tokens], batch); // warm-up (and plan optimisation)
      const runs = batch === 1 ? iters * 4 : iters;
      const samples = [];
      for (let i = 0; i < runs; i++) {
        const t = performance.now();
        await fn(c[tokens], batch);
        samples.push((performance.now() - t) / batch);
      }
      out[`t${tokens}_b${batch}`] = median(samples);
    }
  }
  return out;
}

export const mb = (bytes) => bytes / (1024 * 1024);
export const print = (o) => process.stdout.write(JSON.stringify(o) + "\n");
export { readFileSync, writeFileSync };
