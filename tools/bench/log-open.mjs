// What opening a log-shaped adapter reads after many small writes (not a test; prints one
// JSON line):   node tools/bench/log-open.mjs [WRITES] [KEYS]   (default 200000, 10000)
// NodeFileStorage takes WRITES one-key batches that overwrite KEYS keys in turn (100-byte
// values), as a long-lived namespace's counters and facts do; then a new process opens the
// log. Reports the time to open it and the log's size against the live data, counted two ways:
// keys and values, and the log compacted to live records only, framing included (what the
// compaction rule counts: the adapters compact themselves once the log passes twice the live
// data and is at least 1 MiB past it).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");
const [phase, path, w, k] = process.argv.slice(2);
if (phase === "write" || phase === "open") {
  const { NodeFileStorage } = await import(join(root, "pkg/src/adapters/node-files.js"));
  const enc = new TextEncoder();
  if (phase === "write") {
    const s = await NodeFileStorage.open(path);
    const value = new Uint8Array(100).fill(7);
    for (let i = 0; i < Number(w); i++) await s.write([[enc.encode(`k/${i % Number(k)}`), value]]);
    await s.close?.();
  } else {
    const started = performance.now();
    const s = await NodeFileStorage.open(path);
    const ms = performance.now() - started;
    const live = (await s.scan(enc.encode("k/"), null, 1e9)).reduce((n, [key, v]) => n + key.length + v.length, 0);
    const log = statSync(path).size;
    // The live data as the log holds it: the size of the log once compacted to live records.
    await s.compact();
    const compacted = statSync(path).size;
    await s.close?.();
    console.log(JSON.stringify({
      writes: Number(w), keys: Number(k), live_bytes: live, compacted_bytes: compacted, log_bytes: log,
      log_over_live: +(log / live).toFixed(2), log_over_compacted: +(log / compacted).toFixed(2), open_ms: Math.round(ms),
    }));
  }
} else {
  const writes = process.argv[2] ?? "200000";
  const keys = process.argv[3] ?? "10000";
  const dir = mkdtempSync(join(tmpdir(), "mnemo-log-"));
  try {
    const log = join(dir, "mnemo.log");
    execFileSync(process.execPath, [import.meta.filename, "write", log, writes, keys], { stdio: "inherit" });
    execFileSync(process.execPath, [import.meta.filename, "open", log, writes, keys], { stdio: "inherit" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
