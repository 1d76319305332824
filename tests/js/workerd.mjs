// Miniflare running a Worker module from this repository on workerd, with the module rules the
// package needs (ES modules, the statically imported .wasm) and storage persisted in `persist`.
import { join, resolve } from "node:path";
import { Miniflare } from "miniflare";

export const root = resolve(import.meta.dirname, "../..");

export function worker(script, persist, extra) {
  return new Miniflare({
    scriptPath: join(root, script),
    modules: true,
    modulesRoot: root,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-01-01",
    durableObjectsPersist: join(persist, "do"),
    kvPersist: join(persist, "kv"),
    ...extra,
  });
}
