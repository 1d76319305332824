#![cfg(target_arch = "wasm32")]
#![allow(missing_docs)] // the generated bindings
//! The WIT component (`wit/`, world `mnemo`), built for wasm32-wasip2 with the `component`
//! feature: storage through the imported `kv` interface, the engine exported. Objects cross as
//! JSON text, through the same facade as the JS binding (`mnemo_json::Json`).

use std::cell::RefCell;

wit_bindgen::generate!({ path: "../../wit", world: "mnemo" });

use crate::mnemo::engine::{embedder as host_embedder, kv};
use exports::mnemo::engine::engine::{Error as WitError, Guest};

use ::mnemo::context::{Estimate, TokenCounter};
use ::mnemo::embed::{Embedder, Embedding, Role};
use ::mnemo::store::{Batch, KvStore, Op};
use ::mnemo::{Config, Engine, Error, Result};
use mnemo_json as json;
use mnemo_json::Json;

/// The host's storage, through the imported `kv` interface.
struct HostKv;

fn host(e: String) -> Error {
    Error::Io { path: "host kv".into(), detail: e }
}

impl KvStore for HostKv {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        kv::get(key).map_err(host)
    }

    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        kv::scan(prefix, after, u32::try_from(limit).unwrap_or(u32::MAX)).map_err(host)
    }

    fn write(&mut self, batch: &Batch) -> Result<()> {
        let ops: Vec<kv::Op> = batch
            .ops()
            .iter()
            .map(|op| match op {
                Op::Put(k, v) => kv::Op::Put((k.clone(), v.clone())),
                Op::Delete(k) => kv::Op::Delete(k.clone()),
            })
            .collect();
        kv::write(&ops).map_err(host)
    }

    fn vacuum(&mut self) -> Result<()> {
        kv::vacuum().map_err(host)
    }
}

/// The host's embedder, through the imported `embedder` interface.
struct HostEmbedder {
    model: String,
    dim: usize,
}

impl Embedder for HostEmbedder {
    fn model_id(&self) -> &str {
        &self.model
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn max_tokens(&self) -> usize {
        512
    }
    fn embed(&mut self, texts: &[&str], role: Role) -> Result<Vec<Embedding>> {
        let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        let role = match role {
            Role::Query => host_embedder::Role::Query,
            Role::Passage => host_embedder::Role::Passage,
        };
        let vectors = host_embedder::embed(&texts, role)
            .map_err(|e| Error::Inference { stage: "host embedder", detail: e })?;
        if vectors.len() != texts.len() {
            return Err(Error::Inference {
                stage: "host embedder",
                detail: format!("{} vectors for {} texts", vectors.len(), texts.len()),
            });
        }
        texts
            .iter()
            .zip(vectors)
            .map(|(t, v)| {
                Ok(Embedding {
                    vector: ::mnemo::embed::checked_unit_vector(&v, self.dim)?,
                    polarity: ::mnemo::embed::Polarity::of(t),
                    tokens: 0,
                    truncated: false,
                })
            })
            .collect()
    }
}

thread_local! {
    static ENGINE: RefCell<Option<Engine<HostKv>>> = const { RefCell::new(None) };
}

fn wit(e: Error) -> WitError {
    WitError { code: e.code().to_string(), message: e.to_string() }
}

/// Runs `f` on the engine (made with default settings on first use).
fn with<T>(f: impl FnOnce(&mut Engine<HostKv>) -> Result<T>) -> std::result::Result<T, WitError> {
    ENGINE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let engine = cell.get_or_insert_with(|| Engine::new(HostKv, Config::default()));
        f(engine).map_err(wit)
    })
}

fn replace(
    f: impl FnOnce(Engine<HostKv>) -> Result<Engine<HostKv>>,
) -> std::result::Result<(), WitError> {
    ENGINE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let engine = cell.take().unwrap_or_else(|| Engine::new(HostKv, Config::default()));
        *cell = Some(f(engine).map_err(wit)?);
        Ok(())
    })
}

struct Component;

impl Guest for Component {
    fn configure(options: String) -> std::result::Result<(), WitError> {
        let config = json::config(&options).map_err(wit)?;
        replace(|_| Ok(Engine::new(HostKv, config)))
    }

    fn load_model(model: Vec<u8>, tokenizer: Vec<u8>) -> std::result::Result<String, WitError> {
        #[cfg(feature = "model")]
        {
            let name = "multilingual-e5-small-latin";
            let e = mnemo_embed::BertEmbedder::from_bytes(
                &model,
                &tokenizer,
                mnemo_embed::BertConfig::e5(name),
            )
            .map_err(wit)?;
            let id = e.model_id().to_string();
            replace(|engine| Ok(engine.with_embedder(Box::new(e))))?;
            Ok(id)
        }
        #[cfg(not(feature = "model"))]
        {
            let _ = (model, tokenizer);
            Err(wit(Error::InvalidInput(
                "this build has no in-process embedder: use-host-embedder, or pass vectors".into(),
            )))
        }
    }

    fn use_host_embedder() -> std::result::Result<String, WitError> {
        let model = host_embedder::model_id()
            .map_err(|e| wit(Error::Inference { stage: "host embedder", detail: e }))?;
        let dim = host_embedder::dim() as usize;
        let id = model.clone();
        replace(|engine| Ok(engine.with_embedder(Box::new(HostEmbedder { model, dim }))))?;
        Ok(id)
    }

    fn embed(texts: Vec<String>, query: bool) -> std::result::Result<Vec<Vec<f32>>, WitError> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let role = if query { Role::Query } else { Role::Passage };
        with(|e| Ok(e.embed(&refs, role)?.into_iter().map(|x| x.vector).collect()))
    }

    fn remember(
        ns: String,
        episode: String,
        vector: Option<Vec<f32>>,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).remember(&ns, &episode, vector.as_deref()))
    }

    fn recall(
        ns: String,
        query: String,
        now: i64,
        vector: Option<Vec<f32>>,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).recall(&ns, &query, now, vector))
    }

    fn timeline(ns: String, before: i64, limit: u32) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).timeline(&ns, before, limit as usize))
    }

    fn set_fact(ns: String, fact: String, now: i64) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).set_fact(&ns, &fact, now))
    }

    fn fact(ns: String, key: String, now: i64, all: bool) -> std::result::Result<String, WitError> {
        with(|e| Json(&*e).fact(&ns, &key, now, all))
    }

    fn fact_history(ns: String, key: String) -> std::result::Result<String, WitError> {
        with(|e| Json(&*e).fact_history(&ns, &key))
    }

    fn rollback_fact(
        ns: String,
        key: String,
        version: u32,
        now: i64,
    ) -> std::result::Result<u32, WitError> {
        with(|e| e.rollback_fact(&ns, &key, version, now))
    }

    fn add_rule(
        ns: String,
        text: String,
        status: String,
        origin: String,
        now: i64,
    ) -> std::result::Result<u64, WitError> {
        with(|e| e.add_rule(&ns, &text, "", status.parse()?, origin.parse()?, now))
    }

    fn set_status(ns: String, id: u64, status: String) -> std::result::Result<(), WitError> {
        with(|e| e.set_status(&ns, id, json::status(&status)?))
    }

    fn assert_triple(
        ns: String,
        triple: String,
        now: i64,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).assert_triple(&ns, &triple, now))
    }

    fn triples(
        ns: String,
        subject: String,
        history: bool,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&*e).triples(&ns, &subject, history))
    }

    fn set_rule_status(
        ns: String,
        id: u64,
        status: String,
        now: i64,
    ) -> std::result::Result<(), WitError> {
        with(|e| e.set_rule_status(&ns, id, status.parse()?, now))
    }

    fn rules(ns: String, statuses: Vec<String>) -> std::result::Result<String, WitError> {
        with(|e| Json(&*e).rules(&ns, &statuses))
    }

    fn maintain(force: bool, budget: Option<u64>) -> std::result::Result<String, WitError> {
        with(|e| {
            Json(&mut *e).maintain(force, Some(budget.unwrap_or(::mnemo::engine::MAINTAIN_BUDGET)))
        })
    }

    fn load(ns: String) -> std::result::Result<u64, WitError> {
        with(|e| e.load(&ns).map(|n| n as u64))
    }

    fn facts(ns: String, now: i64, all: bool) -> std::result::Result<String, WitError> {
        with(|e| Json(&*e).facts(&ns, now, all))
    }

    fn signal(ns: String, signal: String) -> std::result::Result<String, WitError> {
        with(|e| e.signal_json(&ns, &signal))
    }

    fn ingest(
        ns: String,
        jsonl: String,
        origin: String,
        now: i64,
        vectors: Option<Vec<Vec<f32>>>,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).ingest(&ns, &jsonl, &origin, now, vectors.as_deref()))
    }

    fn signals(ns: String, jsonl: String) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).signals(&ns, &jsonl))
    }

    fn observe(ns: String, now: i64) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).observe(&ns, now))
    }

    fn observations(ns: String, statuses: Vec<String>) -> std::result::Result<String, WitError> {
        with(|e| Json(&*e).observations(&ns, &statuses))
    }

    fn feedback(
        ns: String,
        observation: u64,
        verdict: String,
        now: i64,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).feedback(&ns, observation, &verdict, now))
    }

    fn promote(ns: String, now: i64) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).promote(&ns, now))
    }

    fn outcome(
        ns: String,
        retrieval_id: u64,
        outcome: String,
        now: i64,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).outcome(&ns, retrieval_id, &outcome, now))
    }

    fn outcome_report(ns: String) -> std::result::Result<String, WitError> {
        with(|e| Json(&*e).outcome_report(&ns))
    }

    fn nightly_log(ns: String) -> std::result::Result<String, WitError> {
        with(|e| Json(&*e).nightly_log(&ns))
    }

    fn stats(ns: String, now: i64) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).stats(&ns, now))
    }

    fn context(ns: String, request: String, now: i64) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).context(&ns, &request, now))
    }

    fn task_start(
        ns: String,
        id: String,
        content: String,
        cap: Option<u32>,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).task_start(&ns, &id, &content, cap.map(|c| c as usize)))
    }

    fn task_step(
        ns: String,
        id: String,
        kind: String,
        text: String,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).task_step(&ns, &id, &kind, &text))
    }

    fn task_end(ns: String, id: String) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).task_end(&ns, &id))
    }

    fn expand(ns: String, id: String) -> std::result::Result<String, WitError> {
        with(|e| e.expand(&ns, &id))
    }

    fn nightly(ns: String, now: i64, budget: Option<u64>) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).nightly(&ns, now, budget))
    }

    fn recall_observations(
        ns: String,
        query: String,
        k: u32,
        now: i64,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).recall_observations(&ns, &query, None, k as usize, now))
    }

    fn use_host_llm() -> std::result::Result<(), WitError> {
        replace(|engine| Ok(engine.with_llm(Box::new(HostLlm))))
    }

    fn use_host_tokenizer() -> std::result::Result<(), WitError> {
        if crate::mnemo::engine::tokenizer::count_tokens("mnemo").is_none() {
            return Err(wit(Error::InvalidInput(
                "the host has no tokenizer: its count-tokens answers none".into(),
            )));
        }
        replace(|engine| Ok(engine.with_token_counter(Box::new(HostTokens))))
    }

    fn erase(ns: String, what: String, now: i64) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).erase(&ns, &what, now))
    }

    fn correct(
        ns: String,
        id: u64,
        correction: String,
        now: i64,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).correct(&ns, id, &correction, now))
    }

    fn request_erasure(ns: String, what: String, now: i64) -> std::result::Result<u64, WitError> {
        with(|e| {
            let v: serde_json::Value =
                serde_json::from_str(&Json(&mut *e).request_erasure(&ns, &what, now)?)
                    .map_err(|x| ::mnemo::Error::InvalidInput(x.to_string()))?;
            Ok(v["id"].as_u64().unwrap_or(0))
        })
    }

    fn export_readable(ns: String, now: i64) -> std::result::Result<String, WitError> {
        with(|e| e.export_json(&ns, now))
    }

    fn export_encrypted(
        ns: String,
        passphrase: String,
        random: Vec<u8>,
        log_n: Option<u8>,
        now: i64,
    ) -> std::result::Result<Vec<u8>, WitError> {
        with(|e| Json(&*e).export_encrypted(&ns, &passphrase, &random, now, log_n))
    }

    fn import_encrypted(
        ns: String,
        passphrase: String,
        file: Vec<u8>,
    ) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).import_encrypted(&ns, &passphrase, &file))
    }

    fn reembed(ns: String) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).reembed(&ns))
    }

    fn quarantined(ns: String) -> std::result::Result<String, WitError> {
        with(|e| Json(&mut *e).quarantined(&ns))
    }
}

/// The imported `tokenizer`, lent to the engine for context budgets (the estimate for a text
/// the host will not count).
struct HostTokens;

impl TokenCounter for HostTokens {
    fn count(&self, text: &str) -> usize {
        crate::mnemo::engine::tokenizer::count_tokens(text)
            .map_or_else(|| Estimate.count(text), |n| n as usize)
    }
}

/// The imported `llm`, lent to the engine for phrasing.
struct HostLlm;

impl ::mnemo::learn::phrasing::Llm for HostLlm {
    fn complete(&mut self, prompt: &str, max_tokens: u32) -> std::result::Result<String, String> {
        crate::mnemo::engine::llm::complete(prompt, max_tokens)
    }
}

export!(Component);
