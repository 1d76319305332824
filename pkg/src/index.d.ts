// Types of the mnemo package (all entry points export the same API).

export type Bytes = Uint8Array;

/** The storage contract: what every adapter implements. */
export interface Storage {
  /** The value under `key`, or null. */
  get(key: Bytes): Promise<Bytes | null>;
  /** Up to `limit` pairs whose keys start with `prefix`, strictly after `after`, in byte order. */
  scan(prefix: Bytes, after: Bytes | null, limit: number): Promise<[Bytes, Bytes][]>;
  /** Applies every op or none (null deletes); resolves once stored. */
  write(ops: [Bytes, Bytes | null][]): Promise<void>;
  /** Optional: drop deleted bytes (log adapters rewrite their log). Called after an erasure. */
  compact?(): Promise<void>;
  /** Optional: what erasure does to the bytes here (reported in the receipt). */
  readonly erasure?: { rewrites: boolean; note: string };
  /**
   * Optional: the Web Lock a Mnemo holds while it has this storage open, where the Web Locks
   * API exists, so that two contexts (tabs, an extension page and its service worker) never
   * interleave their writes. IndexedDbStorage and ChromeStorage name one.
   */
  readonly lockName?: string;
}

export declare class MemoryStorage implements Storage {
  get(key: Bytes): Promise<Bytes | null>;
  scan(prefix: Bytes, after: Bytes | null, limit: number): Promise<[Bytes, Bytes][]>;
  write(ops: [Bytes, Bytes | null][]): Promise<void>;
  /** Resolves: deleted values are dropped at once. */
  compact(): Promise<void>;
}

export type Outcome = "unknown" | "success" | "failure" | "partial";
export type Status = "raw" | "active" | "superseded" | "rejected";

export interface EpisodeInput {
  text: string;
  /** ms since the epoch, or ISO-8601; default: now. */
  createdAt?: number | string;
  outcome?: Outcome;
  verdict?: string;
  agent?: string;
  kind?: string;
  entities?: string[];
  tags?: string[];
  tool?: string;
  stage?: string;
  errorClass?: string;
  entityType?: string;
  /** Where it came from; its first word (before any `:`) names the origin. */
  source?: string;
  /** The origin, said apart: the source when none is given; must agree with it otherwise. */
  origin?: Origin;
  trust?: number;
  surprise?: boolean;
  tier?: 0 | 1 | 2;
  refId?: string;
  /** A task memory: when it stops being recalled (ms or ISO-8601). */
  expiresAt?: number | string;
  /** A task memory: its time to live from `createdAt`, ms (instead of `expiresAt`). */
  ttlMs?: number;
  /**
   * A long text the host embedded itself as passages (with `options.vector` the whole text's
   * vector): each window's UTF-8 byte offsets in `text` and its vector. Without it, the
   * engine's own model embeds a long text as passages of 128 words.
   */
  passages?: { start: number; end: number; vector: ArrayLike<number> }[];
}

export interface Episode {
  id: number;
  refId: string;
  agent: string;
  kind: string;
  text: string;
  outcome: Outcome;
  verdict: string;
  entities: string[];
  situation: { tool: string; entityType: string; errorClass: string; stage: string };
  compactSummary: string;
  tier: number;
  group: number;
  status: Status;
  createdAt: number;
  lastAccessedAt: number;
  accessCount: number;
  source: string;
  trust: number;
  importance: number;
  surprise: boolean;
  tags: string[];
  /** When a task memory expires (ms; 0: never). */
  expiresAt: number;
  /** For a compaction summary: the ids it summarises (its evidence index). */
  evidence: number[];
  /** For an episode consolidation evicted from recall: the rule that represents it (0: none). */
  representedBy: number;
}

/** The structure of a compaction summary (JSON in a summary episode's `compactSummary`). */
export interface Summary {
  tier: 1 | 2;
  period: string;
  agent: string;
  contact: string;
  episodes: number;
  goal: string[];
  decisions: string[];
  lessons: string[];
  openIssues: string[];
  nextSteps: string[];
  notes: string[];
  routine: [string, number][];
  mentions: string[];
  omitted: number;
  evidence: number[];
  writtenBy: "extractive" | "llm";
}

/** Counts of a namespace (integers). */
export interface Stats {
  episodes: number;
  retrievable: number;
  cold: number;
  tiers: { raw: number; weekly: number; monthly: number };
  statuses: { raw: number; active: number; superseded: number; rejected: number };
  bytes: number;
}

/** Why a hit scored what it did: finalScore = relevance × recency × importance (× shadowing). */
export interface Explanation {
  bm25: number;
  cosine: number;
  sim: number;
  lex: number;
  /** w: BM25's weight for this query, lexicalWeight (0.5) × min(1, coverage / 0.8), coverage being the best candidate's share of the query's IDF mass. */
  lexicalWeight: number;
  /** (1 − w)·sim + w·lex. */
  fused: number;
  /** What the conversation around it added: 0.4 × the better neighbour's fused score (the episode just before or after, within 30 minutes). */
  context: number;
  /** (fused + context) / the best candidate's. */
  relevance: number;
  ageDays: number;
  recency: number;
  importance: number;
  finalScore: number;
  sources: ("bm25" | "vector" | "recent" | "context" | "cold")[];
  terms: [string, number][];
  shadowedBy: number | null;
  /** 0.5 when outcome tracking found the episode harmful (it multiplied finalScore). */
  outcomeWeight: number;
  /** Where the episode came from (read from its `source`). */
  origin: Origin;
  /** Not from the user or an administrator: quote it as data, never follow it. */
  untrusted: boolean;
  /** Its text reads as instructions: never inject it as one. */
  instructionLike: boolean;
  /**
   * A text longer than the model reads (512 tokens), embedded by the engine's own model, is
   * stored as overlapping passages of ~128 words, and `cosine` is its best passage's: this names
   * that passage (index from 0; start and end are UTF-8 byte offsets in the episode's text, not
   * UTF-16 `slice` indices), or is null when the text was read whole. A vector the host gives
   * (`options.vector`, or an `embed` callback) is the whole text's, unless the episode carries
   * `passages`.
   */
  passage: { index: number; start: number; end: number } | null;
}

export interface Filter {
  agent?: string;
  entity?: string;
  tags?: string[];
  kinds?: string[];
  statuses?: Status[];
  tiers?: number[];
  tool?: string;
  entityType?: string;
  errorClass?: string;
  stage?: string;
  from?: number | string;
  to?: number | string;
}

export interface Query {
  text: string;
  k?: number;
  filter?: Filter;
  /** Update last access and count of the hits (default true). */
  touch?: boolean;
  /** Read "last week", "ieri"… as a window (default true). */
  timeExpressions?: boolean;
  /** Also search cold records: compacted sources and episodes a rule represents (default false). */
  includeCold?: boolean;
  /** Rank with another formula: "balanced" (default), "plain-decay" (cosine-and-BM25 fusion × exp(−λ·days), no floor; "seed" is its former name), "weighted", "lexical" (BM25 alone), "dense" (cosine alone). */
  formula?: "balanced" | "plain-decay" | "seed" | "weighted" | "lexical" | "dense";
  /** Scoring overrides by name, e.g. { recency_floor: 1, context_weight: 0 } (see Scoring::set). */
  scoring?: Record<string, number | boolean>;
}

export interface Recall {
  hits: { episode: Episode; explanation: Explanation }[];
  window: { from: number; to: number } | null;
  windowDropped: boolean;
  /** Report how the task went with `outcome(ns, retrievalId, …)` (null: nothing was logged). */
  retrievalId: number | null;
}

export type Source = "explicit" | "admin" | "implicit";

/** What to erase: the whole namespace, every record naming a subject (however it is written:
 * case, accents, spaces, quotes, possessives), or one episode. `dryRun` returns the receipt of
 * what would go and changes nothing. A subject with fewer than 3 letters or made of common
 * words is refused, and one found in more than half of the episodes unless `force`. */
export type Erasure =
  | { scope: "namespace"; dryRun?: boolean }
  | {
      scope: "subject";
      subject: string;
      /** Linked identifiers (an email address, an IBAN…) erased with the subject. */
      also?: string[];
      force?: boolean;
      dryRun?: boolean;
    }
  | { scope: "episode"; id: number; dryRun?: boolean };

/** Proof of an erasure: what went per layer, and what the scan afterwards found. */
export interface ErasureReceipt {
  format: "mnemo-erasure/1";
  namespace: string;
  scope: "namespace" | "subject" | "episode" | "correction";
  /** SHA-256 of "mnemo-erasure/1\0<namespace>\0<subject>": the subject is never named. */
  subjectSha256: string | null;
  erasedAt: number;
  layers: { layer: string; deleted: number; rewritten: number }[];
  episodeIds: number[];
  /** True when the storage rewrote its bytes (log adapters, memory); false when it only deleted keys. */
  vacuumed: boolean;
  /**
   * Why the vacuum failed: the erasure is committed (nothing returns the erased records) but
   * their bytes may stay in the backend's files until the vacuum, retried at every open, runs.
   */
  vacuumError?: string;
  /** A dry run: what would go; nothing changed. */
  dryRun: boolean;
  /** What the storage did with the erased bytes. */
  storage: string;
  verification: { recordsScanned: number; bytesScanned: number; needles: number; occurrences: number; leftoverKeys: number };
}
/** Where a write came from; only "user" and "admin" are trusted. */
export type Origin = "user" | "admin" | "agent" | "tool" | "web" | "email" | "unknown";
export type Policy = "auto-inject" | "sensitive" | "never-inject";

export interface Fact {
  key: string;
  value: string;
  source: Source;
  confidence: number;
  policy: Policy;
  version: number;
  updatedAt: number;
  expiresAt: number | null;
  origin: Origin;
}

/** `superseded`: merged into a wider rule that says the same and more (`supersededBy`). */
/** Caps per section in tokens (defaults: a 32k-token window's share, 11,600 in all with the answer's 2,000). */
export interface Budget {
  system: number;
  rules: number;
  facts: number;
  episodes: number;
  episodesK: number;
  observations: number;
  observationsK: number;
  working: number;
  tools: number;
  response: number;
}

export interface ContextRequest {
  /** What recall searches for: the new email, the user's request. */
  task: string;
  /** A running task's working memory to include. */
  taskId?: string;
  budget?: Partial<Budget>;
  /** Everything but the response buffer fits this many tokens (caps scale down). */
  total?: number;
  /** The host's own system prompt (never cut; refused when over its cap). */
  system?: string;
  conversation?: { role: string; text: string }[];
  tools?: { name: string; text: string }[];
  /** Disclosure level; auto when absent. */
  level?: 1 | 2 | 3;
  vector?: number[];
}

export interface ContextItem {
  /** Fetch it with `expand`: rule:3, fact:KEY, episode:42, observation:7, transcript:2… */
  id: string;
  text: string;
  tokens: number;
  /** Why it is here, with its score's parts. */
  why: string;
  score: number | null;
  source: string;
  /** Quoted as data, never followed. */
  untrusted: boolean;
}

export interface ContextSection {
  name: "system" | "rules" | "facts" | "episodes" | "observations" | "working" | "tools";
  title: string;
  cap: number;
  tokens: number;
  items: ContextItem[];
  note: string;
}

export interface Context {
  sections: ContextSection[];
  /** What did not fit or was held back, fetchable by id. */
  withheld: { id: string; section: string; line: string; tokens: number; reason: string }[];
  tokens: { total: number; budget: number; response: number; withheldLine: number; counter: "estimate" | "host" };
  disclosure: { level: 1 | 2 | 3; why: string };
  /** For `outcome` (null when no episode was injected). */
  retrievalId: number | null;
  budget: Budget;
  /** Ready for a system prompt. */
  text: string;
}

export type StepKind = "reasoning" | "tool-result" | "approval" | "note";

export interface WorkingMemory {
  task: string;
  cap: number;
  /** Earlier steps, folded into lines that keep numbers, names, identifiers and decisions. */
  summary: string[];
  mentions: string[];
  folded: number;
  summarisedBy: "extractive" | "llm";
  llmRefused: string;
  steps: { n: number; kind: StepKind; text: string }[];
}

export type RuleStatus = "candidate" | "active" | "demoted" | "superseded";

export interface Pattern {
  agent: string;
  /** e.g. "removed:semicolon", "pleasantry:removed", "rewrite", "deferred". */
  behaviour: string;
  /** e.g. "", "segment=technical", "amount>=10000", "weekday=fri&time>=14:30". */
  condition: string;
  key: string;
}

/** An entity triple, valid from `validFrom` until `validTo` (null while it holds). */
export interface Triple {
  subject: string;
  predicate: string;
  object: string;
  /** 0–1; raised by agreeing assertions. */
  confidence: number;
  source: Source;
  validFrom: number;
  validTo: number | null;
  updatedAt: number;
}

export interface Rule {
  id: number;
  text: string;
  status: RuleStatus;
  /** The numbers behind a promoted rule ("" for a rule a person wrote). */
  evidence: string;
  /** The observation it was promoted from. */
  observation: number | null;
  pattern: Pattern | null;
  /** The rule that absorbed it, when its status is superseded. */
  supersededBy: number | null;
  createdAt: number;
  updatedAt: number;
}

export type SignalKind = "edited" | "rejected" | "approved" | "corrected" | "exception" | "deferred" | `custom:${string}`;
export type Category = "writing-style" | "rhythm" | "people" | "tools" | "decisions";
export type Confidence = "low" | "medium" | "high" | "very-high";

export interface SignalInput {
  /** ISO-8601 with the user's zone: the zone gives the local time of day. */
  ts: string;
  kind: SignalKind;
  agent: string;
  category?: Category;
  /** contact, entity, tool, stage, error_class, and free attributes (strings or numbers). */
  situation?: Record<string, string | number>;
  detail?: string;
  /** The agent's draft and what the user sent (reduced to edit features). */
  before?: string;
  after?: string;
  correction?: { from: string; to: string };
  source?: string;
  trust?: number;
  episode?: number;
}

export interface Observation {
  id: number;
  pattern: string;
  patternDetail: Pattern | null;
  category: Category;
  agent: string;
  quote: string;
  evidence: string;
  occurrences: number;
  opportunities: number;
  contradictions: number;
  consistency: number;
  /** The band the counts give, and the one that counts (raised by "right"). */
  counted: Confidence;
  confidence: Confidence;
  boost: number;
  promotionCandidate: boolean;
  support: number[];
  status: "open" | "rejected" | "merged";
  mergedInto: number;
  createdAt: number;
  updatedAt: number;
  confirmedAt: number | null;
  rule: number | null;
  firstSeen: number;
  lastSeen: number;
  phrasedBy: "engine" | "llm";
}

export interface Nightly {
  done: boolean;
  now: number;
  next: string;
  work: number;
  merged: number[];
  signalsRead: number;
  inserted: number[];
  updated: number[];
  promoted: number[];
  harmfulEpisodes: number[];
  demotedRules: number[];
  /** Rules superseded by a wider or equal rule at promotion. */
  mergedRules: number[];
  erasures: string[];
  /** Summaries compaction wrote. */
  compacted: {
    summary: number;
    tier: 1 | 2;
    sources: number[];
    keptHot: number[];
    writtenBy: "extractive" | "llm";
    llmRefused: string;
  }[];
  /** Lesson observations consolidation wrote or recounted. */
  clustered: number[];
  /** Episodes evicted from recall because a rule represents them. */
  evicted: number[];
}

export interface OutcomeReport {
  retrievals: number;
  withOutcome: number;
  baseFailureRate: number;
  baseSuccessRate: number;
  entries: {
    kind: "episode" | "rule";
    id: number;
    retrieved: number;
    beforeSuccess: number;
    beforeFailure: number;
    beforePartial: number;
    failureRate: [number, number];
    verdict: "harmful" | "helpful" | "rent" | "neutral" | "unproven";
  }[];
}

/** Fetches model files with progress, cached in the Cache API where there is one. */
export declare function fetchModel<K extends string>(
  files: Record<K, string>,
  options?: { onProgress?: (p: { file: K; loaded: number; total: number; cached: boolean }) => void; cacheName?: string | null },
): Promise<Record<K, Uint8Array>>;

/** Bytes of wasm linear memory in use. */
export declare function memoryBytes(): number;

export interface OpenOptions {
  /** An embedder made from model bytes (moved into the engine). */
  embedder?: Embedder;
  /** Model id and dimension of host-supplied vectors. */
  vectorModel?: string;
  dim?: number;
  /** A host embedder used when a call passes no vector (e.g. Workers AI). */
  embed?: (texts: string[], role: "query" | "passage") => Promise<ArrayLike<number>[]>;
  /** The clock (ms); default Date.now. */
  now?: () => number;
  snapshotAfter?: number;
  snapshotChunk?: number;
  /**
   * A synchronous language model that may reword observations (seed-format JSON in an
   * `<observation>` block). Answers are checked: counts, word caps, ids, no new numbers or
   * names; a failing answer keeps the engine's words.
   */
  phrase?: (prompt: string, maxTokens: number) => string;
  /**
   * When another context holds the storage's lock (`Storage.lockName`): wait for it to close
   * instead of failing with code LOCKED.
   */
  waitForLock?: boolean;
}

export type Vector = Float32Array | number[];

/** One day of the mail agent's scenario. */
export interface ScenarioDay {
  /** 1-based. */
  day: number;
  episodes: EpisodeInput[];
  signals: SignalInput[];
  /** When that night's nightly run happens (ms). */
  night: number;
}

/** The mail agent's seeded scenario (`Mnemo.demoScenario`). */
export interface DemoScenario {
  namespace: string;
  /** Maria's and Marco's facts, set by her (origin user) before day 1. */
  facts: { key: string; value: string; source: Source; origin: Origin; policy: Policy }[];
  factsAt: number;
  days: ScenarioDay[];
  /** The new email from Marco Bertelli: the task to assemble a context for. */
  incoming: string;
  incomingAt: number;
}

/** What `replayScenario` wrote. */
export interface Replayed {
  episodes: number;
  stored: number;
  signals: number;
  nights: number;
  facts: number;
}

export declare class Mnemo {
  /** Rejects with code LOCKED when another context holds the storage (see `waitForLock`). */
  static open(storage: Storage, options?: OpenOptions): Promise<Mnemo>;
  /**
   * Waits for the calls already made, then lets go of the storage and its lock. Later calls
   * reject with code CLOSED.
   */
  close(): Promise<void>;
  open(ns: string): Promise<{ from: "snapshot" | "records"; [k: string]: unknown }>;
  remember(
    ns: string,
    episode: EpisodeInput,
    options?: { vector?: Vector },
  ): Promise<{ stored: boolean; id?: number; importance?: number; reason: string }>;
  /**
   * Stores many episodes all or nothing (one atomic batch); one imported before (the same
   * `id`, or else the same line) is skipped. `origin`: the most trusted origin a line may claim
   * ("unknown" unless you vouch for the lines).
   */
  ingest(
    ns: string,
    episodes: (EpisodeInput & { id?: string | number })[] | string,
    options?: { origin?: Origin; now?: number },
  ): Promise<{ stored: number[]; discarded: { line: number; reason: string }[]; duplicates: { line: number; id: number }[] }>;
  recall(ns: string, query: string | Query, options?: { vector?: Vector; now?: number }): Promise<Recall>;
  setStatus(ns: string, id: number, status: Status): Promise<void>;
  timeline(ns: string, options?: { before?: number; limit?: number }): Promise<Episode[]>;
  setFact(
    ns: string,
    fact: { key: string; value: string; source?: Source; origin?: Origin; confidence?: number; policy?: Policy; ttlMs?: number },
    options?: { now?: number },
  ): Promise<{ result: "written" | "confirmed" | "refused"; version?: number; source?: Source; origin?: Origin; heldBy?: Source }>;
  fact(ns: string, key: string, options?: { now?: number; all?: boolean }): Promise<Fact | null>;
  facts(ns: string, options?: { now?: number; all?: boolean }): Promise<Fact[]>;
  factHistory(ns: string, key: string): Promise<Fact[]>;
  rollbackFact(ns: string, key: string, version: number, options?: { now?: number }): Promise<number>;
  /** Only origin "user" or "admin" may write a rule; any other origin is refused. */
  addRule(ns: string, text: string, options?: { observation?: string; status?: RuleStatus; origin?: Origin; now?: number }): Promise<number>;
  rules(ns: string, statuses?: RuleStatus[]): Promise<Rule[]>;
  /** Changes a rule's status ("superseded" is set only by merging, and refused here). */
  setRuleStatus(ns: string, id: number, status: RuleStatus, options?: { now?: number }): Promise<void>;
  /** Asserts a triple: an agreeing assertion raises its confidence, a contradicting one ends the current one. */
  assertTriple(ns: string, triple: { subject: string; predicate: string; object: string; confidence?: number; source?: Source }, options?: { now?: number }): Promise<Triple>;
  /** The triples about `subject` that hold now (with `history`, the ended ones too). */
  triples(ns: string, subject: string, options?: { history?: boolean }): Promise<Triple[]>;
  /** Open observations ranked by cosine × exp(−λ·days) against `text` (or its `vector`). */
  recallObservations(ns: string, text: string, options?: { k?: number; vector?: ArrayLike<number>; now?: number }): Promise<{ observation: Observation; cosine: number; recency: number; score: number }[]>;
  signal(ns: string, signal: SignalInput): Promise<{ id: number }>;
  signals(ns: string, signals: SignalInput[]): Promise<{ ids: number[]; duplicates: number }>;
  observe(ns: string, options?: { now?: number }): Promise<{ signals: number; found: number; inserted: number[]; updated: number[]; blocked: number; deferred: number }>;
  observations(ns: string, statuses?: ("open" | "rejected" | "merged")[]): Promise<Observation[]>;
  feedback(
    ns: string,
    id: number,
    verdict: "right" | "wrong",
    options?: { now?: number },
  ): Promise<{ observation: Observation; demotedRules: number[]; rejectedEpisodes: number[]; reverseSignal: number | null }>;
  promote(ns: string, options?: { now?: number }): Promise<{ rule: number; observation: number; replaced: number | null; absorbed: number[]; mergedInto: number | null }[]>;
  outcome(ns: string, retrievalId: number, outcome: "success" | "failure" | "partial", options?: { now?: number }): Promise<{ ok: true }>;
  outcomeReport(ns: string): Promise<OutcomeReport>;
  nightly(ns: string, options?: { now?: number; budget?: number }): Promise<Nightly>;
  /** The mail agent's seeded scenario: Maria Rossi's 90 days of mail (the one `mnemo demo` replays). */
  static demoScenario(options?: { seed?: number; days?: number }): DemoScenario;
  /** Replays a scenario into its (empty) namespace, a nightly run each night. */
  replayScenario(scenario: DemoScenario, options?: { onNight?: (day: ScenarioDay, night: Nightly) => void }): Promise<Replayed>;
  /** The reports of the last finished nightly runs, oldest first (what each compacted, merged, promoted, evicted). */
  nightlyLog(ns: string): Promise<Nightly[]>;
  /** Counts per tier and status, retrievable vs cold, and bytes. */
  stats(ns: string, options?: { now?: number }): Promise<Stats>;
  /** The recency factor of the default scoring for `ageDays` at `tier` (decay, floored). */
  recency(ageDays: number, tier?: number): number;
  /** The context for a task within a token budget (rules whole and first, facts, recall, observations, working memory, tool calls; the rest withheld). */
  context(ns: string, request: string | ContextRequest, options?: { vector?: ArrayLike<number>; now?: number }): Promise<Context>;
  /** Starts a task's working memory (in this process only), capped at `cap` tokens (default 4,000). */
  taskStart(ns: string, id: string, content: string, options?: { cap?: number }): Promise<WorkingMemory>;
  /** Adds a step; the oldest are summarised (never truncated) past the cap. */
  taskStep(ns: string, id: string, kind: StepKind, text: string): Promise<{ n: number; folded: number; tokens: number }>;
  workingMemory(ns: string, id: string): Promise<WorkingMemory>;
  /** Ends a task: its working memory is discarded and returned one last time. */
  taskEnd(ns: string, id: string): Promise<WorkingMemory>;
  /** The full text behind an id a context listed (`episode:42`, `rule:3`, `fact:KEY`, `observation:7`, `transcript:2`, `working:TASK`). */
  expand(ns: string, id: string): Promise<string>;
  /**
   * The background step for the loaded namespaces: graph builds, then a snapshot when one is
   * due, spending about `budget` work units (default 2,000,000: 0.2–0.3 s of graph building
   * in wasm; `Infinity`: until nothing is due). Call again until `done`.
   */
  maintain(options?: { force?: boolean; budget?: number }): Promise<{ sealed: number; merges: number; segments: number; snapshots: number; snapshotBytes: number; work: number; done: boolean }>;
  forgetNamespace(ns: string): Promise<number>;
  /** Erases a namespace, a subject in it, or one episode, across every layer; resolves to the receipt. */
  erase(ns: string, what?: Erasure, options?: { now?: number }): Promise<ErasureReceipt>;
  /** Replaces an episode's text under the same id, erasing what derived from the wrong version; resolves to the receipt (scope "correction"). */
  correct(
    ns: string,
    id: number,
    correction: { text: string; verdict?: string; vector?: Float32Array | number[] },
    options?: { now?: number },
  ): Promise<ErasureReceipt>;
  /** Queues an erasure for the nightly job. */
  requestErasure(ns: string, what: Erasure, options?: { now?: number }): Promise<{ id: number }>;
  /** Everything held about the namespace, decoded (right of access). */
  exportReadable(ns: string, options?: { now?: number }): Promise<Record<string, unknown> & { format: "mnemo-access/1" }>;
  /** The namespace as an encrypted file (AES-256-GCM, key from scrypt). */
  exportEncrypted(ns: string, passphrase: string, options?: { now?: number; logN?: number }): Promise<Uint8Array>;
  /** Imports an encrypted export into an empty namespace; rejects (DECRYPT, CORRUPT, FORMAT) and imports nothing unless every byte authenticates. */
  importEncrypted(ns: string, passphrase: string, file: Uint8Array | ArrayBuffer): Promise<{ records: number; bytes: number }>;
  /** Re-embeds every episode with the attached embedder (after a model change). */
  reembed(ns: string): Promise<{ reembedded: number }>;
  /** Records that could not be read when the namespace was opened (kept for repair). */
  quarantined(ns: string): Promise<{ key: string; episode: number; reason: string }[]>;
}

/** A BERT-family embedder (multilingual-e5-small by default) from model and tokenizer bytes. */
export declare class Embedder {
  /** `onStage` is called with each load stage's name as it ends ("model id", "tokenizer", then
   * "parse", "type analysis", "declutter", "fuse" for model.onnx or "read archive" for a
   * compiled model.nnef.tar), for timing the load by stage. */
  /** Compiles `model.onnx` (or `model.q4.onnx`) bytes into an NNEF archive (`model.nnef.tar`,
   * `model.q4.nnef.tar`: typed, decluttered and fused), which the constructor loads without
   * parsing or analysing it, same model id. */
  static compile(model: Uint8Array, tokenizer: Uint8Array): Uint8Array;
  /** `maxBatchTokens` bounds the padded tokens of one forward pass (texts × the longest one's
   * tokens; default 1024), and with it the wasm memory activations take: a longer call is
   * split, a text over the bound runs alone. */
  constructor(model: Uint8Array, tokenizer: Uint8Array, options?: { name?: string; kind?: "e5" | "plain"; cacheCapacity?: number; maxBatchTokens?: number; onStage?: (stage: string) => void });
  readonly modelId: string;
  readonly dim: number;
  embed(texts: string[], role: "query" | "passage"): { dim: number; vectors: Float32Array; tokens: Uint32Array; truncated: Uint8Array; negated: Uint8Array };
  free(): void;
}

/** Node only. One append-only log file; compacted automatically past 2x the live data (and 1 MiB more than it). */
export declare class NodeFileStorage implements Storage {
  /** Rejects with code "CORRUPT" (the file untouched) when the log is damaged before its end. */
  static open(path: string): Promise<NodeFileStorage>;
  get(key: Bytes): Promise<Bytes | null>;
  scan(prefix: Bytes, after: Bytes | null, limit: number): Promise<[Bytes, Bytes][]>;
  write(ops: [Bytes, Bytes | null][]): Promise<void>;
  /** Rewrites the log as the live data only: no byte of a deleted value stays in the file. */
  compact(): Promise<void>;
  close(): Promise<void>;
}

/** Browsers, extensions, Web Workers. */
export declare class IndexedDbStorage implements Storage {
  static open(name?: string): Promise<IndexedDbStorage>;
  /** `mnemo:indexeddb:<name>`. */
  readonly lockName: string;
  get(key: Bytes): Promise<Bytes | null>;
  scan(prefix: Bytes, after: Bytes | null, limit: number): Promise<[Bytes, Bytes][]>;
  write(ops: [Bytes, Bytes | null][]): Promise<void>;
  /** Resolves: a delete removes the value from the database. */
  compact(): Promise<void>;
  close(): void;
}

/** Browser entry (MV3 extensions). One chrome.storage item per batch; compacted like NodeFileStorage. */
export declare class ChromeStorage implements Storage {
  /** `area`: default chrome.storage.local; `prefix` of the item names: default "mnemo/b/". */
  static open(
    area?: { get(keys: null): Promise<Record<string, unknown>>; set(items: Record<string, string>): Promise<void>; remove(keys: string[]): Promise<void> },
    prefix?: string,
  ): Promise<ChromeStorage>;
  /** `mnemo:chrome.storage:<prefix>`. */
  readonly lockName: string;
  get(key: Bytes): Promise<Bytes | null>;
  scan(prefix: Bytes, after: Bytes | null, limit: number): Promise<[Bytes, Bytes][]>;
  write(ops: [Bytes, Bytes | null][]): Promise<void>;
  /** Rewrites the log as the live data only: no deleted value stays in the area. */
  compact(): Promise<void>;
}

/** Workers entry. One KV value per batch (one writer per namespace); compacted like NodeFileStorage. */
export declare class WorkersKvStorage implements Storage {
  /** `kv`: a KV namespace binding. */
  static open(kv: {
    list(options: { prefix: string; cursor?: string }): Promise<{ keys: { name: string }[]; list_complete: boolean; cursor?: string }>;
    get(name: string, type: "arrayBuffer"): Promise<ArrayBuffer | null>;
    put(name: string, value: Uint8Array): Promise<void>;
    delete(name: string): Promise<void>;
  }): Promise<WorkersKvStorage>;
  get(key: Bytes): Promise<Bytes | null>;
  scan(prefix: Bytes, after: Bytes | null, limit: number): Promise<[Bytes, Bytes][]>;
  write(ops: [Bytes, Bytes | null][]): Promise<void>;
  /** Rewrites the log as the live data only: no deleted value stays in the namespace. */
  compact(): Promise<void>;
}

/** Workers entry: over a Durable Object's `state.storage`. */
export declare class DurableObjectStorage implements Storage {
  constructor(storage: object);
  get(key: Bytes): Promise<Bytes | null>;
  scan(prefix: Bytes, after: Bytes | null, limit: number): Promise<[Bytes, Bytes][]>;
  write(ops: [Bytes, Bytes | null][]): Promise<void>;
  /** Resolves: a delete removes the value from the Durable Object's storage. */
  compact(): Promise<void>;
}

/** Where a `MnemoWorker` keeps its data: the storage is named, since objects cannot cross into a worker. */
export type WorkerStorage = "memory" | { indexedDb: string };

export interface WorkerOptions {
  /** "memory" (the default) or an IndexedDB database by name. */
  storage?: WorkerStorage;
  /** The model, fetched (and cached) in the worker from URLs, or given as bytes (transferred). */
  model?: { model: string; tokenizer: string } | { modelBytes: Uint8Array; tokenizerBytes: Uint8Array };
  /** The model download's progress. */
  onProgress?: (p: { file: string; loaded: number; total: number; cached: boolean }) => void;
  /** Model id and dimension of host-supplied vectors, when there is no model. */
  vectorModel?: string;
  dim?: number;
  snapshotAfter?: number;
  snapshotChunk?: number;
  /** Where the worker module is served from (default: next to the package's client). */
  workerUrl?: string | URL;
}

/** Every method of `T`, resolving asynchronously (a call crosses to the worker and back). */
type Remote<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/**
 * The `Mnemo` API with the engine in a Web Worker the package starts itself: loading the
 * model and embedding never block the page. Same methods, same answers; no callbacks
 * (`embed`, `phrase`, `countTokens`, `now`, `onNight`), and storage by name. In MV3 service
 * workers, which cannot start workers, use `Mnemo`. Import it from "mnemo/worker" to keep the
 * wasm off the page entirely.
 */
export interface MnemoWorker extends Remote<Mnemo> {}
export declare class MnemoWorker {
  static open(options?: WorkerOptions): Promise<MnemoWorker>;
  /** The engine's vector model id. */
  readonly modelId: string;
  /** `Mnemo.demoScenario`, computed in the worker. */
  demoScenario(options?: { seed?: number; days?: number }): Promise<DemoScenario>;
  /** Stops the worker; pending and later calls reject with code WORKER. */
  terminate(): void;
}
