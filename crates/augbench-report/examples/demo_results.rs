//! Writes the deterministic demo results (`augbench_report::sample::demo`) into a folder, laid
//! out as `augbench run` would, so the report commands can be tried without running anything:
//! `cargo run -p augbench-report --example demo_results -- <DIR>`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a development tool run by hand, not the product"
)]

fn main() -> anyhow::Result<()> {
    let Some(dir) = std::env::args_os().nth(1) else {
        anyhow::bail!("usage: demo_results <DIR>");
    };
    for file in augbench_report::sample::demo() {
        println!(
            "{}",
            augbench_report::sample::write(std::path::Path::new(&dir), &file)?.display()
        );
    }
    Ok(())
}
