//! Context assembly and working memory through JSON text, for bindings.
//!
//! A context request is `{task, taskId?, budget?: {system, rules, facts, episodes, episodesK,
//! observations, observationsK, working, tools, response}, total?, system?, conversation?:
//! [{role, text}], tools?: [{name, text}], level?: 1|2|3, vector?}` (every budget field
//! optional, defaults from `context::budget`); the answer is `engine::Context` in camelCase.

use std::ops::{Deref, DerefMut};

use crate::out;
use mnemo::engine::ContextRequest;
use mnemo::Engine;

use crate::Json;
use mnemo::context::StepKind;
use mnemo::error::{Error, Result};
use mnemo::store::KvStore;

impl<S: KvStore, R: Deref<Target = Engine<S>>> Json<R> {
    /// [`Engine::working_memory`] as JSON.
    pub fn working_memory(&self, ns: &str, id: &str) -> Result<String> {
        out(self.0.working_memory(ns, id)?)
    }
}

impl<S: KvStore, R: DerefMut<Target = Engine<S>>> Json<R> {
    /// [`Engine::context`] with the request as JSON (module docs).
    pub fn context(&mut self, ns: &str, request: &str, now: i64) -> Result<String> {
        let req: ContextRequest = serde_json::from_str(request)
            .map_err(|e| Error::InvalidInput(format!("context request: {e}")))?;
        out(self.0.context(ns, &req, now)?)
    }

    /// [`Engine::task_start`]; returns the working memory as JSON.
    pub fn task_start(
        &mut self,
        ns: &str,
        id: &str,
        content: &str,
        cap: Option<usize>,
    ) -> Result<String> {
        self.0.task_start(ns, id, content, cap)?;
        out(self.0.working_memory(ns, id)?)
    }

    /// [`Engine::task_step`] with the kind by name (reasoning, tool-result, approval, note);
    /// returns `{n, folded, tokens}`.
    pub fn task_step(&mut self, ns: &str, id: &str, kind: &str, text: &str) -> Result<String> {
        let kind: StepKind = kind.parse()?;
        out(self.0.task_step(ns, id, kind, text)?)
    }

    /// [`Engine::task_end`]: the discarded working memory, one last time, as JSON.
    pub fn task_end(&mut self, ns: &str, id: &str) -> Result<String> {
        out(self.0.task_end(ns, id)?)
    }

    /// [`Engine::expand`]: the full text behind an id a context listed as withheld, as a JSON
    /// string.
    pub fn expand(&mut self, ns: &str, id: &str) -> Result<String> {
        out(self.0.expand(ns, id)?)
    }
}
