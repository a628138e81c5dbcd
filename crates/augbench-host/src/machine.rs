//! The machine card's probe (`system_info` of every result file, the benchmark cells, `augbench
//! doctor`, production run records): OS, CPU model and SIMD flags, cores and threads, memory, the
//! GPU list, governor, kernel, hypervisor flag, the augbench build, and load average and CPU steal
//! at a moment. `card` is the one probe of the machine, made once per process. Parsing of
//! `/proc/cpuinfo` and `/proc/stat` is pure (unit-tested on fixtures); the busy checks read
//! policy's thresholds.

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Duration;

use augbench_core::machine_card::{BuildInfo, MachineCard, MachineState};
use augbench_core::policy;

/// SIMD extensions the card reports, by their `/proc/cpuinfo` spelling (x86) and NEON.
pub const SIMD_FLAGS: [&str; 4] = ["sse4_2", "avx2", "avx512f", "neon"];

/// What `/proc/cpuinfo` tells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuInfo {
    pub model: Option<String>,
    pub simd: Vec<String>,
    pub hypervisor: bool,
    /// Distinct (physical id, core id) pairs; `None` where the file has no topology.
    pub physical_cores: Option<u64>,
}

/// Parses `/proc/cpuinfo` (x86 `flags`, ARM `Features`: `asimd` is NEON).
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    let mut flags = BTreeSet::new();
    let mut cores = BTreeSet::new();
    let mut physical = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "model name" | "Model" | "Hardware" if info.model.is_none() && !value.is_empty() => {
                info.model = Some(value.to_string());
            }
            "flags" | "Features" => flags.extend(value.split_whitespace().map(str::to_string)),
            "physical id" => physical = Some(value.to_string()),
            "core id" => {
                cores.insert((physical.clone(), value.to_string()));
            }
            _ => {}
        }
    }
    info.hypervisor = flags.contains("hypervisor");
    if flags.contains("asimd") {
        flags.insert("neon".to_string());
    }
    info.simd = SIMD_FLAGS
        .iter()
        .filter(|f| flags.contains(**f))
        .map(|f| f.to_string())
        .collect();
    info.physical_cores = (!cores.is_empty()).then_some(cores.len() as u64);
    info
}

/// The aggregate `cpu` line of `/proc/stat`: (total jiffies, steal jiffies).
pub fn parse_stat_cpu(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
    // counted in user and nice, so the total is the first eight.
    let total = fields.iter().take(8).sum();
    Some((total, *fields.get(7)?))
}

/// Stolen share (%) between two `/proc/stat` samples; `None` when no time passed.
pub fn steal_percent(before: (u64, u64), after: (u64, u64)) -> Option<f64> {
    let total = after.0.checked_sub(before.0)?;
    let steal = after.1.checked_sub(before.1)?;
    (total > 0).then(|| 100.0 * steal as f64 / total as f64)
}

/// Whether a worker on this machine can be offered a CUDA device: the machine card's GPUs, as
/// `gpu::cuda_present` reads them. `plan`, `run` and `production` all ask this.
pub fn cuda_here() -> bool {
    crate::gpu::cuda_present(&card().gpus)
}

/// The machine's fixed facts; runtime, timestamp and `before`/`after` empty (see
/// `system::system_info` and `state`). The one probe of the machine
/// (`/proc/cpuinfo`, sysinfo, `nvidia-smi`), made once per process: every later call clones it.
pub fn card() -> MachineCard {
    static CARD: OnceLock<MachineCard> = OnceLock::new();
    CARD.get_or_init(probe).clone()
}

fn probe() -> MachineCard {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok();
    let info = text.as_deref().map(parse_cpuinfo).unwrap_or_default();
    let (brand, memory) = crate::facts::cpu();
    // Only x86 CPUs report a hypervisor flag; elsewhere its absence says nothing.
    let x86 = cfg!(any(target_arch = "x86", target_arch = "x86_64"));
    MachineCard {
        runtime: String::new(),
        platform: platform(),
        machine: std::env::consts::ARCH.to_string(),
        processor: info.model.clone().or(brand).unwrap_or_default(),
        cpu_count: logical_threads(),
        memory_total_bytes: memory,
        timestamp: String::new(),
        simd: Some(if info.simd.is_empty() {
            runtime_simd()
        } else {
            info.simd.clone()
        }),
        physical_cores: info.physical_cores.or_else(|| {
            sysinfo::System::physical_core_count()
                .ok()
                .map(|n| n as u64)
        }),
        governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        kernel: sysinfo::System::kernel_version()
            .ok()
            .filter(|k| !k.is_empty()),
        hypervisor: (x86 && text.is_some()).then_some(info.hypervisor),
        build: Some(build()),
        gpus: crate::gpu::nvidia_gpus(),
        before: None,
        after: None,
    }
}

/// The OS name and version (`Ubuntu 24.04`).
fn platform() -> String {
    format!(
        "{} {}",
        sysinfo::System::name().unwrap_or_else(|_| std::env::consts::OS.to_string()),
        sysinfo::System::os_version().unwrap_or_default()
    )
    .trim()
    .to_string()
}

/// The augbench build, as embedded by build.rs.
pub fn build() -> BuildInfo {
    BuildInfo {
        version: crate::facts::AUGBENCH_VERSION.to_string(),
        git_sha: env!("AUGBENCH_GIT_SHA").to_string(),
        target: env!("AUGBENCH_TARGET").to_string(),
        opt_level: env!("AUGBENCH_OPT_LEVEL").to_string(),
        profile: env!("AUGBENCH_PROFILE").to_string(),
    }
}

/// Load average now and CPU steal over `policy::STEAL_SAMPLE_MS` (blocks that long on Linux).
pub fn state() -> MachineState {
    let load = sysinfo::System::load_average().map_or(0.0, |l| l.one);
    let sample = || {
        std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|t| parse_stat_cpu(&t))
    };
    let steal = sample().and_then(|before| {
        std::thread::sleep(Duration::from_millis(policy::STEAL_SAMPLE_MS));
        steal_percent(before, sample()?)
    });
    MachineState {
        timestamp: crate::facts::now_utc(),
        load_1m: load,
        load_per_thread: load / logical_threads() as f64,
        steal_percent: steal,
    }
}

/// Why the machine counts as busy for measuring (empty: it does not), per policy's thresholds.
pub fn busy_reasons(s: &MachineState) -> Vec<String> {
    let mut why = Vec::new();
    if s.load_per_thread > policy::BUSY_LOAD_PER_THREAD {
        why.push(format!(
            "load average {:.2} is {:.2} per logical thread (above {})",
            s.load_1m,
            s.load_per_thread,
            policy::BUSY_LOAD_PER_THREAD
        ));
    }
    if let Some(steal) = s.steal_percent.filter(|p| *p > policy::BUSY_STEAL_PERCENT) {
        why.push(format!(
            "the hypervisor stole {steal:.1}% of CPU time (above {}%)",
            policy::BUSY_STEAL_PERCENT
        ));
    }
    why
}

fn logical_threads() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// SIMD flags by runtime detection, where `/proc/cpuinfo` is not there to read.
fn runtime_simd() -> Vec<String> {
    let mut found: Vec<&str> = Vec::new();
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            found.push("sse4_2");
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            found.push("avx2");
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            found.push("avx512f");
        }
    }
    #[cfg(target_arch = "aarch64")]
    if std::arch::is_aarch64_feature_detected!("neon") {
        found.push("neon");
    }
    found.into_iter().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86_VM: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu sse2 ssse3 sse4_1 sse4_2 avx hypervisor avx2 avx512f avx512dq\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu sse2 sse4_2 avx hypervisor avx2 avx512f\n";
    const ARM: &str = "processor\t: 0\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes crc32\nCPU implementer\t: 0x41\n\nprocessor\t: 1\nFeatures\t: fp asimd evtstrm aes crc32\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
    const STAT_0: &str =
        "cpu  5073133 1977 451373 1644344 14388 0 2182 1391 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
    const STAT_1: &str =
        "cpu  5073233 1977 451373 1644444 14388 0 2182 1401 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";

    #[test]
    fn x86_flags_topology_and_hypervisor() {
        let c = parse_cpuinfo(X86_VM);
        assert_eq!(c.model.as_deref(), Some("Intel(R) Xeon(R) Processor"));
        assert_eq!(c.simd, ["sse4_2", "avx2", "avx512f"]);
        assert!(c.hypervisor);
        assert_eq!(c.physical_cores, Some(1), "two threads on one core");
    }

    #[test]
    fn arm_asimd_is_neon_and_no_topology_is_none() {
        let c = parse_cpuinfo(ARM);
        assert_eq!(c.simd, ["neon"]);
        assert!(!c.hypervisor);
        assert_eq!(c.physical_cores, None);
        assert_eq!(c.model.as_deref(), Some("Raspberry Pi 4 Model B Rev 1.4"));
    }

    #[test]
    fn steal_is_the_share_of_the_total_delta() {
        let a = parse_stat_cpu(STAT_0).unwrap();
        let b = parse_stat_cpu(STAT_1).unwrap();
        assert_eq!(a.1, 1391);
        // 100 user + 100 idle + 10 steal jiffies → 10 / 210.
        let p = steal_percent(a, b).unwrap();
        assert!((p - 100.0 * 10.0 / 210.0).abs() < 1e-9, "{p}");
        assert_eq!(steal_percent(a, a), None, "no time passed");
        assert_eq!(parse_stat_cpu("intr 1 2\n"), None);
        assert_eq!(parse_stat_cpu("cpu  1 2 x\n"), None);
    }

    #[test]
    fn busy_checks_use_the_policy_thresholds() {
        let calm = MachineState {
            load_1m: 0.5,
            load_per_thread: policy::BUSY_LOAD_PER_THREAD,
            steal_percent: Some(policy::BUSY_STEAL_PERCENT),
            ..Default::default()
        };
        assert!(busy_reasons(&calm).is_empty());
        let busy = MachineState {
            load_1m: 3.0,
            load_per_thread: 1.5,
            steal_percent: Some(5.0),
            ..Default::default()
        };
        let why = busy_reasons(&busy);
        assert_eq!(why.len(), 2);
        assert!(why[0].contains("1.50 per logical thread"), "{}", why[0]);
        assert!(why[1].contains("stole 5.0%"), "{}", why[1]);
    }

    #[test]
    fn build_info_is_embedded() {
        let b = build();
        assert_eq!(b.version, env!("CARGO_PKG_VERSION"));
        assert!(!b.git_sha.is_empty() && !b.target.is_empty() && !b.opt_level.is_empty());
    }
}
