//! Working memory: what one task holds while it runs, capped in tokens, summarised (never
//! truncated) when it overflows, discarded when the task ends.
//!
//! A task has its content (the email to answer, the ticket), a conversation (rounds of
//! messages) and steps (reasoning, partial tool results, approvals). [`WorkingMemory::push`]
//! keeps the whole under the cap (4,000 tokens by default): when a step would cross it, the
//! oldest steps are folded into the running summary until the total is back under three
//! quarters of the cap. Folding is done by [`compress`]: every step keeps its sentences that
//! carry a number, a date, a name, an identifier or a decision ("decided", "because",
//! "approved"…), clipped to [`LINE_WORDS`] words; other sentences are counted ("+3 routine
//! sentences"). When the summary itself passes a quarter of the cap, its oldest lines give way
//! to the list of what they mentioned (names, amounts, identifiers), so those survive to the
//! end of the task. A host's model may phrase the summary instead; its text is kept only if it
//! passes `compact::verify::check` (within the cap, no number, identifier or name that the
//! folded steps do not contain).
//!
//! A conversation overflows without truncation too ([`Conversation`]): the last three rounds
//! stay whole, earlier ones become three sentences, and the full transcript is kept as a
//! reference the agent can fetch by id.

use super::tokens::TokenCounter;
use crate::compact::summary::mentions;
use crate::learn::phrasing::Llm;

/// Words of one folded step's line at most.
pub const LINE_WORDS: usize = 40;

/// Default cap of a task's working memory, in tokens.
pub const DEFAULT_CAP: usize = 4_000;

/// What a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// Intermediate reasoning.
    Reasoning,
    /// A (partial) tool result.
    ToolResult,
    /// An approval asked or given.
    Approval,
    /// Anything else.
    Note,
}

impl std::str::FromStr for StepKind {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s {
            "reasoning" => Ok(StepKind::Reasoning),
            "tool-result" => Ok(StepKind::ToolResult),
            "approval" => Ok(StepKind::Approval),
            "note" => Ok(StepKind::Note),
            _ => Err(crate::error::Error::InvalidInput(format!(
                "step kind {s:?} is not one of reasoning, tool-result, approval, note"
            ))),
        }
    }
}

/// One step of a task.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// Sequence number in the task, from 1.
    #[serde(default)]
    pub n: u32,
    /// What it is.
    pub kind: StepKind,
    /// Its text.
    pub text: String,
}

impl Step {
    fn line(&self) -> String {
        let kind = match self.kind {
            StepKind::Reasoning => "reasoning",
            StepKind::ToolResult => "tool result",
            StepKind::Approval => "approval",
            StepKind::Note => "note",
        };
        format!("[{}] {kind}: {}", self.n, self.text.trim())
    }
}

/// A task's working memory (module docs).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkingMemory {
    /// The task's content.
    pub task: String,
    /// Cap in tokens for everything below.
    pub cap: usize,
    /// Earlier steps, folded.
    pub summary: Vec<String>,
    /// Names, amounts and identifiers of summary lines that had to give way.
    pub mentions: Vec<String>,
    /// Steps folded into the summary so far.
    pub folded: u32,
    /// `extractive`, or `llm` when the host's model wrote the summary and it passed the checks.
    pub summarised_by: &'static str,
    /// Why the host model's last summary was refused, if it was.
    pub llm_refused: String,
    /// Steps kept whole, oldest first.
    pub steps: Vec<Step>,
    #[serde(skip)]
    next: u32,
}

/// What [`WorkingMemory::push`] did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pushed {
    /// The step's number.
    pub n: u32,
    /// Steps folded into the summary by this push.
    pub folded: u32,
    /// Tokens held now.
    pub tokens: usize,
}

fn is_decision(s: &str) -> bool {
    const CUES: [&str; 18] = [
        "decid", "because", "approv", "reject", "agreed", "chose", "choose", "must", "will ",
        "won't", "failed", "error", "confirm", "total", "owe", "due", "deadline", "priority",
    ];
    let l = s.to_lowercase();
    CUES.iter().any(|c| l.contains(c))
}

fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end = matches!(c, '.' | '!' | '?' | '\n')
            && b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if end {
            let s = text[start..=i].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + 1;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

fn clip_words(s: &str, n: usize) -> String {
    let words: Vec<&str> = s.split_whitespace().collect();
    if words.len() <= n {
        return words.join(" ");
    }
    // Keep the words that carry mentions even past the clip: they are what a summary is for.
    let kept = words[..n].join(" ");
    let later: Vec<String> = mentions(&words[n..].join(" "));
    if later.is_empty() {
        format!("{kept} …")
    } else {
        format!("{kept} … ({})", later.join(", "))
    }
}

/// The extractive line of one text: its sentences with a mention or a decision, each clipped
/// to [`LINE_WORDS`] words; the others counted. A text with neither keeps its first sentence.
pub fn compress(text: &str) -> String {
    let all = sentences(text);
    let keep: Vec<&str> =
        all.iter().copied().filter(|s| is_decision(s) || !mentions(s).is_empty()).collect();
    let (keep, dropped) = if keep.is_empty() {
        (all.iter().take(1).copied().collect::<Vec<_>>(), all.len().saturating_sub(1))
    } else {
        let n = keep.len();
        (keep, all.len() - n)
    };
    let mut line = keep.iter().map(|s| clip_words(s, LINE_WORDS)).collect::<Vec<_>>().join(" ");
    if dropped > 0 {
        line.push_str(&format!(
            " (+{dropped} routine sentence{})",
            if dropped == 1 { "" } else { "s" }
        ));
    }
    line
}

impl WorkingMemory {
    /// An empty working memory for `task`, capped at `cap` tokens.
    pub fn new(task: impl Into<String>, cap: usize) -> Self {
        Self {
            task: task.into(),
            cap,
            summary: Vec::new(),
            mentions: Vec::new(),
            folded: 0,
            summarised_by: "extractive",
            llm_refused: String::new(),
            steps: Vec::new(),
            next: 1,
        }
    }

    /// The text a context gets: the task, the summary of earlier steps, the steps.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.task.trim().is_empty() {
            out.push_str("Task: ");
            out.push_str(self.task.trim());
            out.push('\n');
        }
        if !self.summary.is_empty() || !self.mentions.is_empty() {
            out.push_str(&format!("Earlier steps (summarised, {} steps):\n", self.folded));
            for l in &self.summary {
                out.push_str("- ");
                out.push_str(l);
                out.push('\n');
            }
            if !self.mentions.is_empty() {
                out.push_str("- also mentioned: ");
                out.push_str(&self.mentions.join(", "));
                out.push('\n');
            }
        }
        for s in &self.steps {
            out.push_str(&s.line());
            out.push('\n');
        }
        out
    }

    /// Tokens held.
    pub fn tokens(&self, counter: &dyn TokenCounter) -> usize {
        counter.count(&self.render())
    }

    /// Adds a step and folds the oldest ones if the cap is crossed (module docs). `llm` may
    /// phrase the summary; its text is checked before it is used.
    pub fn push(
        &mut self,
        kind: StepKind,
        text: &str,
        counter: &dyn TokenCounter,
        llm: Option<&mut (dyn Llm + '_)>,
    ) -> Pushed {
        let n = self.next;
        self.next += 1;
        self.steps.push(Step { n, kind, text: text.trim().to_string() });
        let mut folded = 0;
        if self.tokens(counter) > self.cap {
            let sources = self.fold_until(self.cap * 3 / 4, 1, counter);
            folded = sources.len() as u32;
            if let Some(llm) = llm {
                self.phrase(llm, &sources, counter);
            }
        }
        Pushed { n, folded, tokens: self.tokens(counter) }
    }

    /// Folds the oldest steps, keeping at least `keep`, until the whole is at most `target`
    /// tokens; returns the folded steps' lines.
    fn fold_until(
        &mut self,
        target: usize,
        keep: usize,
        counter: &dyn TokenCounter,
    ) -> Vec<String> {
        let mut sources = Vec::new();
        while self.steps.len() > keep && self.tokens(counter) > target {
            let s = self.steps.remove(0);
            self.summary.push(format!("[{}] {}", s.n, compress(&s.text)));
            sources.push(s.line());
            self.folded += 1;
            self.shrink_summary(counter);
        }
        sources
    }

    /// A copy that fits `cap` tokens, for a context whose working-memory cap is smaller than
    /// the task's: steps folded (all of them if needed), then summary lines given way to
    /// their mentions. `None` when even the task's content and mentions do not fit.
    pub fn fitted(&self, cap: usize, counter: &dyn TokenCounter) -> Option<WorkingMemory> {
        let mut w = self.clone();
        if w.tokens(counter) <= cap {
            return Some(w);
        }
        w.cap = cap;
        w.fold_until(cap, 0, counter);
        while w.tokens(counter) > cap && !w.summary.is_empty() {
            let line = w.summary.remove(0);
            for m in mentions(&line) {
                if !w.mentions.contains(&m) {
                    w.mentions.push(m);
                }
            }
        }
        (w.tokens(counter) <= cap).then_some(w)
    }

    /// Keeps the summary within a quarter of the cap: its oldest lines give way to what they
    /// mentioned.
    fn shrink_summary(&mut self, counter: &dyn TokenCounter) {
        let cap = self.cap / 4;
        let size =
            |w: &Self| counter.count(&w.summary.join("\n")) + counter.count(&w.mentions.join(", "));
        while self.summary.len() > 1 && size(self) > cap {
            let line = self.summary.remove(0);
            for m in mentions(&line) {
                if !self.mentions.contains(&m) {
                    self.mentions.push(m);
                }
            }
        }
    }

    fn phrase(&mut self, llm: &mut dyn Llm, sources: &[String], counter: &dyn TokenCounter) {
        let cap = self.cap / 4;
        let mut prompt = String::from(
            "Summarise these steps of an agent's task for the agent itself. Keep every number, \
             date, name, identifier and decision. DO NOT invent anything.\n",
        );
        prompt.push_str(&format!("At most {} words.\n\nSteps:\n", cap * 3 / 4));
        let mut all = sources.to_vec();
        all.extend(self.summary.iter().cloned());
        for s in &all {
            prompt.push_str(s);
            prompt.push('\n');
        }
        let answer = match llm.complete(&prompt, cap as u32) {
            Ok(a) => a,
            Err(e) => {
                self.llm_refused = format!("the model failed: {e}");
                return;
            }
        };
        match crate::compact::verify::check(&answer, &all, cap) {
            Ok(text) if counter.count(&text) <= cap => {
                // The model's text must keep what the extractive lines kept.
                let missing = self
                    .summary
                    .iter()
                    .flat_map(|l| mentions(l))
                    .find(|m| !text.to_lowercase().contains(&m.to_lowercase()));
                match missing {
                    Some(m) => self.llm_refused = format!("it dropped {m:?}"),
                    None => {
                        self.summary = vec![text];
                        self.summarised_by = "llm";
                        self.llm_refused.clear();
                    }
                }
            }
            Ok(_) => self.llm_refused = "over the summary's cap".into(),
            Err(why) => self.llm_refused = why,
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// Who wrote it (`user`, `contact`, `assistant`…).
    pub role: String,
    /// What it said.
    pub text: String,
}

/// A conversation as a context shows it: the last three rounds whole, earlier ones in three
/// sentences, the full transcript by reference.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    /// Three sentences on the earlier rounds (empty when there are three rounds or fewer).
    pub earlier: Vec<String>,
    /// Rounds summarised.
    pub earlier_rounds: usize,
    /// The last three rounds, whole.
    pub recent: Vec<Message>,
}

/// Rounds kept whole.
pub const RECENT_ROUNDS: usize = 3;

/// Splits `messages` into rounds (a round starts at each message of the first message's role)
/// and summarises all but the last [`RECENT_ROUNDS`]: the three sentences are the earlier
/// rounds' most informative sentences (mentions and decisions first, then the latest), each
/// clipped to [`LINE_WORDS`] words.
pub fn conversation(messages: &[Message]) -> Conversation {
    let Some(first) = messages.first() else {
        return Conversation { earlier: Vec::new(), earlier_rounds: 0, recent: Vec::new() };
    };
    let mut starts: Vec<usize> =
        messages.iter().enumerate().filter(|(_, m)| m.role == first.role).map(|(i, _)| i).collect();
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    let rounds = starts.len();
    if rounds <= RECENT_ROUNDS {
        return Conversation { earlier: Vec::new(), earlier_rounds: 0, recent: messages.to_vec() };
    }
    let cut = starts[rounds - RECENT_ROUNDS];
    let mut scored: Vec<(usize, usize, String)> = Vec::new();
    for (i, m) in messages[..cut].iter().enumerate() {
        for s in sentences(&m.text) {
            let weight = mentions(s).len() + if is_decision(s) { 2 } else { 0 };
            scored.push((weight, i, format!("{}: {}", m.role, clip_words(s, LINE_WORDS))));
        }
    }
    // The three weightiest sentences (the latest wins a tie), told in conversation order.
    let mut order: Vec<usize> = (0..scored.len()).collect();
    order.sort_by(|&a, &b| scored[b].0.cmp(&scored[a].0).then(b.cmp(&a)));
    let mut pick: Vec<usize> = order.into_iter().take(3).collect();
    pick.sort_unstable();
    Conversation {
        earlier: pick.into_iter().map(|i| scored[i].2.clone()).collect(),
        earlier_rounds: rounds - RECENT_ROUNDS,
        recent: messages[cut..].to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::tokens::Estimate;

    #[test]
    fn compress_keeps_mentions_and_decisions() {
        let l = compress(
            "Looked around the folder. Found invoice INV-2291 for 4,210 euros. It seemed fine. \
             We decided to pay on Friday because the supplier asked.",
        );
        assert!(l.contains("INV-2291") && l.contains("4,210") && l.contains("decided"), "{l}");
        assert!(l.contains("+2 routine sentences"), "{l}");
    }

    #[test]
    fn a_long_task_stays_under_its_cap() {
        let mut w = WorkingMemory::new("Answer Marco", 400);
        for i in 0..30 {
            let p = w.push(
                StepKind::Note,
                &format!("Step text {i} with order ORD-{i} and more filler words here."),
                &Estimate,
                None,
            );
            assert!(p.tokens <= 400, "{p:?}");
        }
        assert!(w.folded > 0);
        let all = format!("{} {}", w.summary.join(" "), w.mentions.join(" "));
        for i in 0..(30 - w.steps.len()) {
            assert!(all.contains(&format!("ORD-{i}")), "ORD-{i} lost: {all}");
        }
    }

    #[test]
    fn a_conversation_keeps_three_rounds() {
        let m = |role: &str, text: &str| Message { role: role.into(), text: text.into() };
        let msgs: Vec<Message> = (0..6)
            .flat_map(|i| {
                [
                    m("contact", &format!("Order {i} please.")),
                    m("assistant", &format!("Noted order {i}.")),
                ]
            })
            .collect();
        let c = conversation(&msgs);
        assert_eq!(c.earlier_rounds, 3);
        assert_eq!(c.recent.len(), 6);
        assert_eq!(c.recent[0].text, "Order 3 please.");
        assert_eq!(c.earlier.len(), 3);
    }
}
