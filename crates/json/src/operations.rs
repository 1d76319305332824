//! Every operation the surfaces share, declared once: its name, what it does, its name on each
//! surface (the JS package, the WIT component, the CLIs, MCP) and how a JSON object of
//! arguments maps onto it. From the declarations come [`OPERATIONS`] (the registry
//! `crates/cli/tests/surfaces.rs` walks, failing when a surface lacks one) and
//! [`Json::call`] (the dispatch by name).
//!
//! A surface may leave an operation out only with a written reason ([`Cli::Omitted`],
//! [`Mcp::Omitted`]); MCP offers the operations that erase, rewrite, export or change what
//! the user taught only with `--allow-destructive` ([`Mcp::Destructive`]).

use std::ops::DerefMut;

use mnemo::error::{Error, Result};
use mnemo::store::KvStore;
use mnemo::Engine;
use serde_json::Value;

use crate::Json;

/// One operation in the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// Its name (snake_case), also the name [`Json::call`] takes.
    pub name: &'static str,
    /// What it does, in a line.
    pub summary: &'static str,
    /// The method of the JS package's `Mnemo` class (and of the wasm `WasmEngine`).
    pub js: &'static str,
    /// The function of `wit/engine.wit`'s `engine` interface.
    pub wit: &'static str,
    /// The command of `mnemo` and `mnemo-host` (which share their command line).
    pub cli: Cli,
    /// The MCP server's tool or resource.
    pub mcp: Mcp,
}

/// Where an operation is on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    /// The command's words (`"fact set"`).
    Command(&'static str),
    /// Left out, and why.
    Omitted(&'static str),
}

/// Where an operation is in the MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mcp {
    /// A tool every client sees.
    Tool(&'static str),
    /// A tool offered only with `--allow-destructive`: it erases, rewrites or exports what is
    /// stored, or changes what the user taught.
    Destructive(&'static str),
    /// A resource (`mnemo://…`).
    Resource(&'static str),
    /// Left out, and why.
    Omitted(&'static str),
}

/// The arguments of a [`Json::call`]: a JSON object, read by name.
struct Args<'a>(&'a Value);

impl Args<'_> {
    fn field(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    fn missing(name: &str, what: &str) -> Error {
        Error::InvalidInput(format!("argument \"{name}\" is missing or not {what}"))
    }

    fn text(&self, name: &str) -> Result<&str> {
        self.field(name).and_then(Value::as_str).ok_or_else(|| Self::missing(name, "a string"))
    }

    fn text_or<'b>(&'b self, name: &str, default: &'b str) -> Result<&'b str> {
        match self.field(name) {
            None => Ok(default),
            Some(v) => v.as_str().ok_or_else(|| Self::missing(name, "a string")),
        }
    }

    /// An object argument, as JSON text (the facade's methods take objects as text).
    fn object(&self, name: &str) -> Result<String> {
        match self.field(name) {
            Some(v @ Value::Object(_)) => Ok(v.to_string()),
            _ => Err(Self::missing(name, "an object")),
        }
    }

    /// The arguments as JSON text, without `name` (an id the method takes on its own).
    fn without(&self, name: &str) -> String {
        let mut v = self.0.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove(name);
        }
        v.to_string()
    }

    fn id(&self, name: &str) -> Result<u64> {
        self.field(name).and_then(Value::as_u64).ok_or_else(|| Self::missing(name, "an id"))
    }

    fn count(&self, name: &str) -> Result<Option<u64>> {
        self.field(name)
            .map(|v| v.as_u64().ok_or_else(|| Self::missing(name, "a whole number")))
            .transpose()
    }

    fn flag(&self, name: &str) -> Result<bool> {
        self.field(name)
            .map_or(Ok(false), |v| v.as_bool().ok_or_else(|| Self::missing(name, "true or false")))
    }

    fn names(&self, name: &str) -> Result<Vec<String>> {
        let Some(v) = self.field(name) else { return Ok(Vec::new()) };
        let list = v.as_array().ok_or_else(|| Self::missing(name, "a list of names"))?;
        list.iter()
            .map(|x| {
                x.as_str().map(str::to_string).ok_or_else(|| Self::missing(name, "a list of names"))
            })
            .collect()
    }

    fn vector(&self, name: &str) -> Result<Option<Vec<f32>>> {
        let Some(v) = self.field(name) else { return Ok(None) };
        let list = v.as_array().ok_or_else(|| Self::missing(name, "a list of numbers"))?;
        list.iter()
            .map(|x| {
                x.as_f64().map(|f| f as f32).ok_or_else(|| Self::missing(name, "a list of numbers"))
            })
            .collect::<Result<Vec<f32>>>()
            .map(Some)
    }

    fn vectors(&self, name: &str) -> Result<Option<Vec<Vec<f32>>>> {
        let Some(v) = self.field(name) else { return Ok(None) };
        let list = v.as_array().ok_or_else(|| Self::missing(name, "a list of vectors"))?;
        list.iter()
            .map(|x| Args(x).vector_of().ok_or_else(|| Self::missing(name, "a list of vectors")))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    fn vector_of(&self) -> Option<Vec<f32>> {
        self.0.as_array()?.iter().map(|x| x.as_f64().map(|f| f as f32)).collect()
    }

    fn bytes(&self, name: &str) -> Result<Vec<u8>> {
        let list = self.field(name).and_then(Value::as_array);
        let list = list.ok_or_else(|| Self::missing(name, "a list of bytes"))?;
        list.iter()
            .map(|x| {
                x.as_u64()
                    .and_then(|b| u8::try_from(b).ok())
                    .ok_or_else(|| Self::missing(name, "a list of bytes"))
            })
            .collect()
    }
}

macro_rules! operations {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident { js: $js:literal, wit: $wit:literal, cli: $cli:expr, mcp: $mcp:expr }
        => |$j:ident, $ns:ident, $a:ident, $now:ident| $call:expr;
    )*) => {
        /// Every operation the surfaces share (module docs).
        pub const OPERATIONS: &[Operation] = &[$(
            Operation {
                name: stringify!($name),
                summary: concat!($($doc),+),
                js: $js,
                wit: $wit,
                cli: $cli,
                mcp: $mcp,
            },
        )*];

        impl<S: KvStore, R: DerefMut<Target = Engine<S>>> Json<R> {
            /// Runs operation `op` (a name in [`OPERATIONS`]) in namespace `ns` with its
            /// arguments as one JSON object (`{"text": …, "k": 3}` for `recall`, whose query is
            /// the object itself); answers as the operation's own method does.
            pub fn call(&mut self, op: &str, ns: &str, args: &Value, now: i64) -> Result<String> {
                let args = Args(args);
                match op {
                    $(stringify!($name) => {
                        #[allow(unused_variables)]
                        let ($j, $ns, $a, $now) = (&mut *self, ns, &args, now);
                        $call
                    })*
                    other => Err(Error::InvalidInput(format!(
                        "no operation {other:?}: see mnemo_json::OPERATIONS for their names"
                    ))),
                }
            }
        }
    };
}

use Cli::{Command, Omitted as NoCli};
use Mcp::{Destructive, Omitted as NoMcp, Resource, Tool};

const WORKING: &str = "working memory lives in one process, and each command is a process of \
    its own: the task would end with the command (the MCP server keeps it)";

operations! {
    /// Store one episode (something that happened), embedding it unless a vector comes with it.
    remember { js: "remember", wit: "remember", cli: Command("remember"), mcp: Tool("remember") }
    => |j, ns, a, now| {
        let episode = a.object("episode")?;
        crate::memory::check_not_future(&episode, now)?;
        j.remember(ns, &episode, a.vector("vector")?.as_deref())
    };

    /// Store JSON Lines of episodes, all or nothing; lines imported before are skipped.
    ingest { js: "ingest", wit: "ingest", cli: Command("ingest"),
        mcp: NoMcp("a bulk import for hosts; an agent remembers each episode as it happens") }
    => |j, ns, a, now| {
        let vectors = a.vectors("vectors")?;
        j.ingest(ns, a.text("jsonl")?, a.text_or("origin", "unknown")?, now, vectors.as_deref())
    };

    /// Find the episodes that best answer a query, each with its score explained.
    recall { js: "recall", wit: "recall", cli: Command("recall"), mcp: Tool("recall") }
    => |j, ns, a, now| j.recall(ns, &a.0.to_string(), now, a.vector("vector")?);

    /// Change an episode's status (raw, active, superseded, rejected).
    set_status { js: "setStatus", wit: "set-status", cli: Command("status"),
        mcp: Destructive("episode_status") }
    => |j, ns, a, now| j.set_status(ns, a.id("id")?, a.text("status")?);

    /// The latest episodes before a time, oldest first.
    timeline { js: "timeline", wit: "timeline", cli: Command("timeline"),
        mcp: NoMcp("recall answers a question; a page of raw history is not worth a model's tokens") }
    => |j, ns, a, now| {
        let limit = a.count("limit")?.unwrap_or(20) as usize;
        let before = a.count("before")?.map_or(i64::MAX, |b| i64::try_from(b).unwrap_or(i64::MAX));
        j.timeline(ns, before, limit)
    };

    /// Set a fact (a key with a versioned value), with its source, origin and policy.
    set_fact { js: "setFact", wit: "set-fact", cli: Command("fact set"), mcp: Tool("fact_set") }
    => |j, ns, a, now| j.set_fact(ns, &a.0.to_string(), now);

    /// The value of one fact that holds now (null when none does).
    fact { js: "fact", wit: "fact", cli: Command("fact get"), mcp: Tool("fact_get") }
    => |j, ns, a, now| j.fact(ns, a.text("key")?, now, a.flag("all")?);

    /// Every fact that holds now.
    facts { js: "facts", wit: "facts", cli: Command("facts"), mcp: Tool("facts") }
    => |j, ns, a, now| j.facts(ns, now, a.flag("all")?);

    /// Every version of one fact, oldest first.
    fact_history { js: "factHistory", wit: "fact-history", cli: Command("fact history"),
        mcp: Tool("fact_history") }
    => |j, ns, a, now| j.fact_history(ns, a.text("key")?);

    /// A fact back at an earlier version (written as a new version).
    rollback_fact { js: "rollbackFact", wit: "rollback-fact", cli: Command("fact rollback"),
        mcp: Destructive("fact_rollback") }
    => |j, ns, a, now| {
        let version = a.id("version")?;
        let version = u32::try_from(version).map_err(|_| Args::missing("version", "a version"))?;
        j.rollback_fact(ns, a.text("key")?, version, now)
    };

    /// Assert (subject, predicate, object): agreeing assertions raise its confidence, a
    /// contradicting one ends the current triple.
    assert_triple { js: "assertTriple", wit: "assert-triple", cli: Command("triple set"),
        mcp: Tool("triple_set") }
    => |j, ns, a, now| j.assert_triple(ns, &a.0.to_string(), now);

    /// The triples about a subject that hold now (with history, the ended ones too).
    triples { js: "triples", wit: "triples", cli: Command("triples"), mcp: Tool("triples") }
    => |j, ns, a, now| j.triples(ns, a.text("subject")?, a.flag("history")?);

    /// Add a rule (an instruction injected whole into every context); only the user or an
    /// administrator may.
    add_rule { js: "addRule", wit: "add-rule", cli: Command("rule add"),
        mcp: NoMcp("rules come only from the user or an administrator, and an MCP client is an agent: the server cannot tell who typed what it is sent") }
    => |j, ns, a, now| j.add_rule(ns, a.text("text")?, a.text_or("observation", "")?,
        a.text_or("status", "active")?, a.text_or("origin", "unknown")?, now);

    /// The rules with the given statuses (all when none is given).
    rules { js: "rules", wit: "rules", cli: Command("rules"), mcp: Resource("mnemo://rules") }
    => |j, ns, a, now| j.rules(ns, &a.names("statuses")?);

    /// Change a rule's status: retire or demote an active rule, activate a candidate.
    set_rule_status { js: "setRuleStatus", wit: "set-rule-status", cli: Command("rule status"),
        mcp: Destructive("rule_status") }
    => |j, ns, a, now| j.set_rule_status(ns, a.id("id")?, a.text("status")?, now);

    /// Record one behaviour signal (the user edited, rejected, deferred or accepted something).
    signal { js: "signal", wit: "signal", cli: Command("signal"), mcp: Tool("signal") }
    => |j, ns, a, now| j.signal(ns, &a.object("signal")?);

    /// Record many behaviour signals, one JSON object per line.
    signals { js: "signals", wit: "signals", cli: Command("signals"),
        mcp: NoMcp("a bulk import for hosts; an agent sends each signal as it happens") }
    => |j, ns, a, now| j.signals(ns, a.text("jsonl")?);

    /// Run the pattern detector over the recent signals.
    observe { js: "observe", wit: "observe", cli: Command("observe"),
        mcp: NoMcp("a step of the nightly job, which the host schedules") }
    => |j, ns, a, now| j.observe(ns, now);

    /// The observations with the given statuses (all when none is given).
    observations { js: "observations", wit: "observations", cli: Command("observations"),
        mcp: Resource("mnemo://observations") }
    => |j, ns, a, now| j.observations(ns, &a.names("statuses")?);

    /// The user's verdict on an observation: right (confirmed) or wrong (never comes back).
    feedback { js: "feedback", wit: "feedback", cli: Command("feedback"),
        mcp: Destructive("feedback") }
    => |j, ns, a, now| j.feedback(ns, a.id("id")?, a.text("verdict")?, now);

    /// Promote the observations that qualify to rules.
    promote { js: "promote", wit: "promote", cli: Command("promote"),
        mcp: NoMcp("a step of the nightly job, after the 48-hour wait the user has to reject a lesson") }
    => |j, ns, a, now| j.promote(ns, now);

    /// Report how the task a recall served ended (success, failure or partial).
    outcome { js: "outcome", wit: "outcome", cli: Command("outcome"), mcp: Tool("outcome") }
    => |j, ns, a, now| j.outcome(ns, a.id("retrievalId")?, a.text("outcome")?, now);

    /// Which entries preceded successes and which preceded failures.
    outcome_report { js: "outcomeReport", wit: "outcome-report", cli: Command("report"),
        mcp: NoMcp("a report for the host's operator, not for the model") }
    => |j, ns, a, now| j.outcome_report(ns);

    /// The nightly job (signals → observations → promotion, outcomes, compaction,
    /// consolidation) under a work budget.
    nightly { js: "nightly", wit: "nightly", cli: Command("nightly"),
        mcp: NoMcp("the host schedules it; a model should not spend a turn on it") }
    => |j, ns, a, now| j.nightly(ns, now, a.count("budget")?);

    /// The reports of the nightly runs, oldest first.
    nightly_log { js: "nightlyLog", wit: "nightly-log", cli: Command("nightly-log"),
        mcp: NoMcp("a report for the host's operator, not for the model") }
    => |j, ns, a, now| j.nightly_log(ns);

    /// Counts per tier and status, retrievable and cold, bytes.
    stats { js: "stats", wit: "stats", cli: Command("stats"),
        mcp: NoMcp("a report for the host's operator, not for the model") }
    => |j, ns, a, now| j.stats(ns, now);

    /// Graph builds and snapshots, under a work budget.
    maintain { js: "maintain", wit: "maintain", cli: Command("maintain"),
        mcp: NoMcp("the server maintains its store itself between requests") }
    => |j, ns, a, now| j.maintain(a.flag("force")?, a.count("budget")?);

    /// The memory to put in front of the model for a task, each section within its token cap.
    context { js: "context", wit: "context", cli: Command("context"), mcp: Tool("context") }
    => |j, ns, a, now| j.context(ns, &a.0.to_string(), now);

    /// Start a task's working memory.
    task_start { js: "taskStart", wit: "task-start", cli: NoCli(WORKING), mcp: Tool("task_start") }
    => |j, ns, a, now| {
        let cap = a.count("cap")?.map(|c| c as usize);
        j.task_start(ns, a.text("taskId")?, a.text("content")?, cap)
    };

    /// Add a step to a running task's working memory.
    task_step { js: "taskStep", wit: "task-step", cli: NoCli(WORKING), mcp: Tool("task_step") }
    => |j, ns, a, now| j.task_step(ns, a.text("taskId")?, a.text("kind")?, a.text("text")?);

    /// End a task: its working memory is discarded and returned one last time.
    task_end { js: "taskEnd", wit: "task-end", cli: NoCli(WORKING), mcp: Tool("task_end") }
    => |j, ns, a, now| j.task_end(ns, a.text("taskId")?);

    /// The full text behind an id a context listed as withheld.
    expand { js: "expand", wit: "expand", cli: Command("expand"), mcp: Tool("expand") }
    => |j, ns, a, now| j.expand(ns, a.text("id")?);

    /// The observations most like a text, by cosine × exp(−λ·days).
    recall_observations { js: "recallObservations", wit: "recall-observations",
        cli: Command("observations"), mcp: Resource("mnemo://observations") }
    => |j, ns, a, now| {
        let k = a.count("k")?.unwrap_or(5) as usize;
        j.recall_observations(ns, a.text("text")?, a.vector("vector")?.as_deref(), k, now)
    };

    /// Erase a namespace, a subject or an episode across every layer, with a receipt.
    erase { js: "erase", wit: "erase", cli: Command("forget"), mcp: Destructive("forget") }
    => |j, ns, a, now| j.erase(ns, &a.0.to_string(), now);

    /// Rectify one episode under the same id, with the erasure's cascade and a receipt.
    correct { js: "correct", wit: "correct", cli: Command("correct"), mcp: Destructive("correct") }
    => |j, ns, a, now| j.correct(ns, a.id("id")?, &a.without("id"), now);

    /// Queue an erasure for the nightly job.
    request_erasure { js: "requestErasure", wit: "request-erasure", cli: Command("forget"),
        mcp: Destructive("forget") }
    => |j, ns, a, now| j.request_erasure(ns, &a.0.to_string(), now);

    /// Everything held for the namespace, readable (the right of access).
    export_readable { js: "exportReadable", wit: "export-readable", cli: Command("export"),
        mcp: Destructive("export") }
    => |j, ns, a, now| j.export_readable(ns, now);

    /// The namespace encrypted under a passphrase (AES-256-GCM, key from scrypt).
    export_encrypted { js: "exportEncrypted", wit: "export-encrypted", cli: Command("export"),
        mcp: NoMcp("a binary file under a passphrase, for the user to keep; the readable export is the tool") }
    => |j, ns, a, now| {
        let log_n = a.count("logN")?.map(|n| u8::try_from(n).unwrap_or(u8::MAX));
        let file = j.export_encrypted(ns, a.text("passphrase")?, &a.bytes("random")?, now, log_n)?;
        crate::out(file)
    };

    /// Read an encrypted export back into the namespace.
    import_encrypted { js: "importEncrypted", wit: "import-encrypted", cli: Command("import"),
        mcp: NoMcp("it replaces what is stored with a file's content, a host's decision") }
    => |j, ns, a, now| j.import_encrypted(ns, a.text("passphrase")?, &a.bytes("file")?);

    /// Embed every episode again with the current model.
    reembed { js: "reembed", wit: "reembed", cli: Command("reembed"),
        mcp: NoMcp("maintenance after a change of model, a host's decision") }
    => |j, ns, a, now| j.reembed(ns);

    /// The records that could not be read, with why.
    quarantined { js: "quarantined", wit: "quarantined", cli: Command("quarantined"),
        mcp: NoMcp("a report for the host's operator, not for the model") }
    => |j, ns, a, now| j.quarantined(ns);
}

#[cfg(test)]
mod tests {
    use mnemo::store::MemoryStore;
    use mnemo::Config;
    use serde_json::json;

    use super::*;

    /// Names are unique, each surface's name is in its own style, and every omission says why.
    #[test]
    fn the_registry_is_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for op in OPERATIONS {
            assert!(seen.insert(op.name), "{} twice", op.name);
            assert!(op.summary.len() > 20, "{}: say what it does", op.name);
            assert!(op.js.chars().all(|c| c.is_ascii_alphanumeric()), "{}: js {}", op.name, op.js);
            assert!(op.wit.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{}", op.name);
            let reason = match (op.cli, op.mcp) {
                (Cli::Omitted(r), _) | (_, Mcp::Omitted(r)) => Some(r),
                _ => None,
            };
            assert!(
                reason.is_none_or(|r| r.len() > 30),
                "{}: an omission needs its reason",
                op.name
            );
        }
    }

    /// The dispatch knows every operation in the registry: each answers or refuses its
    /// arguments with a typed error, never "no operation".
    #[test]
    fn call_dispatches_every_operation() {
        let mut engine = Engine::new(MemoryStore::new(), Config { dim: 2, ..Config::default() });
        let mut json = Json(&mut engine);
        for op in OPERATIONS {
            match json.call(op.name, "ana", &json!({}), 1_700_000_000_000) {
                Ok(_) => {}
                Err(e) => assert!(!e.to_string().contains("no operation"), "{}: {e}", op.name),
            }
        }
        let err = json.call("no_such_thing", "ana", &json!({}), 0).unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        // A call through the dispatch is the method's own answer.
        let args = json!({"episode": {"text": "The invoice INV-7 was paid", "createdAt": 5}, "vector": [0.6, 0.8]});
        let stored: Value =
            serde_json::from_str(&json.call("remember", "ana", &args, 5).unwrap()).unwrap();
        assert_eq!(stored["stored"], true, "{stored}");
        let args = json!({"text": "invoice INV-7", "vector": [0.6, 0.8], "k": 1});
        let found: Value =
            serde_json::from_str(&json.call("recall", "ana", &args, 6).unwrap()).unwrap();
        assert_eq!(found["hits"][0]["episode"]["id"], stored["id"]);
        let args = json!({"subject": "Marco", "predicate": "works_at", "object": "Acme"});
        json.call("assert_triple", "ana", &args, 7).unwrap();
        let t: Value = serde_json::from_str(
            &json.call("triples", "ana", &json!({"subject": "Marco"}), 8).unwrap(),
        )
        .unwrap();
        assert_eq!(t[0]["object"], "Acme", "{t}");
        // An operation whose method takes an id beside its JSON gets the JSON without it.
        let args = json!({"id": stored["id"], "text": "The invoice INV-7 was paid on 3 May", "vector": [0.6, 0.8]});
        let receipt: Value =
            serde_json::from_str(&json.call("correct", "ana", &args, 9).unwrap()).unwrap();
        assert_eq!(receipt["scope"], "correction", "{receipt}");
        let page = json.call("timeline", "ana", &json!({"before": u64::MAX}), 10).unwrap();
        assert!(page.contains("3 May"), "{page}");
    }
}
