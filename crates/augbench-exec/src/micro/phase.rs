//! The phases one transform goes through in the micro methodology (check, preflight, warmup,
//! each timed run), as reported to the progress display.

/// Phases reported to the progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Check,
    Preflight,
    Warmup,
    Run(u64),
}
