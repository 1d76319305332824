// The inspector page: forms and views over the engine running in ./worker.js.
import { SAMPLE, sampleOldWeek, sampleSignals } from "./sample.js";

const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
const pending = new Map();
let next = 0;
const $ = (id) => document.getElementById(id);
const status = $("status");

let listening;
const ready = new Promise((r) => (listening = r));
worker.onerror = (e) => (status.textContent = `worker failed: ${e.message ?? "see the console"}`);

worker.onmessage = ({ data }) => {
  if (data.listening) return listening();
  if (data.scenario) {
    $("scenario-note").textContent = `day ${data.scenario.day} of ${data.scenario.days}…`;
    return;
  }
  if (data.progress) {
    const { label, got, total } = data.progress;
    status.textContent = total ? `loading ${label}: ${Math.round((100 * got) / total)}%` : `${label}…`;
    return;
  }
  const p = pending.get(data.id);
  pending.delete(data.id);
  if (data.error) p.reject(Object.assign(new Error(data.error), { code: data.code }));
  else p.resolve(data.result);
};

async function call(method, ...args) {
  await ready;
  return new Promise((resolve, reject) => {
    pending.set(++next, { resolve, reject });
    worker.postMessage({ id: next, method, args });
  });
}

const ns = () => $("ns").value.trim() || "demo";
function el(tag, props = {}, ...kids) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids.filter((k) => k !== null && k !== undefined));
  return e;
}
const fmt = (x, d = 2) => Number(x).toFixed(d);
const day = (ms) => new Date(ms).toISOString().slice(0, 10);

function showError(where, e) {
  where.textContent = `${e.code ?? "error"}: ${e.message}`;
}

// "#12", linking to episode 12's row in the timeline.
const ref = (id) => el("a", { className: "ref", href: `#ep-${id}`, textContent: `#${id}` });
const refs = (ids) => ids.flatMap((id, i) => (i ? [" ", ref(id)] : [ref(id)]));
const TIERS = ["raw", "weekly", "monthly"];

// Kept for audit, recalled only with "include cold": summarised by compaction, or evicted
// because a rule stands for it.
const isCold = (e) => e.status === "superseded" && Boolean(e.group || e.representedBy);

// A summary episode's structure (JSON in compactSummary), or null.
function summaryOf(e) {
  if (e.kind !== "summary" || !e.compactSummary) return null;
  try {
    return JSON.parse(e.compactSummary);
  } catch {
    return null;
  }
}

function summaryHeading(s) {
  const who = [s.agent && `agent ${s.agent}`, s.contact && `contact ${s.contact}`].filter(Boolean);
  return `${s.tier >= 2 ? "Monthly overview" : "Weekly summary"} ${s.period}${who.length ? `, ${who.join(", ")}` : ""} (${s.episodes} episodes)`;
}

// A summary's sections, the empty ones left out.
function sectionsView(s, e) {
  const rows = [
    ["period", s.period],
    ["goal", s.goal],
    ["decisions", s.decisions],
    ["lessons", s.lessons],
    ["open issues", s.openIssues],
    ["next steps", s.nextSteps],
    ["notes", s.notes],
    ["routine", (s.routine ?? []).map(([what, n]) => `${what} × ${n}`)],
    ["mentions", (s.mentions ?? []).join(", ")],
    ["omitted", s.omitted ? `${s.omitted} lines (token cap or redundant)` : ""],
    ["written by", s.writtenBy],
    ["text", s.writtenBy === "llm" ? e.text : ""],
  ];
  return el(
    "dl",
    { className: "sections" },
    ...rows
      .filter(([, v]) => (Array.isArray(v) ? v.length : v))
      .flatMap(([k, v]) => [
        el("dt", { textContent: k }),
        Array.isArray(v) ? el("dd", {}, el("ul", {}, ...v.map((x) => el("li", { textContent: x })))) : el("dd", { textContent: v }),
      ]),
  );
}

// Summaries whose sections are open, kept open when the timeline is drawn again.
const opened = new Set();

function eventCell(e) {
  if (e.kind !== "summary") return el("td", { textContent: e.text });
  const s = summaryOf(e);
  const evidence = e.evidence ?? [];
  return el(
    "td",
    { className: "summary-cell" },
    el("div", { className: "heading", textContent: s ? summaryHeading(s) : e.text }),
    el("div", { className: "evidence-index" }, `summarises ${evidence.length}${e.tier >= 2 ? " weekly summaries" : ""}: `, ...refs(evidence)),
    s
      ? el(
          "details",
          { open: opened.has(e.id), ontoggle: (ev) => opened[ev.target.open ? "add" : "delete"](e.id) },
          el("summary", { textContent: "sections" }),
          sectionsView(s, e),
        )
      : null,
  );
}

function statusCell(e) {
  let note = null;
  if (isCold(e) && e.group) note = el("span", { className: "stands-for" }, "in summary ", ref(e.group));
  else if (isCold(e)) note = el("span", { className: "stands-for", textContent: `rule #${e.representedBy} stands for it` });
  else if (e.group) note = el("span", { className: "kept-hot" }, "summarised in ", ref(e.group), ", kept hot (a lesson)");
  return el(
    "td",
    {},
    e.status,
    " ",
    isCold(e) ? el("span", { className: "chip cold", textContent: "cold" }) : null,
    note ? el("div", { className: "meta" }, note) : null,
    e.expiresAt ? el("div", { className: "meta", textContent: `expires ${day(e.expiresAt)}` }) : null,
  );
}

function bytes(n) {
  if (n < 1024) return `${n} B`;
  return n < 1024 * 1024 ? `${fmt(n / 1024, 1)} kB` : `${fmt(n / 1024 / 1024, 1)} MB`;
}

function statsView(s) {
  const item = (key, n, label, shown = n) => {
    const b = el("b", { textContent: shown });
    b.dataset.stat = key;
    b.dataset.value = n;
    return el("span", { className: "stat" }, b, ` ${label}`);
  };
  const st = s.statuses;
  $("stats").title = `statuses: raw ${st.raw} · active ${st.active} · superseded ${st.superseded} · rejected ${st.rejected}`;
  return [
    item("episodes", s.episodes, "episodes"),
    item("retrievable", s.retrievable, "retrievable"),
    item("cold", s.cold, "cold"),
    " · tiers: ",
    item("raw", s.tiers.raw, "raw"),
    item("weekly", s.tiers.weekly, "weekly"),
    item("monthly", s.tiers.monthly, "monthly"),
    " · ",
    item("bytes", s.bytes, "stored", bytes(s.bytes)),
  ];
}

async function refreshTimeline() {
  const [episodes, stats] = await Promise.all([call("timeline", ns()), call("stats", ns())]);
  const now = Date.now();
  const ages = episodes.map((e) => [(now - e.lastAccessedAt) / 86_400_000, e.tier]);
  const decay = await call("recency", ages);
  $("stats").replaceChildren(...statsView(stats));
  $("timeline").replaceChildren(
    ...episodes.reverse().map((e, i) => {
      const d = decay[episodes.length - 1 - i];
      const classes = [`status-${e.status}`, e.kind === "summary" ? "summary" : "", isCold(e) ? "cold" : ""];
      return el(
        "tr",
        { id: `ep-${e.id}`, className: classes.filter(Boolean).join(" ") },
        el("td", { className: "num", textContent: e.id }),
        el("td", { textContent: day(e.createdAt) }),
        eventCell(e),
        el("td", { className: `outcome-${e.outcome}`, textContent: e.outcome === "unknown" ? "" : e.outcome }),
        el("td", { className: "tier", textContent: TIERS[e.tier] }),
        statusCell(e),
        el("td", { className: "num", textContent: e.accessCount }),
        el("td", { className: "num" }, el("span", { className: "decay" }, el("i", { style: `width:${d * 100}%` })), fmt(d)),
      );
    }),
  );
}

// One finished nightly run: what it compacted, merged, clustered, promoted and evicted.
function runView(n) {
  const line = (label, ids, what) =>
    ids?.length ? el("div", {}, el("b", { textContent: label }), ` ${ids.length} ${what}: ${ids.map((id) => `#${id}`).join(" ")}`) : null;
  const compacted = (n.compacted ?? []).map((c) => {
    const li = el(
      "li",
      { className: "compacted" },
      `${c.tier >= 2 ? "monthly overview" : "weekly summary"} `,
      ref(c.summary),
      ` of ${c.sources.length} ${c.tier >= 2 ? "weekly summaries" : "episodes"}`,
      c.keptHot.length ? ` (${c.keptHot.length} lesson${c.keptHot.length === 1 ? "" : "s"} kept hot)` : "",
      ` · ${c.writtenBy}`,
      c.llmRefused ? el("span", { className: "meta", textContent: ` · the model's text refused: ${c.llmRefused}` }) : null,
    );
    Object.assign(li.dataset, { summary: c.summary, tier: c.tier, sources: c.sources.length });
    return li;
  });
  const parts = [
    compacted.length ? el("div", {}, el("b", { textContent: "compacted" }), el("ul", {}, ...compacted)) : null,
    line("merged", n.merged, "observations"),
    line("clustered", n.clustered, "lesson observations"),
    line("new", n.inserted, "observations"),
    line("promoted", n.promoted, "rules"),
    line("evicted", n.evicted, "episodes (a rule stands for them)"),
    line("harmful", n.harmfulEpisodes, "episodes down-weighted"),
    line("demoted", n.demotedRules, "rules"),
    line("merged", n.mergedRules, "rules (superseded by a wider one)"),
    n.erasures?.length ? el("div", {}, el("b", { textContent: "erasures" }), ` ${n.erasures.length} carried out`) : null,
  ].filter(Boolean);
  return el(
    "li",
    { className: "run" },
    el("div", { className: "meta", textContent: `${new Date(n.now).toISOString().slice(0, 16).replace("T", " ")} UTC · ${n.signalsRead} signal reads` }),
    ...(parts.length ? parts : [el("div", { className: "meta", textContent: "nothing to do" })]),
  );
}

async function refreshNightlyLog() {
  const runs = await call("nightlyLog", ns());
  $("nightly-log").replaceChildren(...runs.reverse().map(runView));
  $("nightly-log-note").textContent = runs.length ? "" : "no finished run yet";
}

async function refreshFacts() {
  const facts = await call("facts", ns());
  $("facts").replaceChildren(
    ...facts.map((f) => {
      const history = el("div", { className: "history" });
      const li = el(
        "li",
        {},
        el("span", { className: "fact-key", textContent: f.key }),
        ` = ${f.value} `,
        el("span", { className: "meta", textContent: `v${f.version} · ${f.source} · confidence ${fmt(f.confidence)} · ${f.policy}` }),
        el("a", {
          className: "link",
          textContent: "history",
          onclick: async () => {
            const versions = await call("factHistory", ns(), f.key);
            history.replaceChildren(
              ...versions.map((v) =>
                el("div", {}, `v${v.version}: ${v.value} (${v.source}, ${day(v.updatedAt)}) `,
                  v.version === f.version ? "· current" : el("a", {
                    className: "link",
                    textContent: "roll back to this",
                    onclick: async () => {
                      await call("rollbackFact", ns(), f.key, v.version);
                      await refreshFacts();
                    },
                  })),
              ),
            );
          },
        }),
        history,
      );
      return li;
    }),
  );
}

async function refreshRules() {
  const rules = await call("rules", ns());
  $("rules").replaceChildren(
    ...rules.map((r) =>
      el(
        "li",
        {},
        r.text,
        " ",
        el("span", { className: "meta", textContent: `${r.status}${r.supersededBy ? ` by rule #${r.supersededBy} (it says the same and more)` : ""} · ${day(r.createdAt)}` }),
        r.evidence ? el("div", { className: "evidence", textContent: `${r.evidence} (observation #${r.observation})` }) : null,
      ),
    ),
  );
}

async function refreshObservations() {
  const observations = await call("observations", ns());
  $("observations").replaceChildren(
    ...observations.map((o) => {
      const verdict = (v) => async () => {
        try {
          await call("feedback", ns(), o.id, v);
          $("observations-note").textContent =
            v === "right" ? `#${o.id}: confirmed (confidence up a band; promoted at the next run if strong enough)` : `#${o.id}: rejected for good`;
          await Promise.all([refreshObservations(), refreshRules(), refreshTimeline()]);
        } catch (e) {
          showError($("observations-note"), e);
        }
      };
      const open = o.status === "open";
      return el(
        "li",
        { className: `observation status-${o.status}` },
        el("span", { className: "quote", textContent: o.quote }),
        " ",
        el("span", { className: "meta", textContent: `${o.confidence} · ${o.status}${o.rule ? ` · rule #${o.rule}` : ""}` }),
        el("div", { className: "evidence", textContent: `${o.evidence} · ${o.occurrences} of ${o.opportunities} · ${o.pattern}` }),
        open && !o.confirmedAt ? el("button", { className: "right", textContent: "You are right", onclick: verdict("right") }) : null,
        open ? el("button", { className: "wrong quiet", textContent: "You are wrong", onclick: verdict("wrong") }) : null,
      );
    }),
  );
}

const refresh = () => Promise.all([refreshTimeline(), refreshFacts(), refreshRules(), refreshObservations(), refreshNightlyLog()]);

$("sample-signals").onclick = async () => {
  try {
    const { ids } = await call("signals", ns(), sampleSignals());
    $("observations-note").textContent = `stored ${ids.length} signals: run the nightly job to count them`;
  } catch (e) {
    showError($("observations-note"), e);
  }
};

$("nightly").onclick = async () => {
  try {
    const n = await call("nightly", ns());
    const summaries = n.compacted?.length ?? 0;
    $("observations-note").textContent =
      `nightly run: ${n.signalsRead} signal reads, ${n.inserted.length} new observations, ${n.promoted.length} rules promoted, ` +
      `${summaries} ${summaries === 1 ? "summary" : "summaries"} written, ${n.evicted?.length ?? 0} episodes evicted`;
    await Promise.all([refreshObservations(), refreshRules(), refreshTimeline(), refreshNightlyLog()]);
  } catch (e) {
    showError($("observations-note"), e);
  }
};

function hitView(h, best) {
  const x = h.explanation;
  const e = h.episode;
  return el(
    "li",
    { className: "hit" },
    el(
      "div",
      { className: "top" },
      el("span", { className: "score", textContent: fmt(x.finalScore, 3) }),
      el("span", { className: "text", textContent: e.text }),
      el("span", { className: "meta", textContent: `#${e.id} · ${day(e.createdAt)}` }),
    ),
    el("div", { className: "bar" }, el("i", { style: `width:${(100 * x.finalScore) / best}%` })),
    el(
      "div",
      { className: "factors" },
      ...[
        ["relevance", x.relevance],
        ["× recency", x.recency],
        ["× importance", x.importance],
        ["cosine", x.cosine],
        ["bm25", x.bm25],
        ["context", x.context],
        ["age", `${fmt(x.ageDays, 0)} d`],
      ].map(([k, v]) => el("span", {}, `${k} `, el("b", { textContent: typeof v === "number" ? fmt(v) : v }))),
      el("span", {}, ...x.sources.map((s) => el("span", { className: "chip", textContent: s }))),
      x.shadowedBy ? el("span", { className: "chip shadow", textContent: `shadowed by #${x.shadowedBy}` }) : null,
      isCold(e) && e.group ? el("span", {}, "in summary ", ref(e.group)) : null,
      isCold(e) && !e.group ? el("span", { textContent: `rule #${e.representedBy} stands for it` }) : null,
    ),
    x.terms.length
      ? el("div", { className: "terms", textContent: "matched: " + x.terms.map(([t, s]) => `${t} (${fmt(s)})`).join(", ") })
      : null,
  );
}

$("add").onsubmit = async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const episode = {
    text: f.get("text"),
    outcome: f.get("outcome") || undefined,
    agent: f.get("agent"),
    verdict: f.get("verdict"),
    tags: String(f.get("tags")).split(",").map((t) => t.trim()).filter(Boolean),
  };
  if (f.get("date")) episode.createdAt = Date.parse(f.get("date"));
  try {
    const r = await call("remember", ns(), episode);
    status.textContent = r.stored ? `remembered #${r.id} (importance ${fmt(r.importance)}: ${r.reason})` : `not kept: ${r.reason}`;
    ev.target.reset();
    await refresh();
  } catch (e) {
    showError(status, e);
  }
};

$("sample").onclick = async () => {
  for (const e of SAMPLE) await call("remember", ns(), e);
  await call("setFact", ns(), { key: "language", value: "Italian", source: "explicit" });
  await call("setFact", ns(), { key: "billing.currency", value: "EUR", source: "admin" });
  await call("addRule", ns(), "Always delete the lockfile and the npm cache before reinstalling");
  status.textContent = `loaded ${SAMPLE.length} sample events`;
  await refresh();
};

$("sample-old-week").onclick = async () => {
  try {
    const week = sampleOldWeek();
    for (const e of week) await call("remember", ns(), e);
    status.textContent = `loaded ${week.length} events from the week of ${day(week[0].createdAt)}: run the nightly job to compact them`;
    await refresh();
  } catch (e) {
    showError(status, e);
  }
};

$("recall").onsubmit = async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const text = f.get("text");
  try {
    const r = await call("recall", ns(), { text, k: 5, includeCold: f.get("cold") === "on" });
    const note = [];
    if (r.window) note.push(`time window ${day(r.window.from)} – ${day(r.window.to - 1)}`);
    if (r.windowDropped) note.push("nothing in the query's time window, so it was dropped");
    $("recall-note").textContent = note.join(" · ") || `${r.hits.length} hits`;
    const best = Math.max(...r.hits.map((h) => h.explanation.finalScore), 1e-9);
    $("hits").replaceChildren(...r.hits.map((h) => hitView(h, best)));
    await refreshTimeline();
  } catch (e) {
    showError($("recall-note"), e);
  }
};

$("fact").onsubmit = async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  try {
    const r = await call("setFact", ns(), { key: f.get("key"), value: f.get("value"), source: f.get("source") });
    $("fact-note").textContent = r.result === "refused" ? `refused: held by a ${r.heldBy} source` : `${r.result} (v${r.version})`;
    await refreshFacts();
  } catch (e) {
    showError($("fact-note"), e);
  }
};

$("rule").onsubmit = async (ev) => {
  ev.preventDefault();
  await call("addRule", ns(), new FormData(ev.target).get("text"));
  ev.target.reset();
  await refreshRules();
};

function download(name, bytes, type) {
  const a = el("a", { href: URL.createObjectURL(new Blob([bytes], { type })), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

const stamp = () => new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");

$("export").onsubmit = async (ev) => {
  ev.preventDefault();
  try {
    const bytes = await call("exportEncrypted", ns(), new FormData(ev.target).get("passphrase"));
    download(`${ns()}-${stamp()}.mnemo`, bytes, "application/octet-stream");
    $("privacy-note").textContent = `exported ${bytes.length} encrypted bytes`;
  } catch (e) {
    showError($("privacy-note"), e);
  }
};

$("export-readable").onclick = async () => {
  try {
    const doc = await call("exportReadable", ns());
    download(`${ns()}-${stamp()}.json`, JSON.stringify(doc, null, 2), "application/json");
    $("privacy-note").textContent = `exported ${doc.episodes.length} episodes as readable JSON`;
  } catch (e) {
    showError($("privacy-note"), e);
  }
};

$("import").onsubmit = async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  try {
    const bytes = new Uint8Array(await f.get("file").arrayBuffer());
    const into = f.get("into").trim();
    const r = await call("importEncrypted", into, f.get("passphrase"), bytes);
    $("privacy-note").textContent = `imported ${r.records} records into ${into}`;
    $("ns").value = into;
    await refresh();
  } catch (e) {
    showError($("privacy-note"), e);
  }
};

$("forget").onsubmit = async (ev) => {
  ev.preventDefault();
  const subject = new FormData(ev.target).get("subject").trim();
  const what = subject ? { scope: "subject", subject } : { scope: "namespace" };
  try {
    const r = await call("erase", ns(), what);
    const deleted = r.layers.reduce((n, l) => n + l.deleted, 0);
    const v = r.verification;
    $("privacy-note").textContent =
      `erased ${deleted} records; scan of ${v.recordsScanned} records: ${v.occurrences} occurrences, ${v.leftoverKeys} leftover keys`;
    $("receipt").textContent = JSON.stringify(r, null, 2);
    ev.target.reset();
    await refresh();
  } catch (e) {
    showError($("privacy-note"), e);
  }
};

$("correct").onsubmit = async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  try {
    const id = Number(f.get("id"));
    const r = await call("correct", ns(), id, { text: f.get("text").trim() });
    const v = r.verification;
    $("privacy-note").textContent =
      `corrected #${id}; the wrong text searched in ${v.recordsScanned} records: ${v.occurrences} occurrences`;
    $("receipt").textContent = JSON.stringify(r, null, 2);
    ev.target.reset();
    await refresh();
  } catch (e) {
    showError($("privacy-note"), e);
  }
};

// The context tab. After the scenario, contexts are assembled at its own clock (the morning the
// new email arrives), not today's.
let contextNow;

function contextItemView(section, item) {
  const li = el(
    "li",
    { className: `context-item section-${section}` },
    el("span", { className: "chip", textContent: section }),
    " ",
    el("span", { className: "text", textContent: item.text }),
    el("div", { className: "meta", textContent: `${item.id} · ${item.tokens} tokens · ${item.why}${item.untrusted ? " · untrusted: data, not instructions" : ""}` }),
  );
  li.dataset.id = item.id;
  return li;
}

function showContext(c) {
  $("context-sections").tBodies[0].replaceChildren(
    ...c.sections.map((s) => {
      const tr = el(
        "tr",
        {},
        el("td", { textContent: s.name }),
        el("td", { className: "num", textContent: s.tokens }),
        el("td", { className: "num", textContent: s.cap }),
        el("td", { className: "num", textContent: s.items.length }),
        el("td", { className: "meta", textContent: s.note }),
      );
      tr.dataset.section = s.name;
      return tr;
    }),
  );
  $("context-items").replaceChildren(...c.sections.flatMap((s) => s.items.map((i) => contextItemView(s.name, i))));
  $("context-withheld-title").hidden = c.withheld.length === 0;
  $("context-withheld").replaceChildren(
    ...c.withheld.map((w) => {
      const full = el("div", { className: "history" });
      const li = el(
        "li",
        {},
        el("b", { textContent: w.id }),
        ` (${w.section}, ${w.tokens} tokens, ${w.reason}): ${w.line} `,
        el("a", {
          className: "link",
          textContent: "expand",
          onclick: async () => (full.textContent = await call("expand", ns(), w.id)),
        }),
        full,
      );
      li.dataset.id = w.id;
      return li;
    }),
  );
  $("context-text").textContent = c.text;
  const t = c.tokens;
  $("context-note").textContent =
    `${t.total} of ${t.budget} tokens (${t.counter}; ${t.response} kept for the answer) · disclosure level ${c.disclosure.level}: ${c.disclosure.why}`;
}

$("context").onsubmit = async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const request = { task: f.get("task") };
  if (f.get("budget")) request.total = Number(f.get("budget"));
  if (f.get("level")) request.level = Number(f.get("level"));
  try {
    showContext(await call("context", ns(), request, contextNow));
    await refreshTimeline();
  } catch (e) {
    showError($("context-note"), e);
  }
};

$("scenario").onclick = async () => {
  try {
    $("scenario").disabled = true;
    const r = await call("replayScenario");
    $("ns").value = r.namespace;
    contextNow = r.incomingAt;
    $("scenario-note").textContent =
      `replayed ${r.nights} days into ${r.namespace}: ${r.stored} episodes, ${r.signals} signals, ${r.facts} facts; a new email from Marco is below`;
    $("context").elements.task.value = r.incoming;
    $("context").elements.level.value = "2";
    await refresh();
    $("context").requestSubmit();
  } catch (e) {
    showError($("scenario-note"), e);
  } finally {
    $("scenario").disabled = false;
  }
};

$("ns").onchange = refresh;

try {
  const { model } = await call("open");
  status.textContent = `ready · ${model.split("@")[0]} · IndexedDB`;
  await refresh();
  document.body.dataset.ready = "1";
} catch (e) {
  showError(status, e);
}
