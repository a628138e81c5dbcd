//! The coordinator's side of the worker protocol: spawns a worker process, sends one request at a
//! time with a timeout, and turns a crash, hang or garbled line into a typed error carrying the tail
//! of the worker's stderr. Nothing here knows which language the worker is written in.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::protocol::{Failure, Request, parse_response};

/// How to start a worker: program, arguments and extra environment.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Human label for messages, e.g. `kornia-rs worker`.
    pub label: String,
}

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
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    tail_lines: usize,
}

impl Worker {
    pub fn spawn(cmd: &WorkerCommand, tail_lines: usize) -> Result<Worker, WorkerError> {
        let mut command = Command::new(&cmd.program);
        command
            .args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|source| WorkerError::Spawn {
            label: cmd.label.clone(),
            program: cmd.program.display().to_string(),
            source,
        })?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (tx, lines) = mpsc::channel();
        if let Some(out) = stdout {
            thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(err) = stderr {
            let tail = Arc::clone(&tail);
            thread::spawn(move || collect_tail(err, &tail, tail_lines));
        }
        Ok(Worker {
            label: cmd.label.clone(),
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: tail,
            tail_lines,
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
        match self.stderr.lock() {
            Ok(t) => t.iter().cloned().collect::<Vec<_>>().join("\n"),
            Err(_) => String::new(),
        }
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
                self.kill();
                thread::sleep(Duration::from_millis(50));
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
        // Give the stderr reader a moment to drain the last lines.
        thread::sleep(Duration::from_millis(100));
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
        let _ = self.child.kill();
        let _ = self.child.wait();
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
        self.tail_lines
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

fn collect_tail(err: impl std::io::Read, tail: &Mutex<VecDeque<String>>, keep: usize) {
    for line in BufReader::new(err).lines().map_while(Result::ok) {
        if let Ok(mut t) = tail.lock() {
            t.push_back(line);
            while t.len() > keep {
                t.pop_front();
            }
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
