// The package's TypeScript declarations (pkg/src/index.d.ts) checked by `tsc --strict` against
// a typed usage file (types/usage.ts), whose `@ts-expect-error` lines must stay errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const here = import.meta.dirname;

test("index.d.ts passes tsc --strict against a typed usage file", () => {
  const tsc = join(here, "node_modules/typescript/bin/tsc");
  const r = spawnSync(process.execPath, [tsc, "-p", join(here, "types/tsconfig.json")], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
