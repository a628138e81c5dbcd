//! The progress display's bars: a labelled spinner for a step of unknown length, a labelled bar
//! of counted steps, one style for every part of the coordinator; and the interleaved run's bar
//! of weighted work (`Work`), whose ETA scales the elapsed time by the work left over the work
//! done, each transform weighted by what it cost in the first process.

use std::collections::BTreeMap;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressState, ProgressStyle};

pub(crate) fn labelled_spinner(mp: &MultiProgress, label: String) -> ProgressBar {
    let pb = mp.add(ProgressBar::new_spinner());
    pb.set_style(
        ProgressStyle::with_template("{spinner} {prefix} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_prefix(label);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// A labelled bar of `len` steps.
pub(crate) fn steps_bar(mp: &MultiProgress, label: String, len: u64) -> ProgressBar {
    let pb = mp.add(ProgressBar::new(len));
    let style =
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {elapsed} (ETA {eta}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    pb.set_style(style);
    pb.set_prefix(label);
    pb
}

/// A labelled bar of weighted work (`Work::show` sets it): percent done, and an ETA from the
/// whole run's average rate (`eta_sec`), not from the latest steps.
pub(crate) fn work_bar(mp: &MultiProgress, label: String) -> ProgressBar {
    let pb = mp.add(ProgressBar::new(0));
    let style = ProgressStyle::with_template(
        "{prefix} [{bar:30}] {percent}% {elapsed} (ETA {average_eta}) {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .with_key("average_eta", write_eta)
    .progress_chars("=> ");
    pb.set_style(style);
    pb.set_prefix(label);
    pb
}

fn write_eta(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let eta = eta_sec(
        state.elapsed().as_secs_f64(),
        state.pos(),
        state.len().unwrap_or(0),
    );
    let text = eta.map_or_else(
        || "?".to_string(),
        |s| augbench_stats::duration::seconds(s.round()),
    );
    let _ = w.write_str(&text);
}

/// Seconds left at the average rate so far: `elapsed` × work left ÷ work done (`None` before
/// any work is done).
pub(crate) fn eta_sec(elapsed: f64, done: u64, len: u64) -> Option<f64> {
    (done > 0).then(|| elapsed * len.saturating_sub(done) as f64 / done as f64)
}

/// The interleaved run's work: every transform once per process. In the first process each
/// transform counts one unit (nothing is measured yet); once it is over, each transform weighs
/// the seconds it took there (its set-up and rounds, every library), which later processes repeat.
#[derive(Debug, Default)]
pub(crate) struct Work {
    weights: BTreeMap<String, f64>,
    done: f64,
    total: f64,
}

/// The bar counts work in thousandths of its unit.
const SCALE: f64 = 1000.0;

impl Work {
    pub fn new(transforms: usize, processes: u64) -> Work {
        Work {
            weights: BTreeMap::new(),
            done: 0.0,
            total: transforms as f64 * processes as f64,
        }
    }

    /// The first process is over: weights are the seconds each transform took in it
    /// (`seconds`), and the work is re-counted in them, `processes` in all.
    pub fn first_process_done(
        &mut self,
        names: &[String],
        seconds: impl Fn(&str) -> f64,
        processes: u64,
    ) {
        self.weights = names
            .iter()
            .map(|n| (n.clone(), seconds(n).max(0.0)))
            .collect();
        let one: f64 = self.weights.values().sum();
        if one <= 0.0 {
            self.weights.clear();
            return;
        }
        self.done = one;
        self.total = one * processes as f64;
    }

    fn weight(&self, name: &str) -> f64 {
        if self.weights.is_empty() {
            1.0
        } else {
            self.weights.get(name).copied().unwrap_or(0.0)
        }
    }

    /// `name` is done in one more process.
    pub fn finished(&mut self, name: &str) {
        self.done += self.weight(name);
    }

    /// `due` take one more process each (a precision target's extra processes).
    pub fn more(&mut self, due: &[String]) {
        self.total += due.iter().map(|n| self.weight(n)).sum::<f64>();
    }

    /// Sets the bar to this work.
    pub fn show(&self, bar: &ProgressBar) {
        bar.set_length((self.total * SCALE).round() as u64);
        bar.set_position((self.done.min(self.total) * SCALE).round() as u64);
    }

    #[cfg(test)]
    fn eta(&self, elapsed: f64) -> Option<f64> {
        eta_sec(
            elapsed,
            (self.done.min(self.total) * SCALE).round() as u64,
            (self.total * SCALE).round() as u64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_is_the_average_rate_over_the_work_left() {
        assert_eq!(eta_sec(10.0, 0, 100), None);
        assert_eq!(eta_sec(10.0, 25, 100), Some(30.0));
        assert_eq!(eta_sec(10.0, 100, 100), Some(0.0));
    }

    /// Transforms of very different cost, in 3 processes that each take what the first took:
    /// from the second process on, the ETA is exact at every step, where counting transforms
    /// misleads by the cost of the ones still to come.
    #[test]
    fn weights_from_the_first_process_make_the_eta_exact_after_it() {
        let names: Vec<String> = ["Flip", "Blur", "Resize", "Elastic"]
            .map(String::from)
            .to_vec();
        let cost = |n: &str| match n {
            "Flip" => 1.0,
            "Blur" => 2.0,
            "Resize" => 3.0,
            _ => 54.0,
        };
        let (processes, run) = (3, 60.0 * 3.0);
        let mut work = Work::new(names.len(), processes);
        let mut elapsed = 0.0;
        for n in &names {
            elapsed += cost(n);
            work.finished(n);
        }
        work.first_process_done(&names, cost, processes);
        for _ in 1..processes {
            for n in &names {
                elapsed += cost(n);
                work.finished(n);
                let eta = work.eta(elapsed).unwrap();
                assert!(
                    (eta - (run - elapsed)).abs() < 1e-6,
                    "{n}: {eta} vs {}",
                    run - elapsed
                );
            }
        }
        // Counting transforms instead: after Flip, Blur and Resize of the second process
        // (7 of 12), it would say 50% of the elapsed time is left where 54 + 60 s are.
        assert!((eta_sec(66.0, 7, 12).unwrap() - 47.142857).abs() < 1e-3);
    }

    #[test]
    fn extra_processes_add_their_transforms_weights() {
        let names: Vec<String> = ["A", "B"].map(String::from).to_vec();
        let mut work = Work::new(2, 1);
        work.finished("A");
        work.finished("B");
        work.first_process_done(&names, |n| if n == "A" { 1.0 } else { 3.0 }, 1);
        work.more(&["B".to_string()]);
        assert_eq!((work.done, work.total), (4.0, 7.0));
        work.finished("B");
        assert_eq!(work.eta(7.0), Some(0.0));
    }
}
