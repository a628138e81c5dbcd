//! Child processes, started one way: stdout piped to the caller, stderr drained on a thread into
//! a bounded tail of its last lines (`Tail`), so a chatty child never blocks on a full pipe and a
//! failure can show how it ended. `run` waits for a child to finish (status, stdout, stderr tail);
//! `spawn` hands back a long-lived one with piped stdin and stdout (a worker, a decoder streaming
//! its answers). `last_lines` is the same tail over text already read (a task's log).
//! `CommandLine` is how any long-lived child is described before it starts (a worker, the clip
//! decoder): program, arguments, extra environment and a label for messages.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How to start a child: program, arguments and extra environment; `label` names it in messages
/// (e.g. `kornia-rs worker`).
#[derive(Debug, Clone)]
pub struct CommandLine {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub label: String,
}

impl CommandLine {
    /// The process to start: the program with its arguments and extra environment.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }
}

/// The most of one stderr line kept (its end): a progress bar redrawn with `\r` never ends its
/// line, and must not grow the tail without bound.
const MAX_LINE_BYTES: usize = 8 * 1024;

/// How long [`Running::wait`] gives the draining thread, once the child has exited, to reach the
/// end of its stderr: a grandchild still holding the pipe must not hold the caller too.
const SETTLE: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error("cannot start {program}: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    #[error("waiting for {program}: {source}")]
    Wait {
        program: String,
        source: std::io::Error,
    },
    /// A child that ran and did not succeed; `what` names it (the program, or what it was doing).
    #[error("{what} failed:\n{tail}")]
    Failed { what: String, tail: String },
}

impl ChildError {
    /// The system's error behind a child that could not be started or waited for, for callers
    /// that word those themselves (a failed child becomes an `Other` error with its message).
    pub fn into_io(self) -> std::io::Error {
        match self {
            ChildError::Start { source, .. } | ChildError::Wait { source, .. } => source,
            failed @ ChildError::Failed { .. } => std::io::Error::other(failed.to_string()),
        }
    }
}

/// The last lines of a stream, at most `keep` of them, shared between the thread filling it and
/// whoever reads it.
#[derive(Debug, Clone)]
pub struct Tail {
    lines: Arc<Mutex<VecDeque<String>>>,
    keep: usize,
}

impl Tail {
    pub fn new(keep: usize) -> Tail {
        Tail {
            lines: Arc::new(Mutex::new(VecDeque::new())),
            keep,
        }
    }

    /// How many lines it keeps.
    pub fn keep(&self) -> usize {
        self.keep
    }

    /// Adds a line, forgetting the oldest beyond `keep`.
    pub fn push(&self, line: String) {
        let mut lines = self.lock();
        lines.push_back(line);
        while lines.len() > self.keep {
            lines.pop_front();
        }
    }

    /// Adds every line of `text`.
    pub fn push_text(&self, text: &str) {
        for line in text.lines() {
            self.push(line.to_string());
        }
    }

    /// The kept lines, oldest first, joined with `\n`.
    pub fn text(&self) -> String {
        let lines = self.lock();
        lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<String>> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads `stream` to its end, keeping its last lines; invalid UTF-8 is replaced, never a
    /// reason to stop reading (the child would then block on a full pipe).
    fn drain(&self, stream: impl Read) {
        let mut reader = BufReader::new(stream);
        let mut line = Vec::new();
        loop {
            let chunk = match reader.fill_buf() {
                Ok([]) => break,
                Ok(chunk) => chunk,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let read = chunk.len();
            for part in chunk.split_inclusive(|b| *b == b'\n') {
                self.extend(&mut line, part);
            }
            reader.consume(read);
        }
        if !line.is_empty() {
            self.push(line_text(&line));
        }
    }

    /// Adds `part` (at most one `\n`, at its end) to the line being read; a finished line is kept.
    fn extend(&self, line: &mut Vec<u8>, part: &[u8]) {
        line.extend_from_slice(part);
        if line.len() > MAX_LINE_BYTES {
            line.drain(..line.len() - MAX_LINE_BYTES);
        }
        if line.ends_with(b"\n") {
            self.push(line_text(line));
            line.clear();
        }
    }
}

/// A line's text without its `\n` or `\r\n`.
fn line_text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

/// The last `n` lines of `text` (all of it when shorter), joined with `\n`.
pub fn last_lines(text: &str, n: usize) -> String {
    let tail = Tail::new(n);
    tail.push_text(text);
    tail.text()
}

/// A finished child: how it ended, all it wrote to stdout, and the last lines of its stderr.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Finished {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Itself when the child succeeded, else [`ChildError::Failed`]: `<what> failed:` and the
    /// tail of its stderr.
    pub fn check(self, what: impl Into<String>) -> Result<Finished, ChildError> {
        if self.status.success() {
            return Ok(self);
        }
        Err(ChildError::Failed {
            what: what.into(),
            tail: self.stderr,
        })
    }
}

/// Runs `cmd` to completion with an empty stdin, keeping all of its stdout and the last `keep`
/// lines of its stderr. A child that fails is still `Ok` (see [`Finished::check`]).
pub fn run(cmd: &mut Command, keep: usize) -> Result<Finished, ChildError> {
    start(cmd, Stdio::null(), keep)?.finish()
}

/// Starts `cmd` as a long-lived child: stdin and stdout piped for the caller to take, stderr
/// drained into a tail of its last `keep` lines.
pub fn spawn(cmd: &mut Command, keep: usize) -> Result<Running, ChildError> {
    start(cmd, Stdio::piped(), keep)
}

fn start(cmd: &mut Command, stdin: Stdio, keep: usize) -> Result<Running, ChildError> {
    let program = program_name(cmd.get_program());
    let spawned = cmd
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = spawned.map_err(|source| ChildError::Start {
        program: program.clone(),
        source,
    })?;
    let tail = Tail::new(keep);
    let drainer = child.stderr.take().map(|stream| {
        let tail = tail.clone();
        thread::spawn(move || tail.drain(stream))
    });
    Ok(Running {
        program,
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        child,
        tail,
        drainer,
    })
}

fn program_name(program: &OsStr) -> String {
    Path::new(program).display().to_string()
}

/// A started child whose stderr is being drained into its [`Tail`]. Dropping it leaves the
/// process running; [`Running::kill`] ends it.
#[derive(Debug)]
pub struct Running {
    program: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    tail: Tail,
    drainer: Option<JoinHandle<()>>,
}

impl Running {
    /// The program it runs, as errors name it.
    pub fn program(&self) -> &str {
        &self.program
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Its stdin (once; `None` for a child started by [`run`]).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Its stdout (once); what is not taken, [`Running::finish`] reads.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// The last lines of its stderr so far.
    pub fn tail(&self) -> &Tail {
        &self.tail
    }

    /// `Some` once it has exited.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Kills it and collects its status (errors ignored: it may be gone already).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes its stdin (if still held) and waits for it to exit, then briefly for the last
    /// lines of its stderr to reach the tail.
    pub fn wait(&mut self) -> Result<ExitStatus, ChildError> {
        self.stdin = None;
        let status = self
            .child
            .wait()
            .map_err(|source| self.wait_error(source))?;
        let deadline = Instant::now() + SETTLE;
        while self.drainer.as_ref().is_some_and(|d| !d.is_finished()) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
        Ok(status)
    }

    /// Closes its stdin, reads the rest of its stdout and waits for it to exit and for the end
    /// of its stderr (as `Command::output` does).
    pub fn finish(mut self) -> Result<Finished, ChildError> {
        self.stdin = None;
        let mut stdout = Vec::new();
        if let Some(mut out) = self.stdout.take() {
            out.read_to_end(&mut stdout)
                .map_err(|source| self.wait_error(source))?;
        }
        let status = self
            .child
            .wait()
            .map_err(|source| self.wait_error(source))?;
        if let Some(drainer) = self.drainer.take() {
            let _ = drainer.join();
        }
        Ok(Finished {
            status,
            stdout,
            stderr: self.tail.text(),
        })
    }

    fn wait_error(&self, source: std::io::Error) -> ChildError {
        ChildError::Wait {
            program: self.program.clone(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::mpsc;

    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    /// `f` on a thread, failing the test (instead of hanging it) when it takes over a minute.
    fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || tx.send(f()));
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the child blocked: its stderr was not drained")
    }

    #[test]
    fn the_tail_is_bounded_and_keeps_the_last_lines() {
        let out = run(
            &mut sh("for i in $(seq 1 100); do echo line$i >&2; done; echo out"),
            3,
        )
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout_text(), "out\n");
        assert_eq!(out.stderr, "line98\nline99\nline100");
    }

    #[test]
    fn a_child_writing_lots_of_stderr_runs_to_completion() {
        // 1.2 MB of stderr, far beyond a pipe's buffer: undrained, the child would block.
        let out = within_a_minute(|| {
            run(
                &mut sh("yes 'stderr line' | head -n 100000 >&2; echo done"),
                5,
            )
            .unwrap()
        });
        assert_eq!(out.stdout_text(), "done\n");
        assert_eq!(out.stderr, ["stderr line"; 5].join("\n"));
    }

    #[test]
    fn a_long_lived_child_writing_lots_of_stderr_still_answers() {
        let answer = within_a_minute(|| {
            let script = "yes 'noise' | head -n 100000 >&2; read x; echo got $x; echo bye >&2";
            let mut child = spawn(&mut sh(script), 2).unwrap();
            writeln!(child.take_stdin().unwrap(), "hi").unwrap();
            let mut line = String::new();
            BufReader::new(child.take_stdout().unwrap())
                .read_line(&mut line)
                .unwrap();
            let status = child.wait().unwrap();
            (line, status.success(), child.tail().text())
        });
        assert_eq!(
            answer,
            ("got hi\n".to_string(), true, "noise\nbye".to_string())
        );
    }

    #[test]
    fn a_line_that_never_ends_keeps_only_its_end() {
        let script = "head -c 100000 /dev/zero | tr '\\0' x >&2; printf yz >&2";
        let out = run(&mut sh(script), 4).unwrap();
        assert_eq!(out.stderr.len(), MAX_LINE_BYTES);
        assert!(
            out.stderr.ends_with("xyz"),
            "{}",
            &out.stderr[MAX_LINE_BYTES - 10..]
        );
    }

    #[test]
    fn invalid_utf8_does_not_stop_the_draining() {
        let script = "printf 'a\\377b\\r\\n' >&2; yes e | head -n 50000 >&2; echo ok";
        let out = within_a_minute(move || run(&mut sh(script), 100_000).unwrap());
        assert_eq!(out.stdout_text(), "ok\n");
        let expected = format!("a\u{fffd}b\n{}", ["e"; 50_000].join("\n"));
        assert!(
            out.stderr == expected,
            "{} lines",
            out.stderr.lines().count()
        );
    }

    #[test]
    fn failures_name_the_program_and_end_with_the_tail() {
        let e = run(&mut Command::new("/no/such/program"), 3).unwrap_err();
        assert!(matches!(e, ChildError::Start { .. }), "{e}");
        assert!(
            e.to_string().starts_with("cannot start /no/such/program: "),
            "{e}"
        );
        let out = run(&mut sh("echo one >&2; echo boom >&2; exit 3"), 1).unwrap();
        assert_eq!(out.status.code(), Some(3));
        let e = out.check("sh").unwrap_err();
        assert_eq!(e.to_string(), "sh failed:\nboom");
    }

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a\nb", 5), "a\nb");
        assert_eq!(last_lines("", 3), "");
        assert_eq!(last_lines("a\nb", 0), "");
    }
}
