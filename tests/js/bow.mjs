// A deterministic bag-of-words embedder for tests that must not depend on the model: words
// map to pseudo-random directions, so cosine tracks word overlap.
export const DIM = 16;

export function vec(text) {
  const v = new Float32Array(DIM);
  for (const w of text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)) {
    let h = 2166136261;
    for (const c of w) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    for (let i = 0; i < DIM; i++) {
      h = Math.imul(h ^ (h >>> 15), 2246822507) >>> 0;
      v[i] += (h % 1000) / 500 - 1;
    }
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

export const EVENTS = [
  ["Invoice INV-2025-0042 for 1,250 EUR sent to Marco", "success", 0],
  ["npm install failed: stale lockfile in the cache", "failure", 10],
  ["Deploy of web-app succeeded after clearing the cache", "success", 20],
];
