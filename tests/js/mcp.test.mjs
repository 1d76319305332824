// `mnemo mcp` driven by the official TypeScript MCP SDK's client over stdio: the tools it lists
// (with and without --allow-destructive), a call of each (a short text for the model, the JSON
// as structured content checked against the tool's output schema), the resources, trust (no
// user authority through MCP), and the store shared with other `mnemo` commands while it runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { modelDir, root } from "./model.mjs";

/** The `mnemo` binary: $MNEMO_BIN, else the ci (what tools/test builds) or release build in the cargo target dir. */
function mnemoBin() {
  const target = process.env.CARGO_TARGET_DIR || join(root, "target");
  const found = [process.env.MNEMO_BIN, join(target, "ci/mnemo"), join(target, "release/mnemo")]
    .filter(Boolean)
    .find((p) => existsSync(p));
  if (!found) throw new Error("no mnemo binary: cargo build --release --bin mnemo, or set MNEMO_BIN");
  return found;
}

const AT = "2024-03-09T10:00:00Z";
const SAFE = ["context", "expand", "fact_get", "fact_history", "fact_set", "facts", "outcome", "recall", "remember", "signal", "task_end", "task_start", "task_step", "triple_set", "triples"];
const DESTRUCTIVE = ["correct", "episode_status", "export", "fact_rollback", "feedback", "forget", "rule_status"];
/** The texts every answer gave, for the checks on what a model reads. */
const texts = [];

async function connect(store, extra = []) {
  const transport = new StdioClientTransport({
    command: mnemoBin(),
    args: ["mcp", "--store", store, "--ns", "maria", "--model", modelDir(), "--at", AT, ...extra],
    stderr: "pipe",
  });
  const client = new Client({ name: "mnemo-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/**
 * Calls a tool; returns its structured content (the SDK has checked it against the tool's
 * output schema), or throws with the tool's error text. Keeps the text the model would read.
 */
async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  const text = r.content.map((c) => c.text).join("");
  if (r.isError) throw new Error(text);
  assert.ok(r.structuredContent && typeof r.structuredContent === "object", `${name}: ${JSON.stringify(r)}`);
  texts.push(text);
  return r.structuredContent;
}

/** The same store from the command line, while the server runs. */
function cli(store, ...args) {
  return execFileSync(mnemoBin(), [...args, "--store", store, "--ns", "maria", "--model", modelDir(), "--at", AT], {
    encoding: "utf8",
  });
}

test("mnemo mcp: every tool through the official SDK client, resources, trust, a shared store", async () => {
  const store = join(mkdtempSync(join(tmpdir(), "mnemo-mcp-")), "store");
  const client = await connect(store);
  try {
    assert.equal(client.getServerVersion().name, "mnemo");
    const tools = (await client.listTools()).tools;
    assert.deepEqual(tools.map((t) => t.name).sort(), SAFE, "forget and feedback are off without the flag");
    for (const t of tools) assert.ok(t.description.length > 20 && t.inputSchema.type === "object", t.name);
    for (const t of tools) assert.equal(t.outputSchema?.type, "object", `${t.name} has an output schema`);

    const stored = await call(client, "remember", {
      text: "Quote Q-2024-117 for Bertelli & Co sent: 48 valve assemblies at EUR 9,800",
      entities: ["Marco Bertelli", "Bertelli & Co"],
    });
    assert.equal(stored.stored, true, JSON.stringify(stored));
    await call(client, "remember", { text: "Deploy of the billing service failed: expired TLS certificate", outcome: "failure", verdict: "renew the certificate first" });
    const recalled = await call(client, "recall", { query: "Q-2024-117", k: 2 });
    assert.equal(recalled.hits[0].episode.id, stored.id, JSON.stringify(recalled.hits.map((h) => h.episode.text)));
    assert.equal(recalled.hits[0].episode.source, "agent", "an MCP write is the agent's");
    // What the model reads: one line per hit, with why it ranks; no record dumped.
    const lines = texts.at(-1).split("\n");
    assert.match(lines[0], /^1\. \[2024-03-09\] \[agent, untrusted\] Quote Q-2024-117 for Bertelli & Co sent: .* \(why: [a-z +]*bm25[a-z +]*, cosine [0-9.]+, recency [0-9.]+\)$/, texts.at(-1));
    assert.ok(!texts.at(-1).includes("accessCount") && !texts.at(-1).includes("{"), texts.at(-1));
    assert.match(texts.at(-1), /retrieval \d+/);
    // A task's outcome, reported by the agent.
    assert.equal((await call(client, "outcome", { retrieval_id: recalled.retrievalId, outcome: "success" })).ok, true);
    await assert.rejects(call(client, "outcome", { retrieval_id: 42, outcome: "success" }), /NOT_FOUND/);
    // Triples: the agent's are implicit.
    const triple = await call(client, "triple_set", { subject: "Marco Bertelli", predicate: "works_at", object: "Bertelli & Co" });
    assert.deepEqual([triple.object, triple.source], ["Bertelli & Co", "implicit"]);
    assert.equal((await call(client, "triples", { subject: "Marco Bertelli" })).triples.length, 1);
    assert.equal(texts.at(-1), "Marco Bertelli works_at Bertelli & Co (confidence 1, implicit)");

    // Facts: the agent's are implicit; the user's authority cannot be claimed through MCP.
    const fact = await call(client, "fact_set", { key: "tone", value: "formal" });
    assert.deepEqual([fact.result, fact.source, fact.origin], ["written", "implicit", "agent"]);
    await assert.rejects(call(client, "fact_set", { key: "tone", value: "casual", origin: "user" }), /INVALID_INPUT.*authority/);
    assert.equal((await call(client, "fact_get", { key: "tone" })).fact.value, "formal");
    assert.match(texts.at(-1), /^tone: formal \(implicit, confidence 1, version 1\)$/);
    assert.equal((await call(client, "fact_history", { key: "tone" })).versions.length, 1);
    cli(store, "fact", "set", "language", "Italian", "--source", "explicit", "--origin", "user");
    const overwrite = await call(client, "fact_set", { key: "language", value: "English" });
    assert.equal(overwrite.result, "refused", "an agent's fact never replaces the user's");
    const facts = (await call(client, "facts")).facts;
    assert.deepEqual(facts.map((f) => `${f.key}=${f.value}`).sort(), ["language=Italian", "tone=formal"]);

    // A task's working memory, started before another process writes to the store.
    const started = await call(client, "task_start", { task_id: "reply-17", content: "Answer Marco's question about the valve quote", cap: 400 });
    assert.equal(started.task, "Answer Marco's question about the valve quote", JSON.stringify(started));
    await call(client, "task_step", { task_id: "reply-17", kind: "tool-result", text: "Quote Q-2024-117 is valid until 30 April" });
    await assert.rejects(call(client, "task_step", { task_id: "reply-17", kind: "daydream", text: "x" }), /INVALID_INPUT/);

    // A rule added from the command line while the server runs: no lock is held between requests.
    cli(store, "rule", "add", "Never use semicolons in emails to Marco", "--origin", "user");
    const rules = await client.readResource({ uri: "mnemo://rules" });
    assert.equal(rules.contents[0].mimeType, "application/json");
    assert.deepEqual(JSON.parse(rules.contents[0].text).map((r) => r.text), ["Never use semicolons in emails to Marco"]);

    const ctx = await call(client, "context", { task: "Reply to Marco Bertelli about the valve quote" });
    assert.equal(ctx.sections[0].name, "system");
    assert.ok(ctx.text.includes("Never use semicolons"), ctx.text);
    assert.ok(ctx.text.includes("Q-2024-117"), ctx.text);
    assert.ok(ctx.tokens.total <= ctx.tokens.budget, JSON.stringify(ctx.tokens));
    assert.ok(texts.at(-1).startsWith(ctx.text), "the context's text is what the model reads");
    // The task survived the store being read again after the command line wrote to it.
    const withTask = await call(client, "context", { task: "Reply to Marco Bertelli about the valve quote", task_id: "reply-17" });
    assert.ok(withTask.text.includes("valid until 30 April"), withTask.text);
    const step = await call(client, "task_step", { task_id: "reply-17", kind: "approval", text: "Maria approved the draft" });
    assert.equal(step.n, 2, JSON.stringify(step));
    const ended = await call(client, "task_end", { task_id: "reply-17" });
    assert.equal(ended.steps.length, 2, JSON.stringify(ended));
    await assert.rejects(call(client, "task_step", { task_id: "reply-17", kind: "note", text: "late" }), /NOT_FOUND/);
    const tight = await call(client, "context", { task: "Reply to Marco Bertelli about the valve quote", budget: 40 });
    assert.ok(tight.tokens.total <= 40 && tight.withheld.length > 0, JSON.stringify(tight.tokens));
    const full = await client.callTool({ name: "expand", arguments: { id: tight.withheld[0].id } });
    assert.ok(!full.isError && full.content[0].text.length > 0, JSON.stringify(full));

    // Signals become an observation overnight (the nightly job from the command line).
    for (const day of ["04", "05", "06", "07", "08"]) {
      const s = await call(client, "signal", {
        signal: {
          ts: `2024-03-${day}T09:00:00+01:00`, kind: "edited", agent: "email", situation: { contact: "Marco" },
          before: "Dear Marco; the parts ship Monday; thanks.", after: "Dear Marco, the parts ship Monday. Thanks.",
        },
      });
      assert.ok(typeof s.id === "number", JSON.stringify(s));
    }
    await assert.rejects(call(client, "signal", { signal: { kind: "clicked" } }), /INVALID_INPUT/);
    cli(store, "nightly");
    const observations = JSON.parse((await client.readResource({ uri: "mnemo://observations" })).contents[0].text);
    assert.ok(observations.length > 0, "the signals became observations");
    const resources = (await client.listResources()).resources.map((r) => r.uri).sort();
    assert.deepEqual(resources, ["mnemo://observations", "mnemo://rules"]);
    await assert.rejects(client.readResource({ uri: "mnemo://secrets" }), /no resource/);
    // Not offered, so not callable either.
    const refused = await client.callTool({ name: "forget", arguments: { scope: "namespace" } }).catch((e) => ({ isError: true, content: [{ text: String(e) }] }));
    assert.equal(refused.isError, true);
    assert.equal((await call(client, "recall", { query: "valve quote", k: 1 })).hits.length, 1, "nothing was erased");
  } finally {
    await client.close();
  }

  // With --allow-destructive: feedback, forget, correct, statuses, rollback, export.
  const admin = await connect(store, ["--allow-destructive"]);
  try {
    const names = (await admin.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, [...SAFE, ...DESTRUCTIVE].sort());
    const rule = JSON.parse((await admin.readResource({ uri: "mnemo://rules" })).contents[0].text)[0];
    assert.equal((await call(admin, "rule_status", { id: rule.id, status: "demoted" })).ok, true);
    assert.deepEqual(JSON.parse((await admin.readResource({ uri: "mnemo://rules" })).contents[0].text), [], "a demoted rule is not active");
    await assert.rejects(call(admin, "rule_status", { id: rule.id, status: "superseded" }), /INVALID_INPUT/);
    const dump = await call(admin, "export");
    assert.ok(dump.episodes.length >= 2 && dump.triples.length === 1, JSON.stringify(Object.keys(dump)));
    const fixed = await call(admin, "correct", { id: 2, text: "Deploy of the billing service failed: an expired TLS certificate on the load balancer" });
    assert.equal(fixed.scope, "correction", JSON.stringify(fixed));
    const observations = JSON.parse((await admin.readResource({ uri: "mnemo://observations" })).contents[0].text);
    const wrong = await call(admin, "feedback", { observation: observations[0].id, verdict: "wrong" });
    assert.equal(wrong.observation.status, "rejected", JSON.stringify(wrong));
    const left = JSON.parse((await admin.readResource({ uri: "mnemo://observations" })).contents[0].text);
    assert.ok(!left.some((o) => o.id === observations[0].id), "a wrong observation is gone");
    await assert.rejects(call(admin, "feedback", { observation: 999, verdict: "right" }), /NOT_FOUND/);
    const receipt = await call(admin, "forget", { scope: "subject", subject: "Bertelli" });
    assert.equal(receipt.scope, "subject");
    assert.ok(receipt.episodeIds.includes(1), JSON.stringify(receipt));
    assert.deepEqual([receipt.verification.occurrences, receipt.verification.leftoverKeys], [0, 0]);
    const after = await call(admin, "recall", { query: "what did we quote Bertelli?", k: 5 });
    assert.ok(!after.hits.some((h) => h.episode.text.includes("Bertelli")), "the subject is erased");
    assert.ok(after.hits.some((h) => h.episode.text.includes("TLS")), "the rest stays");
  } finally {
    await admin.close();
  }
});

test("mnemo mcp: stdout carries newline-delimited JSON-RPC and nothing else", () => {
  const store = join(mkdtempSync(join(tmpdir(), "mnemo-mcp-")), "store");
  const requests = [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "recall", arguments: { query: "anything" } } },
    // Over 1 MiB: refused before any tool runs (a text of exactly 1 MiB would be taken).
    { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "remember", arguments: { text: "x".repeat(2 ** 20 + 1) } } },
  ];
  const input = requests.map((m) => JSON.stringify(m));
  input.splice(3, 0, '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {'); // not JSON
  const r = spawnSync(mnemoBin(), ["mcp", "--store", store, "--model", modelDir()], {
    input: input.join("\n") + "\n",
    encoding: "utf8",
    timeout: 60_000,
    maxBuffer: 64 * 2 ** 20,
  });
  assert.equal(r.status, 0, r.stderr);
  const replies = r.stdout.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l));
  for (const m of replies) assert.equal(m.jsonrpc, "2.0");
  const byId = (id) => replies.filter((m) => m.id === id);
  assert.deepEqual([1, 2, 3].map((id) => byId(id).length), [1, 1, 1], r.stdout);
  const [parse] = byId(null);
  assert.equal(parse?.error?.code, -32700, "an unparseable line gets a parse error: " + r.stdout.slice(0, 2000));
  const [big] = byId(4);
  assert.equal(big?.error?.code, -32602, JSON.stringify(big)?.slice(0, 300));
  assert.match(big.error.message, /"text" is 1048577 bytes/);
  assert.equal(replies.length, 5, "one reply each, nothing else");
  const stats = JSON.parse(execFileSync(mnemoBin(), ["stats", "--json", "--store", store], { encoding: "utf8" }));
  assert.equal(stats.episodes, 0, "nothing was stored");
});

test("mnemo mcp: an agent's fabricated signals make no rule without the user", async () => {
  // Twelve signals claiming to be the user's, over six days, then the nightly job after the
  // 48-hour wait: observations may form, but no rule is promoted from an agent's reports.
  const dir = mkdtempSync(join(tmpdir(), "mnemo-mcp-"));
  const store = join(dir, "store");
  const signals = Array.from({ length: 12 }, (_, i) => ({
    ts: `2024-03-0${1 + (i % 6)}T${10 + Math.floor(i / 6)}:00:00+01:00`, kind: "edited", agent: "email", source: "user",
    situation: { contact: "Marco" },
    before: `Dear Marco; order ${i} ships Monday; thanks.`, after: `Dear Marco, order ${i} ships Monday. Thanks.`,
  }));
  const client = await connect(store);
  try {
    for (const signal of signals) await call(client, "signal", { signal });
  } finally {
    await client.close();
  }
  const at = (ns, t, ...args) => execFileSync(mnemoBin(), [...args, "--store", store, "--ns", ns, "--model", modelDir(), "--at", t], { encoding: "utf8" });
  // The control: the same signals from the host (the CLI) become a rule.
  const file = join(dir, "signals.jsonl");
  writeFileSync(file, signals.map((s) => JSON.stringify(s)).join("\n"));
  at("control", AT, "signals", file);
  const active = (ns) => {
    at(ns, "2024-03-07T02:00:00Z", "nightly", "--json");
    at(ns, "2024-03-12T02:00:00Z", "nightly", "--json");
    at(ns, "2024-03-12T03:00:00Z", "promote");
    return JSON.parse(at(ns, "2024-03-12T04:00:00Z", "rules", "--json")).filter((r) => r.status === "active");
  };
  assert.ok(active("control").length >= 1, "the host's signals teach rules");
  assert.deepEqual(active("maria"), [], "an agent's do not");
  const observed = JSON.parse(at("maria", "2024-03-12T04:00:00Z", "observations", "--json"));
  assert.ok(observed.length > 0, "they may still make an observation the user can confirm");
  const access = join(dir, "access.json");
  at("maria", AT, "export", access, "--readable");
  const stored = JSON.parse(readFileSync(access, "utf8")).signals;
  assert.equal(stored.length, 12);
  assert.ok(stored.every((s) => s.source === "agent"), "stored as the agent's, whatever they claimed");
});
