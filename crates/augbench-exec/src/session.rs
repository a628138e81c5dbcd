//! One run on this machine, end to end (`augbench run`): from a resolved config to the written
//! files. It checks that the config can be measured here, settles the device and builds the plan
//! (`core::settle`, the same plan `augbench plan` prints), holds the output folder, writes the
//! resolved config, prepares the media, runs the equivalence check, measures (timing, counts or
//! decoders), appends the cell log, and hands back what happened. The caller parses arguments,
//! owns Ctrl-C and the progress display, and prints what the report crate renders.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use augbench_cells::AppendReport;
use augbench_core::plan::Plan;
use augbench_core::{Measure, Mode, RunConfig, UsageError, settle, validate};
use augbench_host::run_lock::RunLock;
use indicatif::MultiProgress;

use crate::equivalence::{Check, in_run};
use crate::orchestrate::{self, RunReport};
use crate::{cells_log, time_split};

/// What a run did: the plan that ran, each job's outcome, the equivalence check and the cell log.
pub struct Outcome {
    /// The plan as run: the device settled for this machine, a spec file's library alone.
    pub plan: Plan,
    pub report: RunReport,
    pub check: Option<Check>,
    /// The cell log's append; `None` when no row was measured.
    pub cells: Option<AppendReport>,
}

impl Outcome {
    /// A decode run (decoders, not transforms).
    pub fn decode(&self) -> bool {
        self.plan.config.selection.mode == Some(Mode::Decode)
    }
}

/// Runs `cfg` (resolved from `source`, the config file the user gave) on this machine.
/// `stop` is raised by the caller on Ctrl-C: the transform in flight finishes, the rest waits
/// for `--resume`.
pub fn run(
    cfg: &RunConfig,
    source: &Path,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<Outcome> {
    let (settled, plan) = plan_here(cfg, source)?;
    let out = output_folder(&settled)?;
    // Held until the run returns, whichever way (its guard releases the folder on drop).
    let lock = RunLock::acquire(&out)?;
    if let Some(note) = &lock.note {
        eprintln!("{note}");
    }
    let resolved = orchestrate::write_resolved_config(&settled)?;
    eprintln!(
        "augbench: {} jobs; resolved config: {}",
        plan.jobs.len(),
        resolved.display()
    );
    for note in &plan.target_notes {
        eprintln!("augbench: {note}");
    }
    let media = time_split::part("dataset", || orchestrate::prepare_media(&settled, mp))?;
    let check = time_split::part("equivalence check", || equivalence_check(&plan, mp))?;
    let report = if settled.selection.mode == Some(Mode::Decode) {
        crate::decode::run(&plan, &media, mp, stop)?
    } else {
        orchestrate::execute(&plan, &media, check.as_ref(), mp, stop)
    };
    let cells = cells_log::append(&settled, &report)?;
    Ok(Outcome {
        plan,
        report,
        check,
        cells,
    })
}

/// The checks of running here, then the plan: the settled config (what the run records) and the
/// plan that runs (a spec file's library alone). Every refusal comes before anything is built.
fn plan_here(cfg: &RunConfig, source: &Path) -> anyhow::Result<(RunConfig, Plan)> {
    preflight(cfg, source)?;
    let cuda = augbench_host::machine::cuda_here();
    validate::device_present(cfg, cuda)?;
    time_split::start();
    let settled = settle::device(cfg.clone(), cuda);
    warn_oversubscribed_workers(&settled);
    warn_if_busy();
    // A spec file's LIBRARY line is read before any media is prepared or worker started.
    let plan = settle::for_machine(&orchestrate::spec_config(&settled)?, cuda);
    // A/B: every pin must resolve before any environment is built (a typo is exit 2, not a
    // half-built run).
    let variants: Vec<_> = plan
        .jobs
        .iter()
        .filter_map(|j| j.variant.as_ref())
        .collect();
    augbench_env::check_pins(&variants)?;
    Ok((settled, plan))
}

/// What any run of `cfg` needs, here or on a cloud machine, checked before anything is built:
/// a config this build can measure, and Valgrind for instruction counts (missing: exit 2 with
/// the package named).
pub fn preflight(cfg: &RunConfig, source: &Path) -> anyhow::Result<()> {
    validate::measurable(cfg, source)?;
    if cfg.execution.measure == Some(Measure::Instructions) {
        crate::counts::valgrind::version()?;
    }
    Ok(())
}

/// The run's output folder; a file in its place is a usage error.
fn output_folder(cfg: &RunConfig) -> Result<PathBuf, UsageError> {
    let out = augbench_core::naming::output_dir(cfg);
    if out.exists() && !out.is_dir() {
        return Err(UsageError::new(
            format!(
                "the output `{}` is a file; the output must be a folder",
                out.display()
            ),
            "give --output (or output.output_dir) a folder path; it is created when missing",
        ));
    }
    Ok(out)
}

/// With `execution.check_equivalence`: the check, before any timing, its table printed. A
/// mismatch is reported (here and in the summary) and does not fail the run: the timings stay
/// valid measurements of what each library does; `augbench check equivalence` is the gate.
fn equivalence_check(plan: &Plan, mp: &MultiProgress) -> anyhow::Result<Option<Check>> {
    let Some(check) = in_run::for_run(plan, mp)? else {
        return Ok(None);
    };
    mp.suspend(|| {
        println!("Equivalence check (before timing; not timed)");
        print!("{}", crate::equivalence::verdict::table(&check));
        if check.mismatched() {
            eprintln!(
                "warning: the equivalence check found a MISMATCH in {}: those rows may not compare the same work",
                check.mismatches().join(", ")
            );
        }
    });
    Ok(Some(check))
}

/// More loader workers than cores is allowed (and recorded), but the user should know.
fn warn_oversubscribed_workers(cfg: &RunConfig) {
    let workers = cfg.execution.workers.unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    if cfg.selection.mode == Some(Mode::Pipeline) && workers > cores {
        eprintln!(
            "warning: {workers} loader workers on {cores} cores: the workers share cores, so the pipeline rows measure an oversubscribed machine"
        );
    }
}

/// Like pyperf's system checks: a loaded machine or a stealing hypervisor makes numbers noisy.
fn warn_if_busy() {
    let why = augbench_host::machine::busy_reasons(&augbench_host::machine::state());
    if !why.is_empty() {
        eprintln!(
            "warning: the machine is busy: {}. Numbers measured now carry more noise; `augbench doctor` shows the machine card",
            why.join("; ")
        );
    }
}
