//! The coordinator's side of the worker protocol: starts a worker from the command it is given
//! (through `host::child`, which keeps the tail of its stderr), sends one request at a time with a
//! timeout, and turns a crash, hang or garbled line into a typed error carrying that tail. Nothing
//! here knows which language the worker is written in, nor builds its command line.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, Command};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use augbench_host::child::{self, Running};
use serde::de::DeserializeOwned;

use crate::protocol::{Failure, Request, parse_response};

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("{label}: {}", .failure.error)]
    Failed { label: String, failure: Failure },
    #[error("{label} exited ({status}) during `{op}`{}", tail_suffix(.stderr_tail))]
    Died {
        label: String,
        op: String,
        status: String,
        stderr_tail: String,
    },
    #[error("{label} did not answer `{op}` within {secs:.0} s and was killed{}", tail_suffix(.stderr_tail))]
    Timeout {
        label: String,
        op: String,
        secs: f64,
        stderr_tail: String,
    },
    #[error("{label} broke the protocol during `{op}`: {problem} (line: {line:?})")]
    Protocol {
        label: String,
        op: String,
        problem: String,
        line: String,
    },
    #[error("cannot start {label} ({program}): {source}")]
    Spawn {
        label: String,
        program: String,
        source: std::io::Error,
    },
}

fn tail_suffix(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("\n--- stderr tail ---\n{}", tail.trim_end())
    }
}

impl WorkerError {
    /// True when the worker process is gone or unusable and must be replaced.
    pub fn worker_lost(&self) -> bool {
        !matches!(self, WorkerError::Failed { .. })
    }
}

/// A running worker. Dropping it kills the process.
pub struct Worker {
    label: String,
    child: Running,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Worker {
    /// Starts the worker `line` describes, keeping the last `tail_lines` lines of its stderr.
    pub fn start(line: &child::CommandLine, tail_lines: usize) -> Result<Worker, WorkerError> {
        Worker::spawn(line.command(), &line.label, tail_lines)
    }

    /// Starts `command` as a worker named `label` in messages, keeping the last `tail_lines`
    /// lines of its stderr for errors.
    pub fn spawn(
        mut command: Command,
        label: &str,
        tail_lines: usize,
    ) -> Result<Worker, WorkerError> {
        let mut child = child::spawn(&mut command, tail_lines).map_err(|e| WorkerError::Spawn {
            label: label.to_string(),
            program: Path::new(command.get_program()).display().to_string(),
            source: e.into_io(),
        })?;
        let (tx, lines) = mpsc::channel();
        if let Some(out) = child.take_stdout() {
            thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Ok(Worker {
            label: label.to_string(),
            stdin: child.take_stdin(),
            child,
            lines,
        })
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// The worker's process id (a tool it runs under, such as Valgrind, has the same).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines the worker wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.child.tail().text()
    }

    /// Sends a request and decodes the success payload into `T`.
    pub fn call<T: DeserializeOwned>(
        &mut self,
        req: &Request,
        timeout: Duration,
    ) -> Result<T, WorkerError> {
        let op = op_name(req);
        let value = self.request(req, timeout)?;
        serde_json::from_value(value.clone())
            .map_err(|e| self.protocol(&op, e.to_string(), value.to_string()))
    }

    /// Sends a request and returns the raw success payload.
    pub fn request(
        &mut self,
        req: &Request,
        timeout: Duration,
    ) -> Result<serde_json::Value, WorkerError> {
        let op = op_name(req);
        let line = serde_json::to_string(req).unwrap_or_default();
        let sent = self
            .stdin
            .as_mut()
            .map(|s| writeln!(s, "{line}").and_then(|_| s.flush()));
        if !matches!(sent, Some(Ok(()))) {
            return Err(self.died(&op));
        }
        match self.lines.recv_timeout(timeout) {
            Ok(reply) => self.decode(&op, &reply),
            Err(RecvTimeoutError::Timeout) => {
                self.child.kill();
                let _ = self.child.wait(); // lets the last lines of stderr reach the tail
                Err(WorkerError::Timeout {
                    label: self.label.clone(),
                    op,
                    secs: timeout.as_secs_f64(),
                    stderr_tail: self.stderr_tail(),
                })
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.died(&op)),
        }
    }

    fn decode(&mut self, op: &str, reply: &str) -> Result<serde_json::Value, WorkerError> {
        match parse_response(reply) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(failure)) => Err(WorkerError::Failed {
                label: self.label.clone(),
                failure,
            }),
            Err(e) => {
                self.kill();
                Err(self.protocol(op, e.to_string(), reply.to_string()))
            }
        }
    }

    fn protocol(&self, op: &str, problem: String, line: String) -> WorkerError {
        let line: String = line.chars().take(300).collect();
        WorkerError::Protocol {
            label: self.label.clone(),
            op: op.to_string(),
            problem,
            line,
        }
    }

    fn died(&mut self, op: &str) -> WorkerError {
        self.stdin = None;
        let status = self
            .child
            .wait()
            .map(|s| describe_status(&s))
            .unwrap_or_else(|e| format!("unknown status: {e}"));
        WorkerError::Died {
            label: self.label.clone(),
            op: op.to_string(),
            status,
            stderr_tail: self.stderr_tail(),
        }
    }

    /// False once the process has exited (or was killed after a timeout).
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn kill(&mut self) {
        self.child.kill();
    }

    /// Polite shutdown; kills the worker if it does not answer quickly.
    pub fn shutdown(mut self) {
        self.close();
    }

    /// [`Worker::shutdown`] in place, for a worker that is about to be replaced.
    pub fn close(&mut self) {
        let _ = self.request(&Request::Shutdown, Duration::from_secs(5));
        self.stdin = None;
        let _ = self.child.wait();
    }

    pub fn tail_lines(&self) -> usize {
        self.child.tail().keep()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

fn op_name(req: &Request) -> String {
    serde_json::to_value(req)
        .ok()
        .and_then(|v| v.get("op").and_then(|o| o.as_str().map(str::to_string)))
        .unwrap_or_default()
}

#[cfg(unix)]
fn describe_status(s: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(9)) => "killed by SIGKILL (out of memory?)".to_string(),
        (None, Some(11)) => "segmentation fault (SIGSEGV)".to_string(),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => s.to_string(),
    }
}

#[cfg(not(unix))]
fn describe_status(s: &std::process::ExitStatus) -> String {
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Worker {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        Worker::spawn(c, "test worker", 2).unwrap()
    }

    #[test]
    fn a_worker_that_dies_is_reported_with_its_status_and_stderr_tail() {
        let mut w = sh("read x; echo one >&2; echo two >&2; echo three >&2; exit 3");
        let e = w
            .request(&Request::Hello, Duration::from_secs(30))
            .unwrap_err();
        assert!(e.worker_lost());
        assert_eq!(
            e.to_string(),
            "test worker exited (exit code 3) during `hello`\n--- stderr tail ---\ntwo\nthree"
        );
    }

    #[test]
    fn a_worker_that_hangs_is_killed_after_the_timeout() {
        let mut w = sh("echo waiting >&2; exec sleep 30");
        let e = w
            .request(&Request::Hello, Duration::from_millis(300))
            .unwrap_err();
        assert!(matches!(e, WorkerError::Timeout { .. }), "{e}");
        assert!(
            e.to_string().ends_with("\n--- stderr tail ---\nwaiting"),
            "{e}"
        );
        assert!(!w.is_alive());
    }

    #[test]
    fn a_program_that_cannot_start_is_named() {
        let e = Worker::spawn(Command::new("/no/such/worker"), "x worker", 2)
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .starts_with("cannot start x worker (/no/such/worker): "),
            "{e}"
        );
    }
}
