// How recall and context answers cross from the wasm engine into JS, in mnemo's workloads build
// under Node: JSON text parsed by JSON.parse (what the package does) against serde-wasm-bindgen
// building the objects (the engine work is done once, outside the timing; medians of
// alternating rounds, ms per answer).
//   node tools/bench/crossing-wasm.mjs ROOT [EPISODES] [QUERIES] [ROUNDS]
// ROOT is a checkout with its wasm built (tools/build-wasm).
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [root, n = "2000", queries = "100", rounds = "15"] = process.argv.slice(2);
const dir = join(root, "pkg/wasm-workloads");
const glue = await import(join(dir, "mnemo.js"));
glue.initSync({ module: readFileSync(join(dir, "mnemo_bg.wasm")) });
const report = JSON.parse(glue.benchCrossing(Number(n), Number(queries), Number(rounds), () => performance.now()));
console.log(JSON.stringify({ ...report, runtime: `wasm (Node ${process.version})` }));
