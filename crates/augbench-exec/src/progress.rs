//! The progress display's bars: a labelled spinner for a step of unknown length and a labelled bar
//! of counted steps, one style for every part of the coordinator.

use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

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
