//! The interleaved schedule (scheduling.md): a transform is measured across all its libraries at
//! once. Every library keeps a live worker with its media loaded; each transform is set up in
//! every worker, then timed in rounds, every library one run a round in a seeded random order,
//! with the drift sentinel timed once a round. Paired speedups come from the same rounds; in
//! pipeline runs every round also times each library's decode ceiling beside its row. Fresh
//! worker processes per process round; results are rewritten after every transform.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use augbench_catalog::registry::TransformSpec;
use augbench_core::results::{Status, TransformResult};
use augbench_core::{Schedule, policy};
use indicatif::{MultiProgress, ProgressBar};

use crate::job::{JobInput, JobOutcome, not_in_registry, spec_for, stopped_by_user};
use crate::lane::{Companion, Lane};
use crate::precision::{RoundsClock, Target, earlier_paired, runs_so_far, widths_so_far};
use crate::progress::{Work, work_bar};
use crate::rounds::{Sentinel, annotate, round_order};
use crate::underway::{Begun, Underway, begin, companion_window, ensure_companion};
use augbench_host::child::CommandLine;
use augbench_protocol::protocol::LoaderSlot;

/// A library's lane, or why it stopped (its job failed; its file keeps what it measured).
struct Slot<'a> {
    /// Position of the job among the inputs.
    index: usize,
    lane: Lane<'a>,
    failed: Option<anyhow::Error>,
}

struct Interleaved<'a, 'm> {
    slots: Vec<Slot<'a>>,
    sentinel: Option<Sentinel>,
    /// This invocation's rounds: `<token>/<transform>` is a transform's `rounds_id`.
    token: String,
    /// The sentinel's times (ms) per transform, across processes.
    drift: BTreeMap<String, Vec<f64>>,
    bar: ProgressBar,
    /// What the bar shows: every transform once per process, weighted by its cost.
    work: Work,
    mp: &'m MultiProgress,
    stop: &'m AtomicBool,
}

/// Runs the jobs of `inputs` (one per library) interleaved; one outcome per input, in order.
/// A job that cannot start fails alone; the others still run.
pub fn run_interleaved(
    inputs: &[JobInput<'_>],
    sentinel: anyhow::Result<CommandLine>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> Vec<anyhow::Result<JobOutcome>> {
    let (slots, mut outcomes) = open_slots(inputs, mp);
    let names = inputs
        .first()
        .map(|i| i.job.transforms.clone())
        .unwrap_or_default();
    let label = lanes_label(&slots, inputs);
    let mut run = Interleaved {
        slots,
        sentinel: start_sentinel(sentinel, mp),
        token: format!("{}-{}", augbench_host::facts::now_utc(), std::process::id()),
        drift: BTreeMap::new(),
        bar: work_bar(mp, label),
        work: Work::default(),
        mp,
        stop,
    };
    let interrupted = match run.run(&names) {
        Ok(finished) => !finished,
        // A result that cannot be written stops every library.
        Err(e) => {
            for s in &mut run.slots {
                s.failed.get_or_insert(anyhow::anyhow!("{e:#}"));
            }
            false
        }
    };
    run.finish(interrupted);
    for slot in run.slots {
        outcomes[slot.index] = match slot.failed {
            Some(e) => Err(e),
            None => Ok(JobOutcome {
                results: slot.lane.rec.close(),
                interrupted,
            }),
        };
    }
    outcomes
}

/// A lane for every input whose worker starts; the outcomes of those that do not.
fn open_slots<'a>(
    inputs: &'a [JobInput<'a>],
    mp: &MultiProgress,
) -> (Vec<Slot<'a>>, Vec<anyhow::Result<JobOutcome>>) {
    let mut slots = Vec::new();
    let mut outcomes = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        match Lane::open(input, Schedule::Interleaved, mp) {
            Ok(lane) => {
                slots.push(Slot {
                    index,
                    lane,
                    failed: None,
                });
                outcomes.push(Err(anyhow::anyhow!("{} did not run", input.job.library)));
            }
            Err(e) => outcomes.push(Err(e)),
        }
    }
    (slots, outcomes)
}

fn lanes_label(slots: &[Slot<'_>], inputs: &[JobInput<'_>]) -> String {
    let libs: Vec<&str> = slots
        .iter()
        .map(|s| s.lane.input.job.library.as_str())
        .collect();
    let Some(first) = inputs.first() else {
        return "Interleaved transforms".to_string();
    };
    if first.job.mode == augbench_core::Mode::Pipeline {
        let set = crate::pipeline::PipelineSettings::from_config(first.cfg, "cpu");
        return format!(
            "Pipeline transforms ({}, {}, w={}, b={}, interleaved)",
            libs.join(", "),
            set.scope,
            set.workers,
            set.batch_size
        );
    }
    format!(
        "Interleaved transforms ({}: {})",
        first.job.scenario,
        libs.join(", ")
    )
}

fn start_sentinel(command: anyhow::Result<CommandLine>, mp: &MultiProgress) -> Option<Sentinel> {
    match command.and_then(|c| Sentinel::start(&c)) {
        Ok(s) => Some(s),
        Err(e) => {
            mp.suspend(|| eprintln!("drift sentinel unavailable ({e:#}); results record no drift"));
            None
        }
    }
}

impl<'a> Interleaved<'a, '_> {
    /// All processes over the pending transforms; false when interrupted.
    fn run(&mut self, names: &[String]) -> anyhow::Result<bool> {
        let processes = self.processes();
        let pending = self.pending(names)?;
        self.work = Work::new(pending.len(), processes);
        self.work.show(&self.bar);
        for p in 0..processes {
            if p > 0 {
                self.pin_all(p);
                self.restart_all();
            }
            if !self.process_round(&pending, p)? {
                return Ok(false);
            }
            if p == 0 {
                let seconds = crate::time_split::transform_seconds;
                self.work.first_process_done(&pending, seconds, processes);
            }
        }
        // Every transform may take more processes, the ones `--resume` kept among them: a run
        // interrupted among its extra processes goes on with them.
        self.more_processes(names, processes)
    }

    /// Process `p` over `names`; false when interrupted.
    fn process_round(&mut self, names: &[String], p: u64) -> anyhow::Result<bool> {
        for name in names {
            if self.stop.load(Ordering::SeqCst) || !self.transform(name, p)? {
                return Ok(false);
            }
            self.work.finished(name);
            self.work.show(&self.bar);
        }
        Ok(true)
    }

    /// Measuring to a precision: after the configured processes, the transforms whose intervals
    /// over the processes are still wider than the target take one more process each while their
    /// budget lasts, up to `policy::PRECISION_MAX_PROCESSES`; process `p` is due for those that
    /// have `p` so far (one kept by `--resume` may have more). False when interrupted.
    fn more_processes(&mut self, names: &[String], from: u64) -> anyhow::Result<bool> {
        if self.target().is_none() {
            return Ok(true);
        }
        for p in from..policy::PRECISION_MAX_PROCESSES {
            let due: Vec<String> = names
                .iter()
                .filter(|n| self.processes_so_far(n) == p && self.wants_another_process(n, p))
                .cloned()
                .collect();
            if due.is_empty() {
                continue; // a kept transform may be due at a later `p`
            }
            self.work.more(&due);
            self.work.show(&self.bar);
            self.pin_all(p);
            self.restart_for(&due);
            if !self.process_round(&due, p)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The live libraries' measured (`ok`) results of `name` so far.
    fn measured_results<'s>(
        &'s self,
        name: &'s str,
    ) -> impl Iterator<Item = &'s augbench_core::results::TransformResult> {
        self.live()
            .filter_map(move |s| s.lane.rec.acc.get(name))
            .filter(|r| r.status == Some(augbench_core::results::Status::Ok))
    }

    /// The worker processes `name` has been measured in so far (the most of any library's).
    fn processes_so_far(&self, name: &str) -> u64 {
        self.measured_results(name)
            .map(|r| (r.process_runs.len() as u64).max(1))
            .max()
            .unwrap_or(0)
    }

    /// Whether `name`, measured in `processes` processes, takes another (`another_process`).
    fn wants_another_process(&self, name: &str, processes: u64) -> bool {
        self.transform_precision(name).is_some_and(|rec| {
            augbench_stats::precision::another_process(
                &rec,
                processes,
                policy::PRECISION_MAX_PROCESSES,
            )
        })
    }

    fn processes(&self) -> u64 {
        self.slots
            .first()
            .and_then(|s| s.lane.input.cfg.execution.processes)
            .unwrap_or(policy::DEFAULT_PROCESSES)
            .max(1)
    }

    /// Transforms to measure. `--resume` keeps a transform only when every library's earlier
    /// result is finished and the measured ones came from the same rounds (so they still pair);
    /// otherwise all libraries measure it again.
    fn pending(&mut self, names: &[String]) -> anyhow::Result<Vec<String>> {
        let processes = self.processes();
        let mut pending = Vec::new();
        for name in names {
            let kept: Vec<_> = self
                .live()
                .map(|s| s.lane.rec.reusable(name, processes))
                .collect();
            let rounds: std::collections::BTreeSet<_> = kept
                .iter()
                .flatten()
                .filter_map(|r| r.rounds_id.clone())
                .collect();
            if kept.iter().all(Option::is_some) && rounds.len() <= 1 {
                // The sentinel's times of the kept rounds, so that a later process's rounds
                // extend them in order.
                if let Some(d) = kept.iter().flatten().find_map(|r| r.drift.as_ref()) {
                    self.drift.insert(name.clone(), d.times_ms.clone());
                }
                for (s, r) in self.live_mut().zip(kept.into_iter().flatten()) {
                    s.lane.rec.keep(name, r);
                }
            } else {
                pending.push(name.clone());
            }
        }
        for s in self.live() {
            s.lane.rec.save()?;
        }
        Ok(pending)
    }

    fn live(&self) -> impl Iterator<Item = &Slot<'a>> {
        self.slots.iter().filter(|s| s.failed.is_none())
    }

    fn live_mut(&mut self) -> impl Iterator<Item = &mut Slot<'a>> {
        self.slots.iter_mut().filter(|s| s.failed.is_none())
    }

    /// Fresh worker processes for an extra process round over `due`: only the libraries that
    /// measured one of those transforms take part, so only theirs start again.
    fn restart_for(&mut self, due: &[String]) {
        let mp = self.mp;
        for s in self.live_mut() {
            if due.iter().any(|n| s.lane.measured(n))
                && let Err(e) = s.lane.restart(mp)
            {
                s.failed = Some(e);
            }
        }
    }

    /// The CPU every lane's next worker runs on (A/B micro runs: `lane::pin_for`).
    fn pin_all(&mut self, p: u64) {
        for s in self.live_mut() {
            s.lane.pin = crate::lane::pin_for(s.lane.input, p);
        }
    }

    /// Fresh worker processes for the next process round; a library whose worker cannot start
    /// again stops there (its job fails, its file keeps the earlier processes' results).
    fn restart_all(&mut self) {
        let mp = self.mp;
        for s in self.live_mut() {
            if let Err(e) = s.lane.restart(mp) {
                s.failed = Some(e);
            }
        }
    }

    /// One transform in process `p`: set up in every library, then the rounds, then the
    /// annotations. False when interrupted.
    fn transform(&mut self, name: &str, p: u64) -> anyhow::Result<bool> {
        let participants: Vec<usize> = (0..self.slots.len())
            .filter(|i| {
                let s = &self.slots[*i];
                s.failed.is_none() && (p == 0 || s.lane.measured(name))
            })
            .collect();
        let Some(spec) = participants
            .first()
            .and_then(|i| spec_for(&self.slots[*i].lane.w, name))
        else {
            for i in participants {
                self.slots[i].lane.rec.record(name, not_in_registry(name))?;
            }
            return Ok(true);
        };
        let Some(mut active) = self.set_up(&spec, &participants)? else {
            return Ok(false);
        };
        if self.pairs_ceiling(name) {
            let Some(kept) = self.start_companions(&spec, active)? else {
                return Ok(false);
            };
            active = kept;
        }
        if !self.rounds(&spec, p, active)? {
            return Ok(false);
        }
        self.annotate(name)?;
        Ok(true)
    }

    /// Contract check, preflight and warmup in every participant; those that need no runs
    /// (unsupported, slow, error) are recorded and drop out. `None` when interrupted.
    fn set_up(
        &mut self,
        spec: &TransformSpec,
        participants: &[usize],
    ) -> anyhow::Result<Option<Vec<(usize, Underway)>>> {
        let mut active = Vec::new();
        for &i in participants {
            let (mp, bar) = (self.mp, &self.bar);
            let lane = &mut self.slots[i].lane;
            let lib = lane.input.job.library.clone();
            let mut on_phase = |ph: String| bar.set_message(format!("{}: {ph} · {lib}", spec.name));
            let replaced = match begin(lane, spec, &mut on_phase) {
                Ok(Begun::Underway(m)) => {
                    active.push((i, m));
                    continue;
                }
                Ok(Begun::Finished(r))
                    if r.status == Some(Status::Error) && stopped_by_user(self.stop) =>
                {
                    return Ok(None);
                }
                Ok(Begun::Finished(r)) => {
                    lane.rec.record(&spec.name, *r)?;
                    lane.revive(mp)
                }
                Err(_) if stopped_by_user(self.stop) => return Ok(None),
                Err(e) => lane.record_loss(spec, e, mp)?,
            };
            self.stop_if_gone(i, replaced);
        }
        Ok(Some(active))
    }

    /// Whether the rounds of `name` time the decode ceiling's companion beside each row: pipeline
    /// jobs of registry transforms that measure the ceiling, for every row but the ceiling's.
    fn pairs_ceiling(&self, name: &str) -> bool {
        let ceiling = &augbench_catalog::recipe::Recipe::get().ceiling;
        self.slots.first().is_some_and(|s| {
            let job = &s.lane.input.job;
            job.mode == augbench_core::Mode::Pipeline
                && s.lane.w.custom.is_none()
                && name != ceiling
                && job.transforms.contains(ceiling)
        })
    }

    /// The companion in every active library's worker (started once per worker process; its
    /// windows of an earlier transform are dropped). A library whose worker is lost meanwhile
    /// records the row's `error` and leaves the rounds. `None` when interrupted.
    fn start_companions(
        &mut self,
        spec: &TransformSpec,
        active: Vec<(usize, Underway)>,
    ) -> anyhow::Result<Option<Vec<(usize, Underway)>>> {
        let mut kept = Vec::new();
        for (i, m) in active {
            let (mp, bar) = (self.mp, &self.bar);
            let lane = &mut self.slots[i].lane;
            let lib = lane.input.job.library.clone();
            let mut on_phase = |ph: String| bar.set_message(format!("{}: {ph} · {lib}", spec.name));
            match ensure_companion(lane, &mut on_phase) {
                Ok(()) => kept.push((i, m)),
                Err(_) if stopped_by_user(self.stop) => return Ok(None),
                Err(e) => {
                    let replaced = lane.record_loss(spec, e, mp)?;
                    self.stop_if_gone(i, replaced);
                }
            }
        }
        Ok(Some(kept))
    }

    /// A library whose worker could not be started again stops here (its job fails with why);
    /// the others go on.
    fn stop_if_gone(&mut self, i: usize, replaced: anyhow::Result<()>) {
        if let Err(e) = replaced {
            self.slots[i].failed = Some(e);
        }
    }

    /// Rounds until no library wants another run: each round every active library times one
    /// run, in the round's seeded order, then the sentinel. A library whose run fails is recorded
    /// (`error`, or what its worker said) and leaves the rounds; the others go on.
    fn rounds(
        &mut self,
        spec: &TransformSpec,
        p: u64,
        mut active: Vec<(usize, Underway)>,
    ) -> anyhow::Result<bool> {
        let mut round = 0;
        let target = self.target();
        let pairs = self.pairs_ceiling(&spec.name);
        let earlier = self.transform_precision(&spec.name);
        let spent = earlier.as_ref().map_or(0.0, |e| e.seconds);
        let before = match target {
            Some(_) => self.earlier_runs(&spec.name, p, &active),
            None => Vec::new(),
        };
        let mut clock = match &target {
            Some(t) => {
                let prior = self.run_prior(&spec.name, earlier_paired(&before));
                RoundsClock::start(
                    t.process_budget(spent),
                    t.process_aim(&before, prior.as_ref()),
                )
            }
            None => RoundsClock::start(0.0, 0.0),
        };
        // Below `MIN_PROCESS_UNITS` processes the intervals pool the runs, so rounds narrow the
        // intervals over the processes too, and the rule reads those; from there on only more
        // processes do, and it reads this process's own.
        let pooled = p + 1 < policy::MIN_PROCESS_UNITS as u64;
        while match &target {
            Some(_) => {
                let current: Vec<Vec<f64>> = active.iter().map(|(_, m)| m.throughputs()).collect();
                let (runs, groups) = pooled
                    .then(|| runs_so_far(&before, &current))
                    .flatten()
                    .unwrap_or((current, Vec::new()));
                clock.more(&runs, &groups, round)
            }
            None => active
                .iter()
                .any(|(i, m)| m.wants_more(&self.slots[*i].lane)),
        } {
            if self.stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            let mut dropped = Vec::new();
            if self.chunked(&active) {
                if !self.chunked_round(spec, (p, round), &mut active, &mut dropped)? {
                    return Ok(false);
                }
                dropped.clear(); // `chunked_round` removed them
                crate::time_split::part("drift sentinel", || self.time_sentinel(&spec.name));
                round += 1;
                continue;
            }
            let units = self.round_units(&active, pairs);
            let shared = units.len() > 1;
            for u in round_order(units.len(), &spec.name, p, round) {
                let (k, slot) = units[u];
                if dropped.contains(&k) {
                    continue;
                }
                let (i, m) = &mut active[k];
                let step = match slot {
                    LoaderSlot::Row => self.one_run(spec, *i, m, round, shared)?,
                    LoaderSlot::Ceiling => self.companion_run(spec, *i)?,
                };
                match step {
                    RunStep::Ran => {}
                    RunStep::Dropped => dropped.push(k),
                    RunStep::Interrupted => return Ok(false),
                }
            }
            dropped.sort_unstable_by(|a, b| b.cmp(a));
            for k in dropped {
                active.remove(k);
            }
            crate::time_split::part("drift sentinel", || self.time_sentinel(&spec.name));
            round += 1;
        }
        let rounds_id = format!("{}/{}", self.token, spec.name);
        let precision = target.map(|t| {
            let current: Vec<Vec<f64>> = active.iter().map(|(_, m)| m.throughputs()).collect();
            let prior = self.run_prior(&spec.name, runs_so_far(&before, &current));
            let over = widths_so_far(&before, &current, prior.as_ref());
            clock.record(&t, round, earlier.as_ref(), &over, p + 1)
        });
        for (i, m) in active {
            let lane = &mut self.slots[i].lane;
            let mut r = m.finish(lane);
            if pairs {
                attach_ceiling(&mut r, &mut lane.companion);
            }
            r.precision = precision.clone();
            r.rounds_id = Some(rounds_id.clone());
            self.slots[i].lane.rec.record(&spec.name, r)?;
        }
        Ok(true)
    }

    /// The run's prior of how far worker processes spread (`stats::spread`): every pair's spread
    /// over the processes so far, of every other transform measured in the same rounds (their
    /// recorded results) and of `name` (`this`: its runs and processes now).
    fn run_prior(
        &self,
        name: &str,
        this: Option<(Vec<Vec<f64>>, Vec<usize>)>,
    ) -> Option<augbench_stats::spread::Spread> {
        let mut rows = Vec::new();
        let mut add = |runs: &[Vec<f64>], groups: &[usize]| {
            let refs: Vec<&[f64]> = runs.iter().map(Vec::as_slice).collect();
            rows.extend(augbench_stats::paired::process_spreads(&refs, groups));
        };
        if let Some((runs, groups)) = this {
            add(&runs, &groups);
        }
        let others = self.live().flat_map(|s| s.lane.rec.acc.keys());
        let others: std::collections::BTreeSet<&String> = others.filter(|n| *n != name).collect();
        for other in others {
            if let Some((runs, groups)) = self.paired_runs(other) {
                add(&runs, &groups);
            }
        }
        augbench_stats::spread::Spread::fit(&rows)
    }

    /// `name`'s measured libraries' runs and their processes, when they were timed in the same
    /// rounds (one `rounds_id`) over the same processes; `None` otherwise.
    fn paired_runs(&self, name: &str) -> Option<(Vec<Vec<f64>>, Vec<usize>)> {
        let results: Vec<_> = self.measured_results(name).collect();
        let first = results.first()?;
        let groups: Vec<usize> = first.process_runs.iter().map(|n| *n as usize).collect();
        let same = results.iter().all(|r| {
            r.rounds_id == first.rounds_id
                && r.process_runs == first.process_runs
                && r.throughputs.len() == groups.iter().sum::<usize>()
        });
        let runs = results.iter().map(|r| r.throughputs.clone()).collect();
        (same && results.len() > 1 && groups.len() > 1).then_some((runs, groups))
    }

    /// `name`'s precision record over its processes so far: the measured libraries' record with
    /// the most rounds (a library that missed a process keeps an older one).
    fn transform_precision(
        &self,
        name: &str,
    ) -> Option<augbench_stats::precision::PrecisionRecord> {
        self.measured_results(name)
            .filter_map(|r| r.precision.clone())
            .max_by_key(|p| p.rounds)
    }

    /// The run's precision target (`execution.precision`), if any.
    fn target(&self) -> Option<Target> {
        let cfg = self.slots.first()?.lane.input.cfg;
        Target::from_config(cfg, self.processes())
    }

    /// Every active library's runs of `name` in the processes before `p` (from its recorded
    /// result), with the runs of each process.
    fn earlier_runs(
        &self,
        name: &str,
        p: u64,
        active: &[(usize, Underway)],
    ) -> Vec<(Vec<f64>, Vec<usize>)> {
        if p == 0 {
            return Vec::new();
        }
        active
            .iter()
            .filter_map(|(i, _)| {
                let r = self.slots[*i].lane.rec.acc.get(name)?;
                let groups = match r.process_runs.as_slice() {
                    [] => vec![r.throughputs.len()],
                    g => g.iter().map(|n| *n as usize).collect(),
                };
                Some((r.throughputs.clone(), groups))
            })
            .collect()
    }

    /// Whether this round's runs are taken in chunks: A/B micro runs (`selection.variants`) with
    /// more than one variant measuring (docs/ab.md, "Chunked rounds").
    fn chunked(&self, active: &[(usize, Underway)]) -> bool {
        let ab = self
            .slots
            .first()
            .is_some_and(|s| s.lane.input.cfg.selection.variants.is_some());
        ab && active.len() > 1 && active.iter().all(|(_, m)| m.micro().is_some())
    }

    /// One round whose runs are taken in chunks of items: chunk by chunk, every active variant
    /// times the same items in a seeded order of its own, then each closes its run. No rewarm:
    /// each chunk follows the others' chunks alike. A variant whose chunk fails leaves the
    /// rounds as in `one_run`; `active` keeps the others. False when interrupted.
    fn chunked_round(
        &mut self,
        spec: &TransformSpec,
        (p, round): (u64, u64),
        active: &mut Vec<(usize, Underway)>,
        dropped: &mut Vec<usize>,
    ) -> anyhow::Result<bool> {
        let items = active
            .iter()
            .map(|(i, _)| self.slots[*i].lane.w.load.count)
            .min()
            .unwrap_or(0);
        let run_sec = active
            .iter()
            .filter_map(|(_, m)| m.micro())
            .map(|m| m.seconds_per_item() * items as f64 * m.loops() as f64)
            .fold(0.0, f64::max);
        self.bar
            .set_message(format!("{}: round {} (chunked)", spec.name, round + 1));
        for (c, range) in crate::rounds::run_chunks(items, run_sec)
            .into_iter()
            .enumerate()
        {
            let seed = (round << 20) | c as u64;
            for k in round_order(active.len(), &spec.name, p, seed) {
                if dropped.contains(&k) {
                    continue;
                }
                let (i, m) = &mut active[k];
                match self.one_chunk(spec, *i, m, range)? {
                    RunStep::Ran => {}
                    RunStep::Dropped => dropped.push(k),
                    RunStep::Interrupted => return Ok(false),
                }
            }
        }
        dropped.sort_unstable_by(|a, b| b.cmp(a));
        for &k in dropped.iter() {
            active.remove(k);
        }
        for (_, m) in active.iter_mut() {
            m.close_run(items);
        }
        Ok(true)
    }

    /// One chunk of a variant's run; a failure drops it as in `one_run`.
    fn one_chunk(
        &mut self,
        spec: &TransformSpec,
        i: usize,
        m: &mut Underway,
        range: (u64, u64),
    ) -> anyhow::Result<RunStep> {
        let ran = m.run_chunk(&mut self.slots[i].lane, &spec.name, range);
        self.step(spec, i, ran)
    }

    /// What a timed request came to: ran; the transform's final result (recorded: this library
    /// leaves the rounds); or a lost worker (its loss recorded, a fresh worker started, or the
    /// library stopped when none starts). `Interrupted` when the user stopped the run.
    fn step(
        &mut self,
        spec: &TransformSpec,
        i: usize,
        ran: Result<Result<(), TransformResult>, augbench_protocol::client::WorkerError>,
    ) -> anyhow::Result<RunStep> {
        let mp = self.mp;
        let lane = &mut self.slots[i].lane;
        let replaced = match ran {
            Ok(Ok(())) => return Ok(RunStep::Ran),
            Ok(Err(r)) if r.status == Some(Status::Error) && stopped_by_user(self.stop) => {
                return Ok(RunStep::Interrupted);
            }
            Ok(Err(r)) => {
                lane.rec.record(&spec.name, r)?;
                Ok(())
            }
            Err(_) if stopped_by_user(self.stop) => return Ok(RunStep::Interrupted),
            Err(e) => lane.record_loss(spec, e, mp)?,
        };
        self.stop_if_gone(i, replaced);
        Ok(RunStep::Dropped)
    }

    /// One library's run of a round; when others ran since its last one (`shared`), an untimed
    /// rewarm pass comes first.
    fn one_run(
        &mut self,
        spec: &TransformSpec,
        i: usize,
        m: &mut Underway,
        round: u64,
        shared: bool,
    ) -> anyhow::Result<RunStep> {
        let lane = &mut self.slots[i].lane;
        self.bar.set_message(format!(
            "{}: round {} · {}",
            spec.name,
            round + 1,
            lane.input.job.library
        ));
        // A pipeline loader idles (its queue refills) whenever anything else runs, even while
        // the other libraries only set up: every interleaved window starts with the rewarm.
        let rewarm = shared || m.is_pipeline();
        let ran = m.run(lane, &spec.name, rewarm);
        self.step(spec, i, ran)
    }

    /// What a round times: each active library's row, and, when the rounds pair the ceiling
    /// (`pairs`), its ceiling companion when it is up.
    fn round_units(&self, active: &[(usize, Underway)], pairs: bool) -> Vec<(usize, LoaderSlot)> {
        let mut units = Vec::new();
        for (k, (i, _)) in active.iter().enumerate() {
            units.push((k, LoaderSlot::Row));
            if pairs && matches!(self.slots[*i].lane.companion, Companion::Up(_)) {
                units.push((k, LoaderSlot::Ceiling));
            }
        }
        units
    }

    /// One window of library `i`'s ceiling companion. A companion window that fails ends the
    /// companion alone; a lost worker costs the row in flight, as in `one_run`.
    fn companion_run(&mut self, spec: &TransformSpec, i: usize) -> anyhow::Result<RunStep> {
        let mp = self.mp;
        let lane = &mut self.slots[i].lane;
        match companion_window(lane) {
            Ok(Err(_)) | Err(_) if stopped_by_user(self.stop) => Ok(RunStep::Interrupted),
            Ok(_) => Ok(RunStep::Ran),
            Err(e) => {
                let replaced = lane.record_loss(spec, e, mp)?;
                self.stop_if_gone(i, replaced);
                Ok(RunStep::Dropped)
            }
        }
    }

    /// The drift sentinel's time for this round; a sentinel that fails once is dropped (with one
    /// line), so every recorded time belongs to a round.
    fn time_sentinel(&mut self, name: &str) {
        let Some(s) = self.sentinel.as_mut() else {
            return;
        };
        match s.time() {
            Some(ms) => self.drift.entry(name.to_string()).or_default().push(ms),
            None => {
                self.sentinel = None;
                self.drift.remove(name);
                self.mp.suspend(|| {
                    eprintln!("drift sentinel lost at {name}; later results record no drift")
                });
            }
        }
    }

    /// Paired speedups, `alone` and drift for every library's result of `name`.
    fn annotate(&mut self, name: &str) -> anyhow::Result<()> {
        let results: BTreeMap<String, _> = self
            .slots
            .iter()
            .filter_map(|s| {
                let r = s.lane.rec.file.results.get(name)?;
                Some((s.lane.input.job.library.clone(), r.clone()))
            })
            .collect();
        let drift = self.drift.get(name).map_or(&[][..], Vec::as_slice);
        let floor = self.sentinel.as_ref().and_then(|s| s.floor);
        let annotated = annotate(&results, drift, floor);
        for s in &mut self.slots {
            let lib = &s.lane.input.job.library;
            if let Some(r) = annotated.get(lib)
                && results.get(lib) != Some(r)
            {
                s.lane.rec.amend(name, r.clone())?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, interrupted: bool) {
        self.bar
            .finish_with_message(if interrupted { "interrupted" } else { "done" });
        for s in &mut self.slots {
            s.lane.shutdown();
        }
        if let Some(s) = self.sentinel.take() {
            s.shutdown();
        }
    }
}

/// The companion's windows of these rounds go with the row when there is one beside each of the
/// row's (a companion that ended early leaves the row unpaired).
fn attach_ceiling(r: &mut augbench_core::results::TransformResult, companion: &mut Companion) {
    let Companion::Up(c) = companion else {
        return;
    };
    let windows = c.take_throughputs();
    if let Some(p) = r.pipeline.as_mut()
        && r.status == Some(Status::Ok)
        && windows.len() == r.throughputs.len()
    {
        p.ceiling_throughputs = windows;
    }
}

enum RunStep {
    Ran,
    Dropped,
    Interrupted,
}
