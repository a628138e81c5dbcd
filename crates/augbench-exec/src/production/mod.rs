//! Production cells on the coordinator side (docs/pipeline.md, "Production cells"): the run id
//! over every input (`identity`), the run's record (`record`), one immutable file per finished
//! cell and its validation on resume (`cell`), the loop that measures the missing cells (`run`),
//! and the tables of a finished run (`summary`). This file only declares the modules.

pub mod cell;
pub mod identity;
pub mod record;
pub mod run;
pub mod summary;

pub use run::{ProductionRun, run};
