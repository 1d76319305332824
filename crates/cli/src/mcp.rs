//! `mnemo mcp`: the memory as a Model Context Protocol server on stdin/stdout, for agent hosts
//! (Claude Desktop, IDEs, any MCP client). Built on the `rmcp` SDK: newline-delimited JSON-RPC
//! on stdout, nothing else (diagnostics go to stderr).
//!
//! - **Tools**: `remember`, `recall`, `context`, `expand`, `signal`, `facts`, `fact_get`,
//!   `fact_set`, `task_start`, `task_step`, `task_end`; with `--allow-destructive` also `feedback` (a wrong observation never comes
//!   back) and `forget` (erasure). A prompt-injected agent must not be able to erase a user or
//!   teach the engine, so those two are not even listed without the flag.
//! - **Resources**: `mnemo://rules` (the active rules) and `mnemo://observations` (the open
//!   observations), as JSON.
//! - **Trust**: the server cannot tell who typed what it is sent, so nothing it writes claims
//!   the user's or an administrator's authority: episodes and facts are written with origin
//!   `agent` unless the caller names an untrusted one (tool, web, email), and a fact from an
//!   untrusted origin is `implicit`, the lowest source (it never overrides what the user said).
//! - **Sharing the store**: each request takes the store's lock, answers and releases it, so
//!   the lock is held only during a request and other `mnemo` commands can use the same
//!   directory while the server runs (a request that finds the store busy waits up to 5 s).
//!   The engine stays loaded between requests and is opened again (its log replayed) only when
//!   another process wrote meanwhile ([`FileStore::reacquire`]). The model is loaded once, when
//!   the server starts.
//! - **Working memory** (`task_start`, `task_step`, `task_end`, and `context`'s `task_id`)
//!   lives in this process: it is carried over when the store is read again, and gone when the
//!   server stops.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mnemo::store::file::FileStore;
use mnemo::{Config, Embedder, Engine, Role};
use mnemo_embed::BertEmbedder;
use mnemo_json::Json;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    Implementation, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::globals::Globals;

/// `mnemo mcp`'s own options.
#[derive(clap::Args, Debug)]
pub struct Mcp {
    /// Also offer the tools that erase memories (`forget`) or teach the engine (`feedback`).
    /// Leave it off for agents that read untrusted text: an injected instruction could
    /// otherwise erase a user or reject what the user taught
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
            .serve(rmcp::transport::stdio())
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

/// How long a request waits for a store another process holds.
const BUSY_WAIT: Duration = Duration::from_secs(5);

impl Memory {
    fn new(g: &Globals, embedder: Option<BertEmbedder>, allow_destructive: bool) -> Self {
        let model = embedder.map(|e| {
            let (id, dim, max) = (e.model_id().to_string(), e.dim(), e.max_tokens());
            SharedModel(Arc::new(Mutex::new(e)), id, dim, max)
        });
        let mut tool_router = Self::tool_router();
        if !allow_destructive {
            tool_router.remove_route("forget");
            tool_router.remove_route("feedback");
        }
        Memory { store: g.store.clone(), ns: g.ns.clone(), at: g.at, model, tool_router }
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
                    Err(e) if busy(&started, &e) => std::thread::sleep(Duration::from_millis(50)),
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

    /// Opens the store (waiting up to [`BUSY_WAIT`] from `started` while another process holds
    /// it) and an engine on it with the shared model.
    fn open_engine(&self, started: &Instant) -> Result<Engine<FileStore>, String> {
        std::fs::create_dir_all(&self.store)
            .map_err(|e| format!("{}: {e}", self.store.display()))?;
        let store = loop {
            match FileStore::open(&self.store) {
                Ok(s) => break s,
                Err(e) if busy(started, &e) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(failure(e)),
            }
        };
        let mut engine = Engine::new(store, Config::default());
        if let Some(m) = &self.model {
            engine = engine.with_embedder(Box::new(m.clone()));
        }
        Ok(engine)
    }
}

/// True while a request that found the store held by another process should wait for it.
fn busy(started: &Instant, e: &mnemo::Error) -> bool {
    matches!(e, mnemo::Error::Locked { .. }) && started.elapsed() < BUSY_WAIT
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

#[derive(Deserialize, JsonSchema)]
struct RememberArgs {
    /// What happened, in a sentence or a paragraph.
    text: String,
    /// success, failure or partial, when the episode was an attempt.
    #[serde(default)]
    outcome: Option<String>,
    /// The lesson: why it went that way, what to do next time.
    #[serde(default)]
    verdict: Option<String>,
    /// People, companies, repositories or other things it is about (the first is the contact).
    #[serde(default)]
    entities: Vec<String>,
    /// Free labels to filter on.
    #[serde(default)]
    tags: Vec<String>,
    /// The tool involved, if any (part of the situation lessons are keyed by).
    #[serde(default)]
    tool: Option<String>,
    /// The kind of error, if it failed (part of the situation lessons are keyed by).
    #[serde(default)]
    error_class: Option<String>,
    /// Where the text comes from: agent (the default), tool, web or email. Text from a tool,
    /// a web page or an email is stored as untrusted data, never followed as an instruction.
    #[serde(default)]
    origin: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct RecallArgs {
    /// The question or situation, in natural language; time expressions such as "last week"
    /// narrow the search to that window.
    query: String,
    /// How many episodes to return (default 5, at most 100).
    #[serde(default)]
    k: Option<u32>,
    /// Also search the records that compaction or a rule took out of recall.
    #[serde(default)]
    include_cold: bool,
}

#[derive(Deserialize, JsonSchema)]
struct ContextArgs {
    /// The task at hand: the new email, the user's request.
    task: String,
    /// Everything but the response buffer fits this many tokens (default 9,600).
    #[serde(default)]
    budget: Option<u32>,
    /// Disclosure level: 1 (rules, facts, episodes), 2 (+ observations), 3 (+ full history);
    /// chosen from the task when absent.
    #[serde(default)]
    level: Option<u8>,
    /// A running task (task_start) whose working memory goes in the working section.
    #[serde(default)]
    task_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct TaskStartArgs {
    /// The task's id, chosen by the caller (unique among running tasks).
    task_id: String,
    /// What the task is: the request, the email to answer.
    content: String,
    /// The working memory's cap in tokens (default 4,000).
    #[serde(default)]
    cap: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
struct TaskStepArgs {
    /// The running task's id.
    task_id: String,
    /// reasoning, tool-result, approval or note.
    kind: String,
    /// The step.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct TaskEndArgs {
    /// The running task's id.
    task_id: String,
}

#[derive(Deserialize, JsonSchema)]
struct ExpandArgs {
    /// An id from a context's withheld list: episode:42, rule:3, fact:KEY, observation:7,
    /// transcript:N, working:TASK.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct SignalArgs {
    /// One behaviour signal: {"ts", "kind" (edited, rejected, deferred, accepted, …), "agent",
    /// "situation": {…}, "before", "after"}. Repeated signals become observations.
    signal: Value,
}

#[derive(Deserialize, JsonSchema)]
struct FactGetArgs {
    /// The fact's key, e.g. "language".
    key: String,
}

#[derive(Deserialize, JsonSchema)]
struct FactSetArgs {
    /// The fact's key, e.g. "language".
    key: String,
    /// Its new value.
    value: String,
    /// How sure, from 0 to 1 (default 1).
    #[serde(default)]
    confidence: Option<f32>,
    /// auto-inject (the default), sensitive or never-inject.
    #[serde(default)]
    policy: Option<String>,
    /// agent (the default), tool, web or email. Such a fact is `implicit`: it never overrides
    /// what the user or an administrator set.
    #[serde(default)]
    origin: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct FeedbackArgs {
    /// The observation's id (from the observations resource or a context).
    observation: u64,
    /// right or wrong; wrong is final: the observation never comes back.
    verdict: String,
}

#[derive(Deserialize, JsonSchema)]
struct ForgetArgs {
    /// subject (every record that names it), episode (one memory and what derives from it) or
    /// namespace (everything held for this user).
    scope: String,
    /// The subject's name, for scope subject.
    #[serde(default)]
    subject: Option<String>,
    /// The episode's id, for scope episode.
    #[serde(default)]
    id: Option<u64>,
}

#[tool_router(router = tool_router)]
impl Memory {
    /// Store one episode (something that happened). Returns {stored, id, importance, reason}.
    #[tool(description = "Store one episode (something that happened) in long-term memory. \
        Returns {stored, id, importance, reason}; routine or secret-bearing text may be \
        discarded or masked.")]
    fn remember(&self, Parameters(a): Parameters<RememberArgs>) -> Result<String, String> {
        let origin = untrusted_origin(a.origin.as_deref())?;
        self.with_engine(|e, ns, now| {
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
        })
    }

    #[tool(description = "Find the episodes that best answer a query, each with its score \
        explained (BM25 and E5 cosine fused, times recency and importance). Returns {hits, \
        window, retrievalId}.")]
    fn recall(&self, Parameters(a): Parameters<RecallArgs>) -> Result<String, String> {
        let k = a.k.unwrap_or(5).clamp(1, 100);
        let q = json!({"text": a.query, "k": k, "includeCold": a.include_cold});
        self.with_engine(|e, ns, now| Json(&mut *e).recall(ns, &q.to_string(), now, None))
    }

    #[tool(description = "Assemble the memory to put in front of the model for a task: \
        active rules (whole, first), facts, the relevant episodes and observations, each \
        section within its token cap. Returns {sections, withheld, tokens, disclosure, text}; \
        `text` is ready for a system prompt, and each withheld id can be fetched with expand.")]
    fn context(&self, Parameters(a): Parameters<ContextArgs>) -> Result<String, String> {
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
        self.with_engine(|e, ns, now| Json(&mut *e).context(ns, &req.to_string(), now))
    }

    #[tool(description = "Start a task's working memory: the task's content, then its steps \
        (task_step), capped in tokens; when the cap is crossed the oldest steps are summarised, \
        never cut. Pass the task_id to context to include it. It lives in this server's \
        process only and is discarded by task_end. Returns the working memory.")]
    fn task_start(&self, Parameters(a): Parameters<TaskStartArgs>) -> Result<String, String> {
        let cap = a.cap.map(|c| c as usize);
        self.with_engine(|e, ns, _| Json(&mut *e).task_start(ns, &a.task_id, &a.content, cap))
    }

    #[tool(description = "Add a step to a running task's working memory: kind reasoning, \
        tool-result, approval or note. Returns {n, folded, tokens} (folded: steps summarised \
        to stay within the cap).")]
    fn task_step(&self, Parameters(a): Parameters<TaskStepArgs>) -> Result<String, String> {
        self.with_engine(|e, ns, _| Json(&mut *e).task_step(ns, &a.task_id, &a.kind, &a.text))
    }

    #[tool(description = "End a task: its working memory is discarded and returned one last \
        time. Remember what is worth keeping as an episode, and send signals for what the user \
        changed.")]
    fn task_end(&self, Parameters(a): Parameters<TaskEndArgs>) -> Result<String, String> {
        self.with_engine(|e, ns, _| Json(&mut *e).task_end(ns, &a.task_id))
    }

    #[tool(description = "The full text behind an id that a context listed as withheld \
        (episode:42, rule:3, fact:KEY, observation:7, transcript:N, working:TASK).")]
    fn expand(&self, Parameters(a): Parameters<ExpandArgs>) -> Result<String, String> {
        self.with_engine(|e, ns, _| e.expand(ns, &a.id))
    }

    #[tool(description = "Record one behaviour signal (the user edited, rejected, deferred or \
        accepted what the agent did). Repeated signals become observations, and observations \
        the user confirms become rules. Returns {id}.")]
    fn signal(&self, Parameters(a): Parameters<SignalArgs>) -> Result<String, String> {
        self.with_engine(|e, ns, _| e.signal_json(ns, &a.signal.to_string()))
    }

    #[tool(description = "List the facts that hold now (key, value, source, confidence, \
        policy, version).")]
    fn facts(&self) -> Result<String, String> {
        self.with_engine(|e, ns, now| Json(&*e).facts(ns, now, false))
    }

    #[tool(description = "Read one fact by key (null when none holds).")]
    fn fact_get(&self, Parameters(a): Parameters<FactGetArgs>) -> Result<String, String> {
        self.with_engine(|e, ns, now| Json(&*e).fact(ns, &a.key, now, false))
    }

    #[tool(description = "Set a fact as the agent learned it (source implicit: it never \
        overrides what the user or an administrator set). Returns {result: written | \
        confirmed | refused, …}.")]
    fn fact_set(&self, Parameters(a): Parameters<FactSetArgs>) -> Result<String, String> {
        let origin = untrusted_origin(a.origin.as_deref())?;
        let mut f = json!({"key": a.key, "value": a.value, "source": "implicit",
            "origin": origin});
        if let Some(c) = a.confidence {
            f["confidence"] = json!(c);
        }
        if let Some(p) = a.policy {
            f["policy"] = json!(p);
        }
        self.with_engine(|e, ns, now| Json(&mut *e).set_fact(ns, &f.to_string(), now))
    }

    #[tool(description = "Tell the engine whether an observation is right or wrong. Wrong is \
        final: the observation never comes back. Only offered when the server was started \
        with --allow-destructive.")]
    fn feedback(&self, Parameters(a): Parameters<FeedbackArgs>) -> Result<String, String> {
        self.with_engine(|e, ns, now| Json(&mut *e).feedback(ns, a.observation, &a.verdict, now))
    }

    #[tool(description = "Erase memories for good: one subject, one episode, or the whole \
        namespace, across every layer, with a receipt. Only offered when the server was \
        started with --allow-destructive.")]
    fn forget(&self, Parameters(a): Parameters<ForgetArgs>) -> Result<String, String> {
        let what = json!({"scope": a.scope, "subject": a.subject, "id": a.id});
        self.with_engine(|e, ns, now| Json(&mut *e).erase(ns, &what.to_string(), now))
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
