//! The arguments of `mnemo mcp`'s tools, with the descriptions their input schemas carry.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct RememberArgs {
    /// What happened, in a sentence or a paragraph.
    pub(crate) text: String,
    /// success, failure or partial, when the episode was an attempt.
    #[serde(default)]
    pub(crate) outcome: Option<String>,
    /// The lesson: why it went that way, what to do next time.
    #[serde(default)]
    pub(crate) verdict: Option<String>,
    /// People, companies, repositories or other things it is about (the first is the contact).
    #[serde(default)]
    pub(crate) entities: Vec<String>,
    /// Free labels to filter on.
    #[serde(default)]
    pub(crate) tags: Vec<String>,
    /// The tool involved, if any (part of the situation lessons are keyed by).
    #[serde(default)]
    pub(crate) tool: Option<String>,
    /// The kind of error, if it failed (part of the situation lessons are keyed by).
    #[serde(default)]
    pub(crate) error_class: Option<String>,
    /// Where the text comes from: agent (the default), tool, web or email. Text from a tool,
    /// a web page or an email is stored as untrusted data, never followed as an instruction.
    #[serde(default)]
    pub(crate) origin: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct RecallArgs {
    /// The question or situation, in natural language; time expressions such as "last week"
    /// narrow the search to that window.
    pub(crate) query: String,
    /// How many episodes to return (default 5, at most 100).
    #[serde(default)]
    pub(crate) k: Option<u32>,
    /// Also search the records that compaction or a rule took out of recall.
    #[serde(default)]
    pub(crate) include_cold: bool,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ContextArgs {
    /// The task at hand: the new email, the user's request.
    pub(crate) task: String,
    /// Everything but the response buffer fits this many tokens (default 9,600).
    #[serde(default)]
    pub(crate) budget: Option<u32>,
    /// Disclosure level: 1 (rules, facts, episodes), 2 (+ observations), 3 (+ full history);
    /// chosen from the task when absent.
    #[serde(default)]
    pub(crate) level: Option<u8>,
    /// A running task (task_start) whose working memory goes in the working section.
    #[serde(default)]
    pub(crate) task_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct TaskStartArgs {
    /// The task's id, chosen by the caller (unique among running tasks).
    pub(crate) task_id: String,
    /// What the task is: the request, the email to answer.
    pub(crate) content: String,
    /// The working memory's cap in tokens (default 4,000).
    #[serde(default)]
    pub(crate) cap: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct TaskStepArgs {
    /// The running task's id.
    pub(crate) task_id: String,
    /// reasoning, tool-result, approval or note.
    pub(crate) kind: String,
    /// The step.
    pub(crate) text: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct TaskEndArgs {
    /// The running task's id.
    pub(crate) task_id: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ExpandArgs {
    /// An id from a context's withheld list: episode:42, rule:3, fact:KEY, observation:7,
    /// transcript:N, working:TASK.
    pub(crate) id: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct SignalArgs {
    /// One behaviour signal: {"ts", "kind" (edited, rejected, deferred, accepted, …), "agent",
    /// "situation": {…}, "before", "after"}. Repeated signals become observations.
    pub(crate) signal: Value,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct FactGetArgs {
    /// The fact's key, e.g. "language".
    pub(crate) key: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct FactSetArgs {
    /// The fact's key, e.g. "language".
    pub(crate) key: String,
    /// Its new value.
    pub(crate) value: String,
    /// How sure, from 0 to 1 (default 1).
    #[serde(default)]
    pub(crate) confidence: Option<f32>,
    /// auto-inject (the default), sensitive or never-inject.
    #[serde(default)]
    pub(crate) policy: Option<String>,
    /// agent (the default), tool, web or email. Such a fact is `implicit`: it never overrides
    /// what the user or an administrator set.
    #[serde(default)]
    pub(crate) origin: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct FeedbackArgs {
    /// The observation's id (from the observations resource or a context).
    pub(crate) observation: u64,
    /// right or wrong; wrong is final: the observation never comes back.
    pub(crate) verdict: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ForgetArgs {
    /// subject (every record that names it), episode (one memory and what derives from it) or
    /// namespace (everything held for this user).
    pub(crate) scope: String,
    /// The subject's name, for scope subject.
    #[serde(default)]
    pub(crate) subject: Option<String>,
    /// The episode's id, for scope episode.
    #[serde(default)]
    pub(crate) id: Option<u64>,
    /// Linked identifiers erased with the subject (an email address, an IBAN…).
    #[serde(default)]
    pub(crate) also: Vec<String>,
    /// Erase a subject even when it is in more than half of the episodes.
    #[serde(default)]
    pub(crate) force: bool,
    /// Return the receipt of what would go, and change nothing.
    #[serde(default, rename = "dryRun")]
    pub(crate) dry_run: bool,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct FactHistoryArgs {
    /// The fact's key, e.g. "language".
    pub(crate) key: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct FactRollbackArgs {
    /// The fact's key.
    pub(crate) key: String,
    /// The version to make current again (from fact_history); written as a new version.
    pub(crate) version: u32,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct TripleSetArgs {
    /// The subject entity ("Marco").
    pub(crate) subject: String,
    /// The predicate ("works_at"); one object per subject and predicate holds at a time.
    pub(crate) predicate: String,
    /// The object ("Acme").
    pub(crate) object: String,
    /// How sure, from 0 to 1 (default 1).
    #[serde(default)]
    pub(crate) confidence: Option<f32>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct TriplesArgs {
    /// The subject entity.
    pub(crate) subject: String,
    /// Include the triples a contradicting assertion ended.
    #[serde(default)]
    pub(crate) history: bool,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct OutcomeArgs {
    /// The retrievalId a recall or a context returned.
    pub(crate) retrieval_id: u64,
    /// success, failure or partial.
    pub(crate) outcome: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct StatusArgs {
    /// The episode's or the rule's id.
    pub(crate) id: u64,
    /// For an episode: raw, active, superseded or rejected. For a rule: candidate, active or
    /// demoted.
    pub(crate) status: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct CorrectArgs {
    /// The episode to rectify (it keeps its id).
    pub(crate) id: u64,
    /// Its corrected text.
    pub(crate) text: String,
    /// Its corrected lesson, if it had one.
    #[serde(default)]
    pub(crate) verdict: Option<String>,
}
