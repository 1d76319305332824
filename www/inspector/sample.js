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
