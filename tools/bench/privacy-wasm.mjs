// Erasure and encrypted export in mnemo's engine-only wasm build under Node, through the npm
// package on MemoryStorage (the same workload as benches/privacy.rs, without the file store).
//   node tools/bench/privacy-wasm.mjs ROOT [EPISODES]
import { join } from "node:path";

const [root, episodes = "10000"] = process.argv.slice(2);
const n = Number(episodes);
const { Mnemo, MemoryStorage } = await import(join(root, "pkg/src/entry-node.js"));
const DIM = 384;

function vector(seed) {
  let s = BigInt.asUintN(64, BigInt(seed) * 0x9e3779b97f4a7c15n) | 1n;
  const v = new Float32Array(DIM);
  for (let i = 0; i < DIM; i++) {
    s ^= BigInt.asUintN(64, s << 13n);
    s ^= s >> 7n;
    s ^= BigInt.asUintN(64, s << 17n);
    v[i] = Number(s % 2000n) / 1000 - 1;
  }
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}
const person = (i) => `Person${String(i % 100).padStart(3, "0")} Surname${String((i * 7) % 100).padStart(3, "0")}`;

const t0 = 1_700_000_000_000;
const mem = await Mnemo.open(new MemoryStorage(), { vectorModel: "bench@1", dim: DIM, now: () => t0 });
for (let i = 0; i < n; i++) {
  const text = `${person(i)} asked about invoice ${i} and the deploy of service ${i % 37}`;
  await mem.remember("ana", { text, createdAt: t0 + i * 60_000 }, { vector: vector(i) });
}
let t = performance.now();
await mem.exportEncrypted("nobody", "passphrase", { logN: 14 });
const kdf = performance.now() - t;
console.log(JSON.stringify({ op: "scrypt", runtime: "wasm (Node)", log_n: 14, ms: kdf }));
t = performance.now();
const file = await mem.exportEncrypted("ana", "passphrase", { logN: 14 });
const exportMs = performance.now() - t - kdf;
const other = await Mnemo.open(new MemoryStorage(), { vectorModel: "bench@1", dim: DIM });
t = performance.now();
await other.importEncrypted("ana", "passphrase", file);
const importMs = performance.now() - t - kdf;
const mb = file.length / 1e6;
console.log(JSON.stringify({ op: "export", runtime: "wasm (Node)", episodes: n, mb, export_mb_s: mb / (exportMs / 1e3), import_mb_s: mb / (importMs / 1e3) }));
t = performance.now();
const r = await mem.erase("ana", { scope: "subject", subject: person(42) });
console.log(JSON.stringify({ op: "erase-subject", runtime: "wasm (Node)", episodes: n, erased_episodes: r.episodeIds.length, ms: performance.now() - t, verified: r.verification.occurrences === 0 }));
