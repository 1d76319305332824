// The context benchmark workload (mnemo_bench::context) in mnemo's wasm build under Node.
//   node tools/bench/context-wasm.mjs ROOT N[,N…] QUERIES
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [root, sizes = "10000,100000", queries = "200"] = process.argv.slice(2);
for (const n of sizes.split(",").map(Number)) {
  // A fresh instance per size, so one size's memory does not weigh on the next.
  const g = await import(join(root, "pkg/wasm-workloads/mnemo.js") + `?n=${n}`);
  g.initSync({ module: readFileSync(join(root, "pkg/wasm-workloads/mnemo_bg.wasm")) });
  const report = JSON.parse(g.benchContext(n, Number(queries), () => performance.now()));
  console.log(JSON.stringify({ ...report, runtime: "wasm (Node)" }));
}
