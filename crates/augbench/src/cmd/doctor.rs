//! `augbench doctor`: the machine card every result file carries, and the busy checks `run`
//! makes before it starts (load per logical thread, CPU steal), printed on demand; `--json`
//! prints the same as one JSON object. Checks warn; they never fail the command.

use std::process::ExitCode;

use augbench_core::machine_card::{MachineCard, MachineState};
use augbench_core::policy;
use augbench_host::machine;
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the card and the checks as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// One check with its verdict.
#[derive(Debug, Serialize)]
struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
}

#[derive(Debug, Serialize)]
struct Doctor {
    card: MachineCard,
    checks: Vec<Check>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = machine::state();
    let doctor = Doctor {
        checks: checks(&state),
        card: MachineCard {
            before: Some(state),
            ..machine::card()
        },
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doctor)?);
    } else {
        print!("{}", render(&doctor));
    }
    Ok(ExitCode::SUCCESS)
}

/// The busy checks of `run`, each with its verdict against policy's thresholds.
fn checks(s: &MachineState) -> Vec<Check> {
    let load_ok = s.load_per_thread <= policy::BUSY_LOAD_PER_THREAD;
    let steal = match s.steal_percent {
        Some(p) => Check {
            name: "cpu steal",
            ok: p <= policy::BUSY_STEAL_PERCENT,
            detail: format!("{p:.1}% (warns above {}%)", policy::BUSY_STEAL_PERCENT),
        },
        None => Check {
            name: "cpu steal",
            ok: true,
            detail: "not readable on this system (/proc/stat)".into(),
        },
    };
    vec![
        Check {
            name: "load per thread",
            ok: load_ok,
            detail: format!(
                "{:.2} (load average {:.2}; warns above {})",
                s.load_per_thread,
                s.load_1m,
                policy::BUSY_LOAD_PER_THREAD
            ),
        },
        steal,
    ]
}

fn render(d: &Doctor) -> String {
    let c = &d.card;
    let or_absent = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not readable)".into());
    let hypervisor = match c.hypervisor {
        Some(true) => "yes (the CPU reports a hypervisor)",
        Some(false) => "no",
        None => "(cannot tell)",
    };
    let build = c.build.clone().unwrap_or_default();
    let b = &build;
    let rows = vec![
        vec!["cpu".into(), c.processor.clone()],
        vec![
            "simd".into(),
            simd_line(c.simd.as_deref().unwrap_or_default()),
        ],
        vec![
            "cores / threads".into(),
            format!(
                "{} physical / {} logical",
                c.physical_cores.map_or("?".into(), |n| n.to_string()),
                c.cpu_count
            ),
        ],
        vec![
            "memory".into(),
            match c.memory_total_bytes {
                0 => "(not readable)".into(),
                b => format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30)),
            },
        ],
        vec!["gpus".into(), gpu_line(&c.gpus)],
        vec!["governor".into(), or_absent(&c.governor)],
        vec!["kernel".into(), or_absent(&c.kernel)],
        vec!["virtualised".into(), hypervisor.into()],
        vec![
            "augbench".into(),
            format!(
                "{} ({}), {}, opt-level {} ({})",
                b.version, b.git_sha, b.target, b.opt_level, b.profile
            ),
        ],
    ];
    let mut out = format!(
        "machine card\n{}",
        augbench_core::text::columns(&indent(rows), false, false)
    );
    out.push_str("checks\n");
    let checks: Vec<Vec<String>> = d
        .checks
        .iter()
        .map(|k| {
            let verdict = if k.ok { "ok" } else { "BUSY" };
            vec![k.name.to_string(), verdict.to_string(), k.detail.clone()]
        })
        .collect();
    out.push_str(&augbench_core::text::columns(&indent(checks), false, false));
    if d.checks.iter().any(|k| !k.ok) {
        out.push_str("the machine is busy: numbers measured now carry more noise\n");
    }
    out
}

fn simd_line(simd: &[String]) -> String {
    if simd.is_empty() {
        format!("none of {}", machine::SIMD_FLAGS.join(", "))
    } else {
        simd.join(" ")
    }
}

fn gpu_line(gpus: &[augbench_core::machine_card::MachineGpu]) -> String {
    if gpus.is_empty() {
        return "none (nvidia-smi lists none)".into();
    }
    let one = |g: &augbench_core::machine_card::MachineGpu| match g.memory_gib {
        Some(m) => format!("{} ({m:.1} GiB)", g.name),
        None => g.name.clone(),
    };
    gpus.iter().map(one).collect::<Vec<_>>().join(", ")
}

fn indent(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|mut r| {
            r[0] = format!("  {}", r[0]);
            r
        })
        .collect()
}
