//! The component under wasmtime: its imports (kv over the host's store, the native embedder,
//! no LLM) and typed calls to its exported engine.

use std::path::Path;

use ::mnemo::store::{Batch, KvStore};
use ::mnemo::{Embedder, Role};
use ::mnemo_embed::BertEmbedder;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

mod wit {
    wasmtime::component::bindgen!({ path: "../wit", world: "mnemo" });
}

use wit::exports::mnemo::engine::engine::Error as EngineError;
use wit::mnemo::engine::{embedder, kv, llm, tokenizer};

/// What the component's imports reach.
pub struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    kv: Box<dyn KvStore + Send>,
    embedder: Option<BertEmbedder>,
    /// The host model's tokenizer (`--host-tokenizer`), behind the tokenizer import.
    pub tokenizer: Option<tiktoken_rs::CoreBPE>,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl kv::Host for State {
    fn get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, String> {
        self.kv.get(&key).map_err(|e| e.to_string())
    }

    fn scan(
        &mut self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, String> {
        self.kv.scan(&prefix, after.as_deref(), limit as usize).map_err(|e| e.to_string())
    }

    fn write(&mut self, ops: Vec<kv::Op>) -> Result<(), String> {
        let mut batch = Batch::new();
        for op in ops {
            match op {
                kv::Op::Put((k, v)) => batch.put(k, v),
                kv::Op::Delete(k) => batch.delete(k),
            };
        }
        self.kv.write(&batch).map_err(|e| e.to_string())
    }

    fn vacuum(&mut self) -> Result<(), String> {
        self.kv.vacuum().map_err(|e| e.to_string())
    }
}

impl embedder::Host for State {
    fn model_id(&mut self) -> Result<String, String> {
        self.embedder.as_ref().map(|e| e.model_id().to_string()).ok_or_else(no_embedder)
    }

    fn dim(&mut self) -> u32 {
        self.embedder.as_ref().map_or(0, |e| e.dim() as u32)
    }

    fn embed(&mut self, texts: Vec<String>, role: embedder::Role) -> Result<Vec<Vec<f32>>, String> {
        let e = self.embedder.as_mut().ok_or_else(no_embedder)?;
        let role = match role {
            embedder::Role::Query => Role::Query,
            embedder::Role::Passage => Role::Passage,
        };
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let out = e.embed(&refs, role).map_err(|e| e.to_string())?;
        Ok(out.into_iter().map(|e| e.vector).collect())
    }
}

fn no_embedder() -> String {
    "this host has no embedder: start it with --host-embedder".into()
}

impl tokenizer::Host for State {
    fn count_tokens(&mut self, text: String) -> Option<u32> {
        let n = self.tokenizer.as_ref()?.encode_with_special_tokens(&text).len();
        Some(u32::try_from(n).unwrap_or(u32::MAX))
    }
}

impl llm::Host for State {
    fn complete(&mut self, _prompt: String, _max_tokens: u32) -> Result<String, String> {
        Err("no language model is configured on this host".into())
    }
}

/// An engine error or a trap, as one message.
pub fn message(e: EngineError) -> String {
    format!("{} ({})", e.message, e.code)
}

/// The running component and its store.
pub struct Memory {
    store: Store<State>,
    bindings: wit::Mnemo,
}

/// Loads the component at `path`, compiled once and cached next to it as `.cwasm`.
pub fn load(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    let cached = path.with_extension("cwasm");
    let fresh = |c: &Path| {
        let (a, b) = (
            std::fs::metadata(c).and_then(|m| m.modified()),
            std::fs::metadata(path).and_then(|m| m.modified()),
        );
        matches!((a, b), (Ok(a), Ok(b)) if a >= b)
    };
    if fresh(&cached) {
        // SAFETY: the file is our own serialisation of this component by this wasmtime build;
        // deserialize checks the engine's version and settings and fails otherwise.
        if let Ok(c) = unsafe { Component::deserialize_file(engine, &cached) } {
            return Ok(c);
        }
    }
    let c = Component::from_file(engine, path)?;
    let _ = std::fs::write(&cached, c.serialize()?);
    Ok(c)
}

impl Memory {
    /// Instantiates `component` over `kv`, with `embedder` behind the embedder import.
    pub fn new(
        engine: &Engine,
        component: &Component,
        kv: Box<dyn KvStore + Send>,
        embedder: Option<BertEmbedder>,
    ) -> wasmtime::Result<Self> {
        let mut linker: Linker<State> = Linker::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        wit::Mnemo::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
        let state = State {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
            kv,
            embedder,
            tokenizer: None,
        };
        let mut store = Store::new(engine, state);
        let bindings = wit::Mnemo::instantiate(&mut store, component, &linker)?;
        Ok(Self { store, bindings })
    }

    /// Lends the component `tokenizer` for its context budgets (`use-host-tokenizer`).
    pub fn use_tokenizer(&mut self, tokenizer: tiktoken_rs::CoreBPE) -> Result<(), String> {
        self.store.data_mut().tokenizer = Some(tokenizer);
        self.call(|g, s| g.call_use_host_tokenizer(s))
    }

    /// What the host's store could not read of its own files (`KvStore::damage`): the
    /// component cannot see it through the kv interface, so the host reports it.
    pub fn store_damage(&self) -> Vec<String> {
        self.store.data().kv.damage()
    }

    /// The exported engine, with this store.
    pub fn call<T>(
        &mut self,
        f: impl FnOnce(
            &wit::exports::mnemo::engine::engine::Guest,
            &mut Store<State>,
        ) -> wasmtime::Result<Result<T, EngineError>>,
    ) -> Result<T, String> {
        let guest = self.bindings.mnemo_engine_engine();
        match f(guest, &mut self.store) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(message(e)),
            Err(trap) => Err(format!("the component trapped: {trap:?}")),
        }
    }
}
