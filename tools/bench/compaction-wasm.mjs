// The compaction benchmark workload (mnemo_bench::compaction) in mnemo's wasm build under Node.
//   node tools/bench/compaction-wasm.mjs ROOT N[,N…]
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [root, sizes = "10000,100000"] = process.argv.slice(2);
const glue = await import(join(root, "pkg/wasm-workloads/mnemo.js"));
glue.initSync({ module: readFileSync(join(root, "pkg/wasm-workloads/mnemo_bg.wasm")) });
for (const n of sizes.split(",").map(Number)) {
  // A fresh instance per size: linear memory only grows, so its growth is the run's peak.
  const g = await import(join(root, "pkg/wasm-workloads/mnemo.js") + `?n=${n}`);
  g.initSync({ module: readFileSync(join(root, "pkg/wasm-workloads/mnemo_bg.wasm")) });
  const report = JSON.parse(g.benchCompaction(n, () => performance.now()));
  console.log(JSON.stringify({ ...report, runtime: "wasm (Node)" }));
}
