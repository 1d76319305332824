// A few weeks of an agent's life, to look at (dates relative to today).
const DAY = 86_400_000;
export const SAMPLE = [
  [42, "Invoice INV-2025-0042 for 1,250 EUR sent to Marco Bertelli", "success", ["billing"], ""],
  [30, "The team runs Node 18 in CI and in production", "", ["stack"], ""],
  [21, "npm install failed in CI: stale lockfile in the cache", "failure", ["ci"], "delete package-lock.json and the npm cache, then reinstall"],
  [20, "Deploy of web-app succeeded after clearing the npm cache", "success", ["ci", "deploy"], ""],
  [12, "Migrated CI and production from Node 18 to Node 22", "success", ["stack"], ""],
  [9, "Customer asked for the March invoice to be resent in Italian", "", ["billing"], ""],
  [3, "Deploy of web-app failed: the health check timed out after 30 s", "failure", ["deploy"], "raise the health check timeout to 90 s for cold starts"],
  [1, "Decided to keep Postgres for billing; no move to DynamoDB", "", ["decision"], ""],
].map(([daysAgo, text, outcome, tags, verdict]) => ({
  text,
  outcome: outcome || undefined,
  tags,
  verdict,
  agent: "coder",
  createdAt: Date.now() - daysAgo * DAY,
}));

// One working week of a billing agent with one customer, six weeks ago (Monday to Thursday of
// the same Monday-based UTC week, the engine's compaction week): more than 30 days old and at
// least 5 rows, so the nightly job compacts it into one weekly summary. The failure with a
// verdict is a lesson: it is summarised but stays recallable.
export function sampleOldWeek(now = Date.now()) {
  const start = Math.floor(now / DAY) - 45; // days since the epoch
  const monday = (start - ((start + 3) % 7)) * DAY; // 1970-01-01 was a Thursday
  return [
    ["Sent invoice INV-2041 for 480 EUR to Acme GmbH", "success", ""],
    ["Acme GmbH asked for the delivery on Friday instead of Wednesday", "", ""],
    ["Payment reminder for INV-2041 bounced: it went to the sales inbox", "failure", "send payment reminders to accounts payable, not to sales"],
    ["Decided to bill Acme GmbH quarterly instead of monthly", "", "they asked for fewer, larger invoices"],
    ["Sent invoice INV-2042 for 1,120 EUR to Acme GmbH", "success", ""],
    ["Reconciled the Acme GmbH payments of the week", "success", ""],
    ["Next: send Acme GmbH the updated price list", "", ""],
    ["Sent invoice INV-2043 for 260 EUR to Acme GmbH", "success", ""],
    ["Exported the Acme GmbH ledger for the accountant", "success", ""],
  ].map(([text, outcome, verdict], i) => ({
    text,
    outcome: outcome || undefined,
    verdict,
    agent: "billing",
    entities: ["Acme GmbH"],
    tags: ["billing"],
    createdAt: monday + (8 + 10 * i) * 3_600_000, // Monday 08:00 to Thursday 16:00 UTC
  }));
}

// A mail agent's drafts and what the user sent, five days ago: semicolons removed every time,
// opening pleasantries removed for technical clients.
export function sampleSignals() {
  const base = Date.now() - 5 * DAY;
  const iso = (ms) => new Date(ms).toISOString();
  const out = [];
  for (let i = 0; i < 10; i++) {
    out.push({
      ts: iso(base + i * 3_600_000),
      kind: "edited",
      agent: "email",
      situation: { contact: "Marco Bertelli", segment: "client" },
      before: `Dear Marco,\nI hope you are doing well. Order ${100 + i} is confirmed; it ships on Monday.\nBest regards,\nMaria`,
      after: `Dear Marco,\nI hope you are doing well. Order ${100 + i} is confirmed, it ships on Monday.\nBest regards,\nMaria`,
    });
  }
  for (let i = 0; i < 10; i++) {
    out.push({
      ts: iso(base + (10 + i) * 3_600_000 + 1_800_000),
      kind: "edited",
      agent: "email",
      situation: { contact: "Luca Moretti", segment: "technical" },
      before: `Dear Luca,\nI hope you are doing well. The API spec v${i} is attached.\nBest regards,\nMaria`,
      after: `Dear Luca,\nThe API spec v${i} is attached.\nBest regards,\nMaria`,
    });
  }
  return out;
}
