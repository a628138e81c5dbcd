//! Runs a command, samples the memory of its process tree every `MEMORY_SAMPLE_PERIOD_MS` until
//! it exits, and prints one JSON object: the command's pid, its exit code and the peaks
//! (`memory_sampler::MemoryPeaks`), and the CPU time this process spent sampling. The command's stdout goes to stderr, so stdout is only the
//! JSON. `scripts/memory_check.py` compares these peaks with its own reading of `/proc`.
//!
//!     cargo run --release -p augbench-host --example sample_tree -- python3 -c '...'

use augbench_host::memory_sampler::{Sampler, default_period};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let program = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: sample_tree <command> [args...]"))?;
    let mut child = std::process::Command::new(&program)
        .args(args)
        .stdout(std::io::stderr())
        .spawn()?;
    let sampler = Sampler::start(child.id(), default_period())?;
    let status = child.wait()?;
    let peaks = sampler.stop();
    let cpu_ms = own_cpu_ms();
    let out = serde_json::json!({
        "pid": child.id(),
        "exit_code": status.code(),
        "period_ms": default_period().as_millis() as u64,
        "sampler_cpu_ms": cpu_ms,
        "peaks": peaks,
    });
    println!("{out}");
    Ok(())
}

/// CPU time this process used itself (user + system, its children not included), from
/// `/proc/self/stat` in the kernel's fixed 100 Hz ticks; `None` where that cannot be read.
fn own_cpu_ms() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    // After the command name: state is field 3, utime field 14, stime field 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) * 10)
}
