// A typed use of the package, checked by `tsc --strict` (tests/js/types.test.mjs): every
// surface an application touches, and lines that must NOT type-check (`@ts-expect-error`:
// if one of them compiles, tsc fails the check).
import { Mnemo, MemoryStorage, type Context, type Recall, type DemoScenario } from "mnemo";
import { MnemoWorker } from "mnemo/worker";

export async function onThePage(): Promise<string> {
  const mem: Mnemo = await Mnemo.open(new MemoryStorage(), { vectorModel: "bow@1", dim: 3, now: () => 0 });
  const stored = await mem.remember("maria", { text: "Quote Q-7 sent to Marco", outcome: "success", createdAt: 1 }, { vector: [1, 0, 0] });
  const id: number | undefined = stored.id;
  const r: Recall = await mem.recall("maria", { text: "Q-7", k: 3 }, { vector: new Float32Array([1, 0, 0]) });
  const best: string | undefined = r.hits[0]?.episode.text;
  const c: Context = await mem.context("maria", { task: "Reply to Marco", total: 500, level: 2 }, { vector: [1, 0, 0] });
  const total: number = c.tokens.total;
  const withheld: string[] = c.withheld.map((w) => w.id);
  await mem.setFact("maria", { key: "tone", value: "formal", source: "explicit", origin: "user", policy: "auto-inject" });
  await mem.signal("maria", { ts: "2024-03-04T09:00:00+01:00", kind: "edited", agent: "email", before: "a; b", after: "a, b" });
  const night = await mem.nightly("maria", { now: 2 });
  const scenario: DemoScenario = Mnemo.demoScenario({ days: 7 });
  const done = await mem.replayScenario(scenario, { onNight: (day, n) => void [day.day, n.promoted.length] });
  // @ts-expect-error: a recall needs a text or a query object
  await mem.recall("maria", 42);
  // @ts-expect-error: "sometimes" is not an outcome
  await mem.remember("maria", { text: "x", outcome: "sometimes" });
  return `${id} ${best} ${total} ${withheld.length} ${night.done} ${done.nights}`;
}

export async function inAWorker(): Promise<number> {
  const w = await MnemoWorker.open({ storage: { indexedDb: "mnemo" }, model: { model: "/m.onnx", tokenizer: "/t.json" } });
  const c: Context = await w.context("maria", "Reply to Marco");
  const tier: number = await w.recency(3, 0); // a number on the page, a Promise through the worker
  const s: DemoScenario = await w.demoScenario({ days: 7 });
  // @ts-expect-error: storage is named in a worker, not passed as an object with methods
  await MnemoWorker.open({ storage: new MemoryStorage() });
  w.terminate();
  return c.tokens.total + tier + s.days.length;
}
