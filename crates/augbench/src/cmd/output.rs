//! Standard output for the commands that print: one writer that treats a reader that stopped
//! early (a broken pipe) as the end of the output, never a panic.

use std::process::ExitCode;

/// Writes a command's output to standard output; a reader that stopped early (`| head`) ends it
/// quietly, as Unix tools do, instead of a panic on the broken pipe.
pub fn emit(text: &str) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to standard output"))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}
