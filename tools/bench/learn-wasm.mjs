// The nightly benchmark workload (mnemo_bench::nightly) in mnemo's wasm build under Node.
//   node tools/bench/learn-wasm.mjs ROOT [DAYS] [PER_DAY]
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [root, days = "30", perDay = "300"] = process.argv.slice(2);
const glue = await import(join(root, "pkg/wasm-workloads/mnemo.js"));
glue.initSync({ module: readFileSync(join(root, "pkg/wasm-workloads/mnemo_bg.wasm")) });
const report = JSON.parse(glue.benchNightly(Number(days), Number(perDay), () => performance.now()));
console.log(JSON.stringify({ ...report, runtime: "wasm (Node)" }));
