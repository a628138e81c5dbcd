//! The count markers of `measure: instructions` (docs/methodology.md, "Instruction counts"):
//! `getpgrp()` right before and `getppid()` right after a counted loop, which callgrind's
//! `--zero-before`/`--dump-before` turn into one dump per loop; and the SIMD features this
//! process's CPU detection sees (fewer under Valgrind than the machine has).

/// Called right before a counted loop: callgrind zeroes its counters on entry.
pub(crate) fn before_loop() {
    // SAFETY: getpgrp takes no arguments, cannot fail and touches no memory of ours.
    unsafe {
        libc::getpgrp();
    }
}

/// Called right after a counted loop: callgrind dumps the loop's counts on entry.
pub(crate) fn after_loop() {
    std::hint::black_box(std::os::unix::process::parent_id());
}

/// The SIMD features the CPU reports to this process (the CPUID that Valgrind emulates).
pub(crate) fn cpu_features() -> Vec<String> {
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        let checks = [
            ("sse4_2", std::arch::is_x86_feature_detected!("sse4.2")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
        ];
        out.extend(checks.iter().filter(|c| c.1).map(|c| c.0.to_string()));
    }
    #[cfg(target_arch = "aarch64")]
    out.push("neon".to_string());
    out
}
