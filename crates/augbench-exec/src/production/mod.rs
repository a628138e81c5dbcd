//! Production cells on the coordinator side (docs/pipeline.md, "Production cells"): what each
//! implementation builds of the catalog, asked of it (`coverage`; Python workers' answers kept
//! in the cache, `answers`), the run id
//! over every input (`identity`), the run's record (`record`), and the loop that measures the
//! missing cells and writes each as its own file (`run`; the file order per seed, `order`; the file format is augbench-core's
//! `production::cell`, the tables augbench-report's `production`). Declares the modules only.

mod answers;
pub mod coverage;
pub mod identity;
pub mod order;
pub mod record;
pub mod run;

pub use run::{ProductionRun, run};
