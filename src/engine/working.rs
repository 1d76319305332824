//! Running tasks' working memories, references a context points at, and fetching what a
//! context withheld. All of it lives in this process only: a task's working memory is
//! discarded when the task ends (the host keeps what it chooses by remembering an episode and
//! sending signals), and references are kept for the last [`REFERENCES`] contexts' transcripts.

use super::Engine;
use crate::context::working::{Pushed, StepKind, WorkingMemory, DEFAULT_CAP};
use crate::error::{Error, Result};
use crate::record::{Policy, RuleStatus};
use crate::store::{KvStore, Namespace};

/// Transcripts kept for fetching by id (the oldest go first).
pub const REFERENCES: usize = 64;

fn task_key(ns: &str, id: &str) -> String {
    format!("{ns}\u{0}{id}")
}

impl<S: KvStore> Engine<S> {
    /// Starts task `id` in `ns` with its content; its working memory is capped at `cap`
    /// tokens (4,000 when `None`). Refused when the task is already running.
    pub fn task_start(
        &mut self,
        ns: &str,
        id: &str,
        content: &str,
        cap: Option<usize>,
    ) -> Result<()> {
        Namespace::new(ns)?;
        if id.trim().is_empty() {
            return Err(Error::InvalidInput("task id is empty".into()));
        }
        let cap = cap.unwrap_or(DEFAULT_CAP);
        if !(64..=1_000_000).contains(&cap) {
            return Err(Error::InvalidInput(format!(
                "working memory cap {cap}: use 64 to 1,000,000 tokens"
            )));
        }
        let key = task_key(ns, id);
        if self.tasks.contains_key(&key) {
            return Err(Error::InvalidInput(format!(
                "task {id:?} is already running: end it first"
            )));
        }
        self.tasks.insert(key, WorkingMemory::new(content.trim(), cap));
        Ok(())
    }

    /// Adds a step to task `id`; the oldest steps are summarised if the cap is crossed (by
    /// the host's model when one is lent, checked; else extractively).
    pub fn task_step(&mut self, ns: &str, id: &str, kind: StepKind, text: &str) -> Result<Pushed> {
        if text.trim().is_empty() {
            return Err(Error::InvalidInput("step text is empty".into()));
        }
        let key = task_key(ns, id);
        let Some(w) = self.tasks.get_mut(&key) else {
            return Err(Error::NotFound(format!("task {id:?} in {ns}: start it with task_start")));
        };
        let counter = super::context::counter_of(&self.tokens);
        let llm = self.llm.as_deref_mut().map(|l| l as &mut dyn crate::learn::phrasing::Llm);
        Ok(w.push(kind, text, counter, llm))
    }

    /// Task `id`'s working memory as it is now.
    pub fn working_memory(&self, ns: &str, id: &str) -> Result<&WorkingMemory> {
        self.tasks.get(&task_key(ns, id)).ok_or_else(|| {
            Error::NotFound(format!("task {id:?} in {ns}: start it with task_start"))
        })
    }

    /// Ends task `id`: its working memory is discarded and returned one last time.
    pub fn task_end(&mut self, ns: &str, id: &str) -> Result<WorkingMemory> {
        self.tasks.remove(&task_key(ns, id)).ok_or_else(|| {
            Error::NotFound(format!("task {id:?} in {ns}: start it with task_start"))
        })
    }

    /// Moves what lives in this process only — running tasks' working memories and the
    /// transcripts contexts referred to — into `to`, an engine opened again on the same store
    /// (a host that reloads the store after another process wrote to it keeps its tasks).
    pub fn hand_over<T: KvStore>(&mut self, to: &mut Engine<T>) {
        to.tasks.extend(self.tasks.drain());
        to.references.append(&mut self.references);
        to.next_reference = to.next_reference.max(self.next_reference);
        while to.references.len() > REFERENCES {
            to.references.pop_first();
        }
    }

    /// Keeps `text` for [`Engine::expand`]; returns its number.
    pub(crate) fn keep_reference(&mut self, ns: &str, text: String) -> u64 {
        self.next_reference += 1;
        let n = self.next_reference;
        self.references.insert(n, (ns.to_string(), text));
        while self.references.len() > REFERENCES {
            self.references.pop_first();
        }
        n
    }

    /// The full text behind an id a context gave (`rule:3`, `fact:tone`, `episode:42`,
    /// `observation:7`, `transcript:2`, `working:TASK`). A `never-inject` fact is refused.
    pub fn expand(&mut self, ns: &str, id: &str) -> Result<String> {
        let nsc = Namespace::new(ns)?;
        let (kind, rest) = id.split_once(':').ok_or_else(|| {
            Error::InvalidInput(format!("{id:?} is not a context id (kind:id, e.g. episode:42)"))
        })?;
        let number = || {
            rest.parse::<u64>()
                .map_err(|_| Error::InvalidInput(format!("{id:?}: {rest:?} is not a number")))
        };
        match kind {
            "episode" => {
                let e = self.episode(ns, number()?)?;
                let mut t = e.text.clone();
                if !e.verdict.is_empty() {
                    t.push_str(&format!("\nlesson: {}", e.verdict));
                }
                if !e.compact_summary.is_empty() {
                    t.push_str(&format!("\nsummary: {}", e.compact_summary));
                }
                if !e.evidence.is_empty() {
                    let ids: Vec<String> = e.evidence.iter().map(|x| format!("episode:{x}")).collect();
                    t.push_str(&format!("\nevidence: {}", ids.join(", ")));
                }
                Ok(t)
            }
            "rule" => {
                let n = number()?;
                let r = self.rules(ns, &[])?.into_iter().find(|r| r.id == n);
                let r = r.ok_or_else(|| Error::NotFound(format!("rule {n}")))?;
                let status = if r.status == RuleStatus::Active { "" } else { " (not active)" };
                Ok(format!("{}{status}\n{}", r.text, r.evidence).trim().to_string())
            }
            "fact" => {
                let f = self
                    .fact(ns, rest, i64::MAX / 2, true)?
                    .ok_or_else(|| Error::NotFound(format!("fact {rest:?}")))?;
                if f.policy == Policy::NeverInject {
                    return Err(Error::InvalidInput(format!(
                        "fact {rest:?} is never-inject: read it with the facts API, not into a context"
                    )));
                }
                Ok(format!("{}: {}", f.key, f.value))
            }
            "observation" => {
                let o = self.observation(ns, number()?)?;
                Ok(format!("{}\n{}", o.quote, o.evidence))
            }
            "transcript" => {
                let n = number()?;
                match self.references.get(&n) {
                    Some((owner, text)) if owner == nsc.as_str() => Ok(text.clone()),
                    _ => Err(Error::NotFound(format!(
                        "transcript {n}: kept only for the last {REFERENCES} contexts of this process"
                    ))),
                }
            }
            "working" => Ok(self.working_memory(ns, rest)?.render()),
            _ => Err(Error::InvalidInput(format!(
                "{id:?}: a context id is episode:N, rule:N, fact:KEY, observation:N, transcript:N or \
                 working:TASK (messages and tool calls are inside their transcript)"
            ))),
        }
    }
}
