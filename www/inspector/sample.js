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
