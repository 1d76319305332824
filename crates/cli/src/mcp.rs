//! `mnemo mcp`: the memory as a Model Context Protocol server on stdin/stdout, for agent hosts
//! (Claude Desktop, IDEs, any MCP client). Built on the `rmcp` SDK: newline-delimited JSON-RPC
//! on stdout, nothing else (diagnostics go to stderr).
//!
//! - **Tools**: `remember`, `recall`, `context`, `expand`, `signal`, `outcome`, `facts`,
//!   `fact_get`, `fact_history`, `fact_set`, `triple_set`, `triples`, `task_start`,
//!   `task_step`, `task_end`; with `--allow-destructive` also `feedback` (a wrong observation
//!   never comes back), `forget` (erasure), `correct`, `episode_status`, `rule_status`,
//!   `fact_rollback` and `export`. A prompt-injected agent must not be able to erase a user,
//!   rewrite or export what is stored, or change what the user taught, so those are not even
//!   listed without the flag; the outcomes it reports may lower an episode's rank but never
//!   demote a rule. Which operations MCP leaves out, and why, is in the registry
//!   (`mnemo_json::OPERATIONS`).
//! - **Answers**: a short text for the model (one line per recalled episode, with why it
//!   ranks) and the whole JSON as structured content, described by an output schema
//!   (`mcp_answer`).
//! - **Resources**: `mnemo://rules` (the active rules) and `mnemo://observations` (the open
//!   observations), as JSON.
//! - **Trust**: the server cannot tell who typed what it is sent, so nothing it writes claims
//!   the user's or an administrator's authority: episodes and facts are written with origin
//!   `agent` unless the caller names an untrusted one (tool, web, email), and a fact from an
//!   untrusted origin is `implicit`, the lowest source (it never overrides what the user said).
//! - **The wire** (`mcp_wire`): a line that is not JSON gets a parse error (-32700), a tool
//!   argument over 1 MiB an invalid-params error (-32602), before the SDK or a tool sees them.
//! - **Sharing the store**: each request takes the store's lock, answers and releases it, so
//!   the lock is held only during a request and other `mnemo` commands can use the same
//!   directory while the server runs (a request that finds the store busy waits up to
//!   `--lock-wait`, 5 s by default).
//!   The engine stays loaded between requests and is opened again (its log replayed) only when
//!   another process wrote meanwhile ([`FileStore::reacquire`]). The model is loaded once, when
//!   the server starts.
//! - **Working memory** (`task_start`, `task_step`, `task_end`, and `context`'s `task_id`)
//!   lives in this process: it is carried over when the store is read again, and gone when the
//!   server stops.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mnemo::record::outcome::Reporter;
use mnemo::record::Outcome;
use mnemo::store::file::FileStore;
use mnemo::{Config, Embedder, Engine, Role};
use mnemo_embed::BertEmbedder;
use mnemo_json::Json;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::model::{
    Implementation, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

use crate::globals::Globals;
use crate::mcp_answer::{self as text, answer, schema};
use crate::mcp_args::*;

/// The tools offered only with `--allow-destructive`: those the registry marks so
/// ([`mnemo_json::Mcp::Destructive`]).
pub fn destructive() -> impl Iterator<Item = &'static str> {
    mnemo_json::OPERATIONS.iter().filter_map(|op| match op.mcp {
        mnemo_json::Mcp::Destructive(name) => Some(name),
        _ => None,
    })
}

/// The tools this server offers, with `--allow-destructive` or without.
pub fn tool_names(allow_destructive: bool) -> Vec<String> {
    let mut router = Memory::tool_router();
    if !allow_destructive {
        for name in destructive() {
            router.remove_route(name);
        }
    }
    let mut names: Vec<String> =
        router.list_all().into_iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}

/// A tool's answer: text and structured content, or the error the agent reads.
type Answer = Result<CallToolResult, String>;

/// `mnemo mcp`'s own options.
#[derive(clap::Args, Debug)]
pub struct Mcp {
    /// Also offer the tools that erase, rewrite or export memories (`forget`, `correct`,
    /// `episode_status`, `fact_rollback`, `export`) or change what the user taught (`feedback`,
    /// `rule_status`). Leave it off for agents that read untrusted text: an injected
    /// instruction could otherwise erase a user or reject what the user taught
    #[arg(long)]
    pub allow_destructive: bool,
}

/// Serves until the client closes stdin.
pub fn run(g: &Globals, a: &Mcp) -> Result<(), String> {
    let model = g.model_dir();
    let embedder = if model.join("model.onnx").is_file() {
        Some(crate::load(&model)?)
    } else {
        eprintln!(
            "mnemo mcp: no model in {} (remember and recall need one; see --model)",
            model.display()
        );
        None
    };
    let server = Memory::new(g, embedder, a.allow_destructive);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server's event loop: {e}"))?;
    runtime.block_on(async move {
        let service = server
            .serve(crate::mcp_wire::stdio())
            .await
            .map_err(|e| format!("MCP handshake failed: {e}"))?;
        service.waiting().await.map_err(|e| format!("MCP server stopped: {e}"))?;
        Ok(())
    })
}

/// The loaded model, lent to each request's engine.
#[derive(Clone)]
struct SharedModel(Arc<Mutex<BertEmbedder>>, String, usize, usize);

impl Embedder for SharedModel {
    fn model_id(&self) -> &str {
        &self.1
    }
    fn dim(&self) -> usize {
        self.2
    }
    fn max_tokens(&self) -> usize {
        self.3
    }
    fn embed(&mut self, texts: &[&str], role: Role) -> mnemo::Result<Vec<mnemo::Embedding>> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        m.embed(texts, role)
    }
    fn truncates(&mut self, text: &str, role: Role) -> Option<bool> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).truncates(text, role)
    }
}

#[derive(Clone)]
struct Memory {
    store: PathBuf,
    ns: String,
    at: Option<i64>,
    /// How long a request waits for a store another process holds (`--lock-wait`).
    lock_wait: Duration,
    model: Option<SharedModel>,
    tool_router: ToolRouter<Self>,
}

thread_local! {
    /// The engine of the last request on this thread, its store released between requests.
    /// (An engine cannot move between threads: its embedder need not be `Send`. The server has
    /// one store, and its requests run on the thread of its event loop.)
    static CACHED: std::cell::RefCell<Option<Engine<FileStore>>> =
        const { std::cell::RefCell::new(None) };
}

impl Memory {
    fn new(g: &Globals, embedder: Option<BertEmbedder>, allow_destructive: bool) -> Self {
        let model = embedder.map(|e| {
            let (id, dim, max) = (e.model_id().to_string(), e.dim(), e.max_tokens());
            SharedModel(Arc::new(Mutex::new(e)), id, dim, max)
        });
        let mut tool_router = Self::tool_router();
        if !allow_destructive {
            for name in destructive() {
                tool_router.remove_route(name);
            }
        }
        Memory {
            store: g.store.clone(),
            ns: g.ns.clone(),
            at: g.at,
            lock_wait: g.lock_wait(),
            model,
            tool_router,
        }
    }

    /// Runs `f` on the store's engine, holding the store's lock only for the call (waiting
    /// while another process holds it). The engine stays loaded between calls with its lock
    /// released, and is reused when the log shows nobody wrote in between; otherwise the store
    /// is opened (its log replayed) again.
    fn with_engine<T>(
        &self,
        f: impl FnOnce(&mut Engine<FileStore>, &str, i64) -> mnemo::Result<T>,
    ) -> Result<T, String> {
        CACHED.with_borrow_mut(|cached| self.on_engine(cached, f))
    }

    fn on_engine<T>(
        &self,
        cached: &mut Option<Engine<FileStore>>,
        f: impl FnOnce(&mut Engine<FileStore>, &str, i64) -> mnemo::Result<T>,
    ) -> Result<T, String> {
        let started = Instant::now();
        if let Some(engine) = cached.as_mut() {
            let current = loop {
                match engine.store_mut().reacquire() {
                    Ok(current) => break current,
                    Err(e) if self.busy(&started, &e) => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    Err(e) => return Err(failure(e)),
                }
            };
            if !current {
                // Another process wrote: the store is read again, the tasks carried over.
                let _ = engine.store_mut().release(); // its lock, for the fresh store
                let mut fresh = self.open_engine(&started)?;
                engine.hand_over(&mut fresh);
                *cached = Some(fresh);
            }
        }
        let engine = match cached.take() {
            Some(engine) => cached.insert(engine),
            None => cached.insert(self.open_engine(&started)?),
        };
        let result = f(engine, &self.ns, crate::globals::now_or(self.at)).map_err(failure);
        if engine.store_mut().release().is_err() {
            *cached = None; // cannot tell later whether the log changed: close the store
        }
        result
    }

    /// Opens the store (waiting up to `--lock-wait` from `started` while another process holds
    /// it) and an engine on it with the shared model.
    fn open_engine(&self, started: &Instant) -> Result<Engine<FileStore>, String> {
        std::fs::create_dir_all(&self.store)
            .map_err(|e| format!("{}: {e}", self.store.display()))?;
        let store =
            crate::globals::open_waiting(&self.store, *started, self.lock_wait).map_err(failure)?;
        let mut engine = Engine::new(store, Config::default());
        if let Some(m) = &self.model {
            engine = engine.with_embedder(Box::new(m.clone()));
        }
        Ok(engine)
    }
}

impl Memory {
    /// True while a request that found the store held by another process should wait for it.
    fn busy(&self, started: &Instant, e: &mnemo::Error) -> bool {
        matches!(e, mnemo::Error::Locked { .. }) && started.elapsed() < self.lock_wait
    }
}

/// A tool error the agent can act on: the engine's code and its message.
fn failure(e: mnemo::Error) -> String {
    format!("{}: {e}", e.code())
}

/// The origin a write through this server carries: `agent` unless the caller names another
/// untrusted one. The user's and an administrator's authority cannot be claimed here.
fn untrusted_origin(origin: Option<&str>) -> Result<&str, String> {
    match origin.unwrap_or("agent") {
        o @ ("agent" | "tool" | "web" | "email" | "unknown") => Ok(o),
        "user" | "admin" => Err("INVALID_INPUT: an MCP client cannot write with the user's or an \
             administrator's authority (the server cannot tell who typed it); leave origin out, \
             or name agent, tool, web or email"
            .into()),
        other => Err(format!(
            "INVALID_INPUT: origin {other:?} is not one of agent, tool, web, email, unknown"
        )),
    }
}

#[tool_router(router = tool_router)]
impl Memory {
    #[tool(description = "Store one episode (something that happened) in long-term memory. \
        Answers whether it was stored, with its id and importance; routine or secret-bearing \
        text may be discarded or masked.",
        output_schema = schema(&[("stored", "boolean"), ("reason", "string")]))]
    fn remember(&self, Parameters(a): Parameters<RememberArgs>) -> Answer {
        let origin = untrusted_origin(a.origin.as_deref())?;
        let out = self.with_engine(|e, ns, now| {
            let mut ep = json!({"text": a.text, "createdAt": now, "source": origin,
                "entities": a.entities, "tags": a.tags});
            for (k, v) in [
                ("outcome", a.outcome),
                ("verdict", a.verdict),
                ("tool", a.tool),
                ("error_class", a.error_class),
            ] {
                if let Some(v) = v {
                    ep[k] = json!(v);
                }
            }
            Json(&mut *e).remember(ns, &ep.to_string(), None)
        })?;
        answer(&out, "stored", text::remember)
    }

    #[tool(description = "Find the episodes that best answer a query: one line each, with \
        why it ranks (BM25 and E5 cosine fused, recency); the structured content has every \
        score. Report how the task went with outcome and the retrieval id.",
        output_schema = schema(&[("hits", "array"), ("window", "object|null"), ("retrievalId", "integer|null")]))]
    fn recall(&self, Parameters(a): Parameters<RecallArgs>) -> Answer {
        let k = a.k.unwrap_or(5).clamp(1, 100);
        let q = json!({"text": a.query, "k": k, "includeCold": a.include_cold});
        let out =
            self.with_engine(|e, ns, now| Json(&mut *e).recall(ns, &q.to_string(), now, None))?;
        answer(&out, "hits", text::recall)
    }

    #[tool(description = "Assemble the memory to put in front of the model for a task: \
        active rules (whole, first), facts, the relevant episodes and observations, each \
        section within its token cap. The text is ready for a system prompt; each withheld id \
        can be fetched with expand.",
        output_schema = schema(&[("sections", "array"), ("withheld", "array"), ("text", "string")]))]
    fn context(&self, Parameters(a): Parameters<ContextArgs>) -> Answer {
        let mut req = json!({"task": a.task});
        if let Some(b) = a.budget {
            req["total"] = json!(b);
        }
        if let Some(l) = a.level {
            req["level"] = json!(l);
        }
        if let Some(t) = a.task_id {
            req["taskId"] = json!(t);
        }
        let out =
            self.with_engine(|e, ns, now| Json(&mut *e).context(ns, &req.to_string(), now))?;
        answer(&out, "context", text::context)
    }

    #[tool(description = "Start a task's working memory: the task's content, then its steps \
        (task_step), capped in tokens; when the cap is crossed the oldest steps are summarised, \
        never cut. Pass the task_id to context to include it. It lives in this server's \
        process only and is discarded by task_end.",
        output_schema = schema(&[("task", "string"), ("steps", "array")]))]
    fn task_start(&self, Parameters(a): Parameters<TaskStartArgs>) -> Answer {
        let cap = a.cap.map(|c| c as usize);
        let out =
            self.with_engine(|e, ns, _| Json(&mut *e).task_start(ns, &a.task_id, &a.content, cap))?;
        answer(&out, "working", text::working)
    }

    #[tool(description = "Add a step to a running task's working memory: kind reasoning, \
        tool-result, approval or note. Answers the step's number, the steps folded to stay \
        within the cap and the tokens used.",
        output_schema = schema(&[("n", "integer"), ("folded", "integer")]))]
    fn task_step(&self, Parameters(a): Parameters<TaskStepArgs>) -> Answer {
        let out =
            self.with_engine(|e, ns, _| Json(&mut *e).task_step(ns, &a.task_id, &a.kind, &a.text))?;
        answer(&out, "step", text::step)
    }

    #[tool(description = "End a task: its working memory is discarded and returned one last \
        time. Remember what is worth keeping as an episode, and send signals for what the user \
        changed.",
        output_schema = schema(&[("task", "string"), ("steps", "array")]))]
    fn task_end(&self, Parameters(a): Parameters<TaskEndArgs>) -> Answer {
        let out = self.with_engine(|e, ns, _| Json(&mut *e).task_end(ns, &a.task_id))?;
        answer(&out, "working", text::working)
    }

    #[tool(description = "The full text behind an id that a context listed as withheld \
        (episode:42, rule:3, fact:KEY, observation:7, transcript:N, working:TASK).",
        output_schema = schema(&[("text", "string")]))]
    fn expand(&self, Parameters(a): Parameters<ExpandArgs>) -> Answer {
        let out = self.with_engine(|e, ns, _| Json(&mut *e).expand(ns, &a.id))?;
        answer(&out, "text", text::expand)
    }

    #[tool(description = "Record one behaviour signal (the user edited, rejected, deferred or \
        accepted what the agent did). Repeated signals become observations, and observations \
        the user confirms become rules. Stored as the agent's report (source `agent`, whatever \
        the signal says): a rule comes of an agent's signals only when the user confirms it.",
        output_schema = schema(&[("id", "integer")]))]
    fn signal(&self, Parameters(a): Parameters<SignalArgs>) -> Answer {
        let out = self.with_engine(|e, ns, _| {
            e.signal_json_from(ns, &a.signal.to_string(), Reporter::Agent)
        })?;
        answer(&out, "id", text::id)
    }

    #[tool(description = "Report how the task a recall or context served went: success, \
        failure or partial, with its retrieval id. An episode that keeps preceding failures is \
        ranked lower; an agent's reports never demote a rule the user taught.",
        output_schema = schema(&[("ok", "boolean")]))]
    fn outcome(&self, Parameters(a): Parameters<OutcomeArgs>) -> Answer {
        let outcome: Outcome = a.outcome.parse().map_err(failure)?;
        self.with_engine(|e, ns, now| {
            e.outcome_from(ns, a.retrieval_id, outcome, now, Reporter::Agent)
        })?;
        answer(r#"{"ok": true}"#, "ok", text::ok)
    }

    #[tool(description = "List the facts that hold now (key: value, source, confidence, \
        version).",
        output_schema = schema(&[("facts", "array")]))]
    fn facts(&self) -> Answer {
        let out = self.with_engine(|e, ns, now| Json(&*e).facts(ns, now, false))?;
        answer(&out, "facts", text::facts)
    }

    #[tool(description = "Read one fact by key.",
        output_schema = schema(&[("fact", "object|null")]))]
    fn fact_get(&self, Parameters(a): Parameters<FactGetArgs>) -> Answer {
        let out = self.with_engine(|e, ns, now| Json(&*e).fact(ns, &a.key, now, false))?;
        answer(&format!("{{\"fact\": {out}}}"), "fact", |v| text::fact(&v["fact"]))
    }

    #[tool(description = "Every version of one fact, oldest first, with who set it.",
        output_schema = schema(&[("versions", "array")]))]
    fn fact_history(&self, Parameters(a): Parameters<FactHistoryArgs>) -> Answer {
        let out = self.with_engine(|e, ns, _| Json(&*e).fact_history(ns, &a.key))?;
        answer(&out, "versions", text::facts)
    }

    #[tool(description = "Set a fact as the agent learned it (source implicit: it never \
        overrides what the user or an administrator set). Answers written, confirmed or \
        refused.",
        output_schema = schema(&[("result", "string")]))]
    fn fact_set(&self, Parameters(a): Parameters<FactSetArgs>) -> Answer {
        let origin = untrusted_origin(a.origin.as_deref())?;
        let mut f = json!({"key": a.key, "value": a.value, "source": "implicit",
            "origin": origin});
        if let Some(c) = a.confidence {
            f["confidence"] = mnemo_json::value(c);
        }
        if let Some(p) = a.policy {
            f["policy"] = json!(p);
        }
        let out = self.with_engine(|e, ns, now| Json(&mut *e).set_fact(ns, &f.to_string(), now))?;
        answer(&out, "result", text::fact_set)
    }

    #[tool(description = "Assert an entity triple (subject, predicate, object) as the agent \
        learned it (source implicit: it never ends a triple the user or an administrator \
        asserted). An agreeing assertion raises its confidence; a contradicting one ends it.",
        output_schema = schema(&[("subject", "string"), ("predicate", "string"), ("object", "string")]))]
    fn triple_set(&self, Parameters(a): Parameters<TripleSetArgs>) -> Answer {
        let t = json!({"subject": a.subject, "predicate": a.predicate, "object": a.object,
            "confidence": mnemo_json::value(a.confidence.unwrap_or(1.0)), "source": "implicit"});
        let out =
            self.with_engine(|e, ns, now| Json(&mut *e).assert_triple(ns, &t.to_string(), now))?;
        answer(&out, "triple", text::triple)
    }

    #[tool(description = "The triples about a subject that hold now (with history, the ended \
        ones too).",
        output_schema = schema(&[("triples", "array")]))]
    fn triples(&self, Parameters(a): Parameters<TriplesArgs>) -> Answer {
        let out = self.with_engine(|e, ns, _| Json(&*e).triples(ns, &a.subject, a.history))?;
        answer(&out, "triples", text::triples)
    }

    #[tool(description = "Tell the engine whether an observation is right or wrong. Wrong is \
        final: the observation never comes back. Only offered when the server was started \
        with --allow-destructive.",
        output_schema = schema(&[("observation", "object")]))]
    fn feedback(&self, Parameters(a): Parameters<FeedbackArgs>) -> Answer {
        let out = self
            .with_engine(|e, ns, now| Json(&mut *e).feedback(ns, a.observation, &a.verdict, now))?;
        answer(&out, "feedback", text::feedback)
    }

    #[tool(description = "Erase memories for good: one subject, one episode, or the whole \
        namespace, across every layer, with a receipt. Only offered when the server was \
        started with --allow-destructive.",
        output_schema = schema(&[("scope", "string"), ("layers", "array"), ("verification", "object")]))]
    fn forget(&self, Parameters(a): Parameters<ForgetArgs>) -> Answer {
        let what = json!({"scope": a.scope, "subject": a.subject, "id": a.id, "also": a.also,
            "force": a.force, "dryRun": a.dry_run});
        let out = self.with_engine(|e, ns, now| Json(&mut *e).erase(ns, &what.to_string(), now))?;
        answer(&out, "receipt", text::receipt)
    }

    #[tool(description = "Rectify one episode: its text (and lesson) replaced under the same \
        id, what derives from it erased, with a receipt. Only offered when the server was \
        started with --allow-destructive.",
        output_schema = schema(&[("scope", "string"), ("layers", "array"), ("verification", "object")]))]
    fn correct(&self, Parameters(a): Parameters<CorrectArgs>) -> Answer {
        let fix = json!({"text": a.text, "verdict": a.verdict});
        let out =
            self.with_engine(|e, ns, now| Json(&mut *e).correct(ns, a.id, &fix.to_string(), now))?;
        answer(&out, "receipt", text::receipt)
    }

    #[tool(description = "Change an episode's status: raw, active, superseded or rejected \
        (rejected and superseded episodes leave recall). Only offered when the server was \
        started with --allow-destructive.",
        output_schema = schema(&[("ok", "boolean")]))]
    fn episode_status(&self, Parameters(a): Parameters<StatusArgs>) -> Answer {
        let out = self.with_engine(|e, ns, _| Json(&mut *e).set_status(ns, a.id, &a.status))?;
        answer(&out, "ok", text::ok)
    }

    #[tool(description = "Change a rule's status: candidate, active or demoted (a rule \
        leaving the active set gives back the rules it absorbed). Only offered when the server \
        was started with --allow-destructive.",
        output_schema = schema(&[("ok", "boolean")]))]
    fn rule_status(&self, Parameters(a): Parameters<StatusArgs>) -> Answer {
        let out =
            self.with_engine(|e, ns, now| Json(&mut *e).set_rule_status(ns, a.id, &a.status, now))?;
        answer(&out, "ok", text::ok)
    }

    #[tool(description = "Make an earlier version of a fact current again (written as a new \
        version). Only offered when the server was started with --allow-destructive.",
        output_schema = schema(&[("version", "integer")]))]
    fn fact_rollback(&self, Parameters(a): Parameters<FactRollbackArgs>) -> Answer {
        let out =
            self.with_engine(|e, ns, now| Json(&mut *e).rollback_fact(ns, &a.key, a.version, now))?;
        answer(&out, "version", text::rollback)
    }

    #[tool(description = "Everything held for this user, readable (the right of access): \
        episodes, facts, triples, rules, signals, observations. Only offered when the server \
        was started with --allow-destructive.",
        output_schema = schema(&[("episodes", "array"), ("facts", "array"), ("rules", "array")]))]
    fn export(&self) -> Answer {
        let out = self.with_engine(|e, ns, now| Json(&*e).export_readable(ns, now))?;
        answer(&out, "export", text::export)
    }
}

const RULES: &str = "mnemo://rules";
const OBSERVATIONS: &str = "mnemo://observations";

fn resource(uri: &str, name: &str, description: &str) -> Resource {
    Resource::new(uri, name).with_description(description).with_mime_type("application/json")
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Memory {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("mnemo", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Long-term memory. Call `context` with the task before acting and put its \
                 `text` in front of the model; `remember` what happened afterwards (with its \
                 outcome and lesson); `signal` what the user changed. Rules and observations \
                 are resources.",
            )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            resource(RULES, "rules", "The active rules, injected whole into every context"),
            resource(
                OBSERVATIONS,
                "observations",
                "The open observations: patterns seen in the user's behaviour, not yet rules",
            ),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = match request.uri.as_str() {
            RULES => self.with_engine(|e, ns, _| Json(&*e).rules(ns, &["active".to_string()])),
            OBSERVATIONS => {
                self.with_engine(|e, ns, _| Json(&*e).observations(ns, &["open".to_string()]))
            }
            other => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {other}: there are {RULES} and {OBSERVATIONS}"),
                    None,
                ))
            }
        }
        .map_err(|m| ErrorData::internal_error(m, None))?;
        let mut contents = ResourceContents::text(text, request.uri);
        if let ResourceContents::TextResourceContents { mime_type, .. } = &mut contents {
            *mime_type = Some("application/json".into());
        }
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
