//! Which records compaction puts together.
//!
//! **Tier 1 (weekly).** Live raw episodes older than `Compaction::weekly_after_days` are
//! grouped by agent × contact (the episode's first entity, or none) × ISO week. Per agent and
//! contact, the weeks are walked oldest first:
//!
//! - a week of 5–15 rows (`min_group`–`max_group`) is one group;
//! - a week of more than 15 is split into the fewest balanced groups of at most 15 (20 rows →
//!   10 + 10), each therefore at least 8;
//! - a week of fewer than 5 **joins the next week** of the same agent and contact while the
//!   two together stay within 15 (so three quiet weeks of 2 rows become one group of 6);
//! - what is still under 5 after that **waits**: it is compacted once its newest row is older
//!   than `wait_days` (60) if it holds at least 2 rows; a single row is left raw for good (one
//!   row has nothing to summarise, and it keeps decaying like any raw episode).
//!
//! **Tier 2 (monthly).** Active weekly summaries older than `monthly_after_days` are grouped
//! by agent × contact × calendar month (of the summary's time, its newest source); a month
//! with at least 2 summaries becomes one monthly overview. A lone weekly summary stays as it
//! is: merging one record into one record saves nothing.
//!
//! Planning is a pure function of the eligible records and `now`, so a run cut short and
//! resumed plans the rest exactly as an uninterrupted run would: groups already written are
//! no longer eligible, and every decision depends only on the weeks at or after it.

use std::collections::BTreeMap;

use crate::time::{civil_from_days, DAY};

/// A record compaction may group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Episode id.
    pub id: u64,
    /// Its time (ms).
    pub created_at: i64,
    /// Its agent.
    pub agent: String,
    /// Its contact: the first entity, lower-cased, or empty.
    pub contact: String,
}

/// Compaction settings (the thresholds of the tier pipeline).
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// Raw episodes older than this many days are compacted weekly (30).
    pub weekly_after_days: i64,
    /// Weekly summaries older than this many days are compacted monthly (90).
    pub monthly_after_days: i64,
    /// Smallest weekly group (5).
    pub min_group: usize,
    /// Largest weekly group (15).
    pub max_group: usize,
    /// A group still under `min_group` is compacted anyway once its newest row is this old (60).
    pub wait_days: i64,
    /// Token cap of a weekly summary's text (400; estimate: characters / 4).
    pub weekly_tokens: usize,
    /// Token cap of a monthly overview's text (600).
    pub monthly_tokens: usize,
    /// Two kept lines whose episodes' cosine is at least this say the same thing: the later
    /// one is dropped as redundant (0.95).
    pub redundant_cosine: f32,
}

impl Default for Compaction {
    fn default() -> Self {
        Self {
            weekly_after_days: 30,
            monthly_after_days: 90,
            min_group: 5,
            max_group: 15,
            wait_days: 60,
            weekly_tokens: 400,
            monthly_tokens: 600,
            redundant_cosine: 0.95,
        }
    }
}

/// The Monday-based week number of `ms` (weeks since the Monday before the epoch).
pub fn week_of(ms: i64) -> i64 {
    // 1970-01-01 was a Thursday: shifting by 3 days puts week starts on Mondays.
    (ms.div_euclid(DAY) + 3).div_euclid(7)
}

/// The ISO-8601 label of the week `week_of` returned ("2026-W14").
pub fn week_label(week: i64) -> String {
    let thursday = week * 7 - 3 + 3; // the week's Monday is week*7 − 3; its Thursday 3 days on
    let (y, _, _) = civil_from_days(thursday);
    let jan1 = crate::time::days_from_civil(y, 1, 1);
    format!("{y:04}-W{:02}", (thursday - jan1) / 7 + 1)
}

/// The calendar month of `ms` as `year * 12 + month − 1`.
pub fn month_of(ms: i64) -> i64 {
    let (y, m, _) = civil_from_days(ms.div_euclid(DAY));
    y * 12 + i64::from(m) - 1
}

/// The label of a `month_of` value ("2026-03").
pub fn month_label(month: i64) -> String {
    format!("{:04}-{:02}", month.div_euclid(12), month.rem_euclid(12) + 1)
}

fn by_key<F: Fn(i64) -> i64>(
    items: &[Item],
    period: F,
) -> BTreeMap<(String, String), BTreeMap<i64, Vec<&Item>>> {
    let mut out: BTreeMap<(String, String), BTreeMap<i64, Vec<&Item>>> = BTreeMap::new();
    for it in items {
        out.entry((it.agent.clone(), it.contact.clone()))
            .or_default()
            .entry(period(it.created_at))
            .or_default()
            .push(it);
    }
    for weeks in out.values_mut() {
        for rows in weeks.values_mut() {
            rows.sort_by_key(|it| (it.created_at, it.id));
        }
    }
    out
}

/// Splits `rows` into the fewest balanced groups of at most `max`.
fn split(rows: Vec<u64>, max: usize) -> Vec<Vec<u64>> {
    let parts = rows.len().div_ceil(max.max(1)).max(1);
    let (base, extra) = (rows.len() / parts, rows.len() % parts);
    let mut out = Vec::with_capacity(parts);
    let mut it = rows.into_iter();
    for p in 0..parts {
        out.push(it.by_ref().take(base + usize::from(p < extra)).collect());
    }
    out
}

/// Weekly groups (episode ids, oldest first) among `items` — the caller passes only live raw
/// episodes older than `weekly_after_days`. See the module docs.
pub fn plan_weekly(items: &[Item], now: i64, c: &Compaction) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let waited = now.saturating_sub(c.wait_days.saturating_mul(DAY));
    for weeks in by_key(items, week_of).into_values() {
        let mut pending: Vec<&Item> = Vec::new();
        let flush = |pending: &mut Vec<&Item>, out: &mut Vec<Vec<u64>>| {
            let newest = pending.iter().map(|it| it.created_at).max().unwrap_or(i64::MAX);
            if pending.len() >= c.min_group || (pending.len() >= 2 && newest < waited) {
                out.extend(split(pending.iter().map(|it| it.id).collect(), c.max_group));
            }
            pending.clear();
        };
        for rows in weeks.into_values() {
            if !pending.is_empty() && pending.len() + rows.len() > c.max_group {
                flush(&mut pending, &mut out);
            }
            pending.extend(rows);
            if pending.len() >= c.min_group {
                flush(&mut pending, &mut out);
            }
        }
        flush(&mut pending, &mut out);
    }
    out
}

/// Monthly groups (weekly summary ids, oldest first) among `items` — the caller passes only
/// active weekly summaries older than `monthly_after_days`.
pub fn plan_monthly(items: &[Item]) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    for months in by_key(items, month_of).into_values() {
        for rows in months.into_values() {
            if rows.len() >= 2 {
                out.push(rows.iter().map(|it| it.id).collect());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::days_from_civil;

    fn at(y: i64, m: u32, d: u32) -> i64 {
        days_from_civil(y, m, d) * DAY + 12 * 3_600_000
    }

    fn items(spec: &[(i64, usize)]) -> Vec<Item> {
        let mut out = Vec::new();
        for &(day, n) in spec {
            for _ in 0..n {
                let id = out.len() as u64 + 1;
                out.push(Item {
                    id,
                    created_at: day + id as i64,
                    agent: "a".into(),
                    contact: String::new(),
                });
            }
        }
        out
    }

    #[test]
    fn iso_weeks_and_months() {
        assert_eq!(week_label(week_of(at(2026, 1, 1))), "2026-W01");
        assert_eq!(week_label(week_of(at(2021, 1, 3))), "2020-W53");
        assert_eq!(week_label(week_of(at(2024, 12, 30))), "2025-W01");
        assert_eq!(week_of(at(2026, 3, 2)), week_of(at(2026, 3, 8)), "Monday to Sunday");
        assert_ne!(week_of(at(2026, 3, 8)), week_of(at(2026, 3, 9)));
        assert_eq!(month_label(month_of(at(2026, 3, 31))), "2026-03");
    }

    #[test]
    fn weeks_group_split_join_and_wait() {
        let now = at(2026, 12, 1);
        let c = Compaction::default();
        // 8 rows in one week: one group. 20 rows: 10 + 10.
        let g = plan_weekly(&items(&[(at(2026, 3, 3), 8)]), now, &c);
        assert_eq!(g.iter().map(Vec::len).collect::<Vec<_>>(), vec![8]);
        let g = plan_weekly(&items(&[(at(2026, 3, 3), 20)]), now, &c);
        assert_eq!(g.iter().map(Vec::len).collect::<Vec<_>>(), vec![10, 10]);
        // Three quiet weeks of 2 join into one group of 6.
        let spec = [(at(2026, 3, 3), 2), (at(2026, 3, 10), 2), (at(2026, 3, 17), 2)];
        let g = plan_weekly(&items(&spec), now, &c);
        assert_eq!(g.iter().map(Vec::len).collect::<Vec<_>>(), vec![6]);
        // Under 5 and recent: waits. Under 5 and old: compacted. One row: never.
        let recent = now - 40 * DAY;
        assert!(plan_weekly(&items(&[(recent, 3)]), now, &c).is_empty());
        assert_eq!(plan_weekly(&items(&[(at(2026, 3, 3), 3)]), now, &c).len(), 1);
        assert!(plan_weekly(&items(&[(at(2026, 3, 3), 1)]), now, &c).is_empty());
        // Agents and contacts never mix.
        let mut mixed = items(&[(at(2026, 3, 3), 10)]);
        for it in mixed.iter_mut().step_by(2) {
            it.contact = "acme".into();
        }
        let g = plan_weekly(&mixed, now, &c);
        assert_eq!(g.iter().map(Vec::len).collect::<Vec<_>>(), vec![5, 5]);
    }

    #[test]
    fn planning_the_rest_after_a_written_group_gives_the_same_groups() {
        let now = at(2026, 12, 1);
        let c = Compaction::default();
        let spec = [
            (at(2026, 1, 6), 3),
            (at(2026, 1, 13), 30),
            (at(2026, 1, 20), 2),
            (at(2026, 1, 27), 4),
            (at(2026, 2, 3), 7),
            (at(2026, 2, 10), 1),
        ];
        let all = items(&spec);
        let full = plan_weekly(&all, now, &c);
        for done in 0..full.len() {
            let written: Vec<u64> = full[..done].iter().flatten().copied().collect();
            let rest: Vec<Item> =
                all.iter().filter(|it| !written.contains(&it.id)).cloned().collect();
            assert_eq!(plan_weekly(&rest, now, &c), full[done..].to_vec(), "after {done} groups");
        }
    }

    #[test]
    fn months_need_two_summaries() {
        let one = items(&[(at(2026, 3, 3), 1), (at(2026, 4, 3), 3)]);
        assert_eq!(plan_monthly(&one), vec![vec![2, 3, 4]]);
    }
}
