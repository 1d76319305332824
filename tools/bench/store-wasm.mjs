// The store benchmark workload (mnemo_bench::store) in mnemo's wasm build under Node.
//   node tools/bench/store-wasm.mjs ROOT N[,N…] [QUERIES]
// ROOT is a checkout with its wasm built (tools/build-wasm): its pkg/wasm-workloads build
// (engine only), or pkg/wasm in a checkout older than that build.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [root, sizes, queries = "300"] = process.argv.slice(2);
const dir = join(root, existsSync(join(root, "pkg/wasm-workloads")) ? "pkg/wasm-workloads" : "pkg/wasm");
const glue = await import(join(dir, "mnemo.js"));
glue.initSync({ module: readFileSync(join(dir, "mnemo_bg.wasm")) });
for (const n of sizes.split(",").map(Number)) {
  const report = JSON.parse(glue.benchStore(n, Number(queries), () => performance.now()));
  console.log(JSON.stringify({ ...report, runtime: "wasm (Node)" }));
}
