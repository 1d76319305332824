// The store benchmark workload (mnemo::bench::store) in mnemo's wasm build under Node.
//   node tools/bench/store-wasm.mjs ROOT N[,N…] [QUERIES]
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [root, sizes, queries = "300"] = process.argv.slice(2);
const glue = await import(join(root, "pkg/wasm/mnemo.js"));
glue.initSync({ module: readFileSync(join(root, "pkg/wasm/mnemo_bg.wasm")) });
for (const n of sizes.split(",").map(Number)) {
  const report = JSON.parse(glue.benchStore(n, Number(queries), () => performance.now()));
  console.log(JSON.stringify({ ...report, runtime: "wasm (Node)" }));
}
