//! Captures `rustc --version` of the compiler building this crate, so the native worker can
//! report its runtime in `hello` (`unknown` when the compiler cannot be asked).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
    // The Python worker package is embedded (env/assets.rs): rebuild when it changes.
    println!("cargo:rerun-if-changed=../../python/augbench_worker");
    println!("cargo:rerun-if-changed=../../envs");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=AUGBENCH_RUSTC_VERSION={version}");
}
