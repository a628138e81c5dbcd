//! The Python packages and lock files are embedded (`env/assets.rs`): rebuild when they change.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../../python/augbench_worker");
    println!("cargo:rerun-if-changed=../../python/augbench_clips");
    println!("cargo:rerun-if-changed=../../envs");
}
