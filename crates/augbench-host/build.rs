//! Captures facts about this build for the machine card: the git commit (`unknown` outside a git
//! checkout or without git), the target triple, the opt level and the profile.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let sha = output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=AUGBENCH_GIT_SHA={sha}");
    rerun_on_new_commits();
    for (var, name) in [
        ("TARGET", "AUGBENCH_TARGET"),
        ("OPT_LEVEL", "AUGBENCH_OPT_LEVEL"),
        ("PROFILE", "AUGBENCH_PROFILE"),
    ] {
        let value = std::env::var(var).unwrap_or_else(|_| "unknown".to_string());
        println!("cargo:rustc-env={name}={value}");
    }
}

/// The trimmed stdout of a command that succeeded.
fn output(program: &str, args: &[&str]) -> Option<String> {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Rebuild when HEAD moves: the HEAD file, the branch it names, and the packed refs.
fn rerun_on_new_commits() {
    let mut paths = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = output("git", &["symbolic-ref", "-q", "HEAD"]) {
        paths.push(branch);
    }
    for p in paths {
        // A missing path would rerun this script on every build: name existing files only.
        if let Some(file) = output("git", &["rev-parse", "--git-path", &p])
            && std::path::Path::new(&file).exists()
        {
            println!("cargo:rerun-if-changed={file}");
        }
    }
}
