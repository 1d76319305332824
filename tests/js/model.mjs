// Finds the default model the same way the Rust tests do (tests/common/mod.rs).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export function modelDir() {
  const candidates = [
    process.env.MNEMO_MODEL_DIR,
    join(root, "models/multilingual-e5-small-latin"),
    join(root, "../shared/models/multilingual-e5-small-latin"),
  ].filter(Boolean);
  const dir = candidates.find((d) => existsSync(join(d, "model.onnx")) && existsSync(join(d, "tokenizer.json")));
  if (!dir) throw new Error("no model found: run tools/build-model or set MNEMO_MODEL_DIR");
  return dir;
}

export function referenceCases() {
  return JSON.parse(readFileSync(join(root, "tests/fixtures/e5-small-latin-reference.json"), "utf8")).cases;
}

export async function loadWasm() {
  const glue = await import(join(root, "pkg/wasm/mnemo.js"));
  glue.initSync({ module: readFileSync(join(root, "pkg/wasm/mnemo_bg.wasm")) });
  return glue;
}
