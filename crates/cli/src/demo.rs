//! `mnemo demo`: the mail agent's main job, end to end, on a store directory. Replays 90 days
//! of Maria Rossi's mail (`mnemo::demo::scenario`) with a nightly run each night, then
//! assembles the context for a new email from Marco Bertelli and prints it with each
//! section's tokens against its cap and what was withheld; then marks one observation wrong
//! and shows that it is gone.

use mnemo::demo::scenario::{scenario, NAMESPACE};
use mnemo::demo::Replayed;
use mnemo::record::{ObservationStatus, RuleStatus};
use mnemo_json::Json;
use serde_json::{json, Value};

use crate::globals::Globals;

/// `mnemo demo`'s options.
#[derive(clap::Args, Debug)]
pub struct Demo {
    /// Days of mail to replay
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u32).range(7..=365))]
    pub days: u32,
    /// Seed of the generated mail (the same seed gives the same history everywhere)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

fn err(e: mnemo::Error) -> String {
    e.to_string()
}

pub fn run(g: &Globals, a: &Demo) -> Result<(), String> {
    let mut engine = crate::memory::open_learning(g)?;
    if !engine.has_embedder() {
        return Err(format!(
            "the demo needs the model in {} (tools/build-model, or --model DIR)",
            g.model_dir().display()
        ));
    }
    let sc = scenario(a.seed, a.days);
    println!(
        "Replaying {} days of Maria Rossi's mail (Nico Rossi Ltd) into {}, namespace {NAMESPACE}:",
        a.days,
        g.store.display()
    );
    println!("her episodes and behaviour signals day by day, and the nightly job every night.");
    let bar = crate::progress::bar(u64::from(a.days), "days");
    let done = engine
        .replay_scenario(&sc, |day, night, so_far: &Replayed| {
            bar.set_position(u64::from(day.day));
            bar.set_message(format!(
                "days: {} episodes, {} signals, {} rules promoted tonight",
                so_far.stored,
                so_far.signals,
                night.promoted.len()
            ));
        })
        .map_err(err)?;
    bar.finish_and_clear();
    let ns = NAMESPACE;
    let at = sc.incoming_at;
    let stats = engine.stats(ns, at).map_err(err)?;
    println!(
        "\n{} episodes remembered ({} offered), {} signals, {} facts, {} nightly runs.",
        done.stored, done.episodes, done.signals, done.facts, done.nights
    );
    println!(
        "Compaction: {} weekly and {} monthly summaries stand for {} older records; {} records \
         are searched by default.",
        stats.tiers.weekly, stats.tiers.monthly, stats.cold, stats.retrievable
    );
    println!("\nWhat the engine learned from her edits (active rules):");
    for r in engine.rules(ns, &[RuleStatus::Active]).map_err(err)? {
        println!("  #{} {}  ({})", r.id, r.text, r.evidence);
    }

    println!("\nA new email arrives:\n  {}\n", sc.incoming);
    let request = json!({"task": sc.incoming, "level": 2}).to_string();
    let ctx: Value =
        serde_json::from_str(&Json(&mut engine).context(ns, &request, at).map_err(err)?)
            .map_err(|e| e.to_string())?;
    println!("The context mnemo assembles for it:\n");
    crate::learn::print_context(&ctx);

    // Maria says the observation the engine is least sure of is wrong: it is rejected for good.
    let ruled: Vec<u64> =
        engine.rules(ns, &[RuleStatus::Active]).map_err(err)?.iter().map(|r| r.id).collect();
    let open = engine.observations(ns, &[ObservationStatus::Open]).map_err(err)?;
    let candidate = open
        .iter()
        .filter(|o| !o.rule.is_some_and(|r| ruled.contains(&r)))
        .max_by_key(|o| (o.occurrences, std::cmp::Reverse(o.id)));
    let Some(wrong) = candidate.cloned() else {
        println!("\nNo open observation to mark wrong.");
        return Ok(());
    };
    engine.feedback(ns, wrong.id, false, at).map_err(err)?;
    println!(
        "\nMaria marks observation #{} wrong: \"{}\" ({}).",
        wrong.id, wrong.quote, wrong.evidence
    );
    // Another week of her mail: the same pattern keeps occurring in the signals.
    let later = scenario(a.seed, a.days + 7);
    let mut nights = 0;
    for day in &later.days[a.days as usize..] {
        for s in &day.signals {
            engine.signal_json(ns, &s.to_string()).map_err(err)?;
        }
        engine.nightly(ns, day.night, None).map_err(err)?;
        nights += 1;
    }
    let back = engine
        .observations(ns, &[ObservationStatus::Open])
        .map_err(err)?
        .into_iter()
        .any(|o| o.id == wrong.id || o.pattern == wrong.pattern);
    let request = json!({"task": later.incoming, "level": 2}).to_string();
    let again: Value = serde_json::from_str(
        &Json(&mut engine).context(ns, &request, later.incoming_at).map_err(err)?,
    )
    .map_err(|e| e.to_string())?;
    let listed = again.to_string().contains(&format!("observation:{}", wrong.id));
    if back || listed {
        return Err(format!("observation #{} came back after it was marked wrong", wrong.id));
    }
    println!(
        "It is gone: {nights} more nights of her mail later it is not among the open \
         observations, not in the context (nor its withheld list), and its pattern was not \
         proposed again."
    );
    Ok(())
}
