//! Judging: every verdict augbench gives, as data for the renderers. `verdict` holds the words
//! around `augbench_stats::verdict`'s rule (notes, the rule text, rows measured on one side);
//! `ab` judges variants of one run, `regression` a run against a baseline's invocations (with
//! `drift`, what moves between invocations), `counts` instruction counts; `interval` chooses
//! the clock an A/B ratio is read on. Nothing here formats a table or picks an output format.

pub mod ab;
pub mod counts;
pub mod drift;
pub mod interval;
pub mod regression;
pub mod verdict;
