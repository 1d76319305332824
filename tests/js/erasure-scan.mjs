// Shared by the erasure tests in real runtimes (extension-erasure.test.mjs in Chromium,
// workerd-erasure.test.mjs with tests/js/erasure-worker.js in workerd): the memories that name
// a subject, the answers compared before and after an erasure, and a reader of stored bytes
// that owes nothing to the package (its own decoder of the batch record format of
// pkg/src/batchlog.js), so what a storage API hands back can be searched namespace by namespace.
// Plain JS: it runs in Node, in an extension page and in a Worker.
import { DIM, vec } from "./bow.mjs";

export const SUBJECT = "Zephyrine Okonkwo";
export const NEEDLES = ["zephyrine", "okonkwo"]; // searched case-insensitively, each on its own
const DAY = 86_400_000;
const T0 = Date.parse("2025-03-01T00:00:00Z");
/** Host vectors from bow.mjs; snapshots after a few changes, so the snapshot layer holds the subject too. */
export const OPTIONS = { vectorModel: "test-bow@1", dim: DIM, now: () => T0 + 30 * DAY, snapshotAfter: 4, embed: async (texts) => texts.map(vec) };

/** Episodes (three naming the subject, three not), facts and a rule in `ns`, then a snapshot. */
export async function fill(mem, ns) {
  const texts = [
    `${SUBJECT} asked ${ns} for the quarterly invoice`,
    `the deploy of the billing service failed for ${ns}`,
    `${SUBJECT} prefers calls after lunch, says ${ns}`,
    `the team of ${ns} approved the offsite budget`,
    `call ${SUBJECT.toUpperCase()} about the contract renewal`,
    `${ns} moved the backup window to Sunday night`,
  ];
  for (const [i, text] of texts.entries()) {
    const r = await mem.remember(ns, { text, createdAt: T0 + i * DAY, source: "agent" }, { vector: vec(text) });
    if (!r.stored) throw new Error(`not stored: ${text}: ${r.reason}`);
  }
  await mem.setFact(ns, { key: "contact.name", value: SUBJECT, source: "explicit", origin: "user" });
  await mem.setFact(ns, { key: "language", value: "Italian", origin: "user" });
  await mem.addRule(ns, `Always copy ${SUBJECT} on invoices`, { origin: "user" });
  await mem.addRule(ns, "Never send invoices on Sundays", { origin: "user" });
  const m = await mem.maintain();
  if (m.snapshots < 1) throw new Error(`no snapshot written: ${JSON.stringify(m)}`);
}

/** What `ns` answers (recall with touch:false, timeline, facts, rules) as one string. */
export async function answers(mem, ns) {
  const out = [];
  for (const q of ["invoice", "deploy", "budget", "lunch", "contract", SUBJECT]) {
    const r = await mem.recall(ns, { text: q, k: 6, touch: false }, { vector: vec(q) });
    out.push(r.hits.map((h) => `${h.episode.id} ${h.episode.text} ${h.explanation.finalScore.toFixed(6)}`));
  }
  out.push(await mem.timeline(ns), await mem.facts(ns, { all: true }), await mem.rules(ns));
  return JSON.stringify(out);
}

// ---- stored bytes ----

/** Occurrences of every needle in `bytes` read as latin1 text, any case. */
export function occurrences(bytes) {
  const s = latin1(bytes).toLowerCase();
  return NEEDLES.reduce((n, needle) => n + s.split(needle).length - 1, 0);
}

function latin1(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return s;
}

/**
 * The ops of a log item: one batch record (`len:u32 crc32:u32 payload`, payload = ops
 * `1 klen key vlen value` | `0 klen key` | `2 klen digits`). Returns [{tag, key, value}];
 * throws when the item is not exactly one record (the crc is not checked: this reader is for
 * searching, and the adapter's own reading is what the other tests check).
 */
export function recordOps(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = dv.getUint32(0, true);
  if (8 + len !== bytes.length) throw new Error(`an item of ${bytes.length} bytes holds a record of ${8 + len}`);
  const ops = [];
  for (let at = 8; at < bytes.length; ) {
    const tag = bytes[at];
    const klen = dv.getUint32(at + 1, true);
    const key = bytes.subarray(at + 5, at + 5 + klen);
    at += 5 + klen;
    let value = null;
    if (tag === 1) {
      const vlen = dv.getUint32(at, true);
      value = bytes.subarray(at + 4, at + 4 + vlen);
      at += 4 + vlen;
    } else if (tag !== 0 && tag !== 2) {
      throw new Error(`unknown op tag ${tag}`);
    }
    ops.push({ tag, key, value });
  }
  return ops;
}

/**
 * Tallies stored (key, value) pairs: `pairs` is [[keyBytes, valueBytes | null]]. Returns
 * `{byNamespace: {ns: occurrences}, keys: {ns: number of keys}, snapshot: {ns: occurrences in
 * snapshot chunks}, other: occurrences under no namespace}`. Keys are mnemo's `u/<ns>/...`.
 */
export function tally(pairs) {
  const out = { byNamespace: {}, keys: {}, snapshot: {}, other: 0 };
  for (const [key, value] of pairs) {
    const k = latin1(key);
    const n = occurrences(key) + (value ? occurrences(value) : 0);
    const m = /^u\/([^/]+)\//.exec(k);
    if (!m) {
      out.other += n;
      continue;
    }
    const ns = m[1];
    out.byNamespace[ns] = (out.byNamespace[ns] ?? 0) + n;
    out.keys[ns] = (out.keys[ns] ?? 0) + 1;
    if (k.startsWith(`u/${ns}/s/p/`)) out.snapshot[ns] = (out.snapshot[ns] ?? 0) + n;
  }
  return out;
}

/**
 * A batch log's items (Uint8Array records, in sequence order): `live`, the (key, value) pairs
 * they hold when replayed (checkpoint markers ignored: after a compaction the items before one
 * are deleted), and `all`, every op stored in any item, live or not, for tallying every byte.
 */
export function replay(items) {
  const live = new Map();
  const all = [];
  for (const bytes of items) {
    for (const { tag, key, value } of recordOps(bytes)) {
      if (tag === 2) continue;
      all.push([key, value]);
      if (tag === 1) live.set(latin1(key), [key, value]);
      else live.delete(latin1(key));
    }
  }
  return { live: [...live.values()], all };
}

export function fromBase64(text) {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export function toBase64(bytes) {
  return btoa(latin1(bytes));
}

// ---- a subject however it is spelled ----

/** The person of the spelling suite (diacritics, so NFC and NFD differ). */
export const SPELLED = "René Müller";

/**
 * The subject written the ways people and programs write it: a character of each Unicode
 * punctuation category (Pd, Pi, Pf, Ps, Pe, Po) around and between its words, Zs spaces, the
 * zero-width characters inside and between them, NFC and NFD, upper and lower case, a
 * possessive and an elided form, a line break. Each is an episode with its own marker
 * (`spellmarkNNNx`); one more episode (`keepmark`) names someone else.
 */
export function spellings() {
  const punctuation = ["-", "\u2013", "\u2014", "«", "“", "‘", "»", "”", "’", "(", "[", "„", ")", "]", "!", '"', ",", ".", "…", "·", "¿"];
  const spaces = [" ", "\u00a0", "\u2002", "\u2009", "\u202f", "\u3000"];
  const invisible = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"];
  const [first, last] = SPELLED.split(" ");
  const forms = [
    [first.normalize("NFC"), last.normalize("NFC")],
    [first.normalize("NFD"), last.normalize("NFD")],
    [first.toUpperCase(), last.toUpperCase()],
    [first.toLowerCase(), last.toLowerCase()],
  ];
  const out = [];
  for (const [a, b] of forms) {
    for (const p of punctuation) out.push(`${p}${a} ${b}${p}`, `${a}${p}${p}${b}`.replaceAll("-", " "));
    for (const s of spaces) out.push(`${a}${s}${s}${b}`);
    for (const z of invisible) out.push(`${a}${z}${b}`, `${a.slice(0, 2)}${z}${a.slice(2)} ${b}`);
    out.push(`${a} ${b}’s desk`, `l’${a} ${b}`, `${a}\n${b}`);
  }
  return out;
}

/** The spelling episodes (and the control) as `ingest` takes them, with host vectors. */
export function spellingEpisodes() {
  const episodes = spellings().map((s, i) => ({ text: `spellmark${String(i).padStart(3, "0")}x: call ${s} today`, createdAt: T0 + i }));
  episodes.push({ text: "keepmark: call Rene Mullerova today", createdAt: T0 });
  return episodes;
}

/** Stores the spelling episodes in `ns` (one `ingest`), erases the subject, returns the receipt. */
export async function eraseSpellings(mem, ns) {
  const r = await mem.ingest(ns, spellingEpisodes(), { now: T0 + DAY });
  if (r.stored.length !== spellings().length + 1) throw new Error(`ingest stored ${r.stored.length}: ${JSON.stringify(r.discarded)}`);
  // The subject is in nearly every episode here: the safety catch is lifted on purpose.
  return mem.erase(ns, { scope: "subject", subject: SPELLED, force: true });
}

/** Occurrences of the spelling markers (`spellmark`) and of the control (`keepmark`) in `bytes`. */
export function markers(bytes) {
  const s = latin1(bytes);
  return { spelled: s.split("spellmark").length - 1, kept: s.split("keepmark").length - 1 };
}
