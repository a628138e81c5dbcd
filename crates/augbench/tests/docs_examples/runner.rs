//! The docs-example runner: finds the fenced shell blocks marked runnable in a Markdown page
//! (```` ```bash runnable ```` or ```` ```bash runnable exit=N ````), runs them in order with bash in
//! one working folder, and reports each block whose exit code differs from the one it expects.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The word in a fence's info string that marks a block to run.
pub const MARKER: &str = "runnable";

/// One marked block: where it starts, its text, and the exit code it must end with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// 1-based line of the opening fence.
    pub line: usize,
    pub code: String,
    pub expect: i32,
}

/// A block that did not end as expected.
#[derive(Debug, Clone)]
pub struct Failure {
    pub line: usize,
    pub expect: i32,
    /// None when the block was killed at the timeout.
    pub got: Option<i32>,
    pub output: String,
}

/// Where and how blocks run.
pub struct Runner {
    /// Working folder shared by the blocks of one page.
    pub dir: PathBuf,
    /// Environment set for every block (PATH, AUGBENCH_CACHE, …).
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

/// The expected exit code of a fence info string, or None when the block is not marked.
/// `Err` for a marked block whose `exit=` is not a number.
pub fn parse_info(info: &str) -> Option<Result<i32, String>> {
    let mut words = info.split_whitespace();
    let lang = words.next()?;
    if !matches!(lang, "bash" | "sh" | "shell") {
        return None;
    }
    let rest: Vec<&str> = words.collect();
    if !rest.contains(&MARKER) {
        return None;
    }
    let exit = rest.iter().find_map(|w| w.strip_prefix("exit="));
    Some(match exit {
        None => Ok(0),
        Some(n) => n.parse().map_err(|_| format!("bad exit code `{n}`")),
    })
}

/// The opening fence of a line: (fence characters, info string), for ``` and ~~~ fences.
fn fence(line: &str) -> Option<(String, &str)> {
    let trimmed = line.trim_start();
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == ch).count();
    (len >= 3).then(|| (trimmed[..len].to_string(), trimmed[len..].trim()))
}

/// Every marked block of `markdown`, in order. Unmarked blocks are skipped (their text too).
pub fn extract(markdown: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some((fence_str, info)) = fence(line) else {
            continue;
        };
        let marked = parse_info(info);
        let mut code = String::new();
        let mut closed = false;
        for (_, body) in lines.by_ref() {
            if closes(body, &fence_str) {
                closed = true;
                break;
            }
            code.push_str(body.strip_prefix(indent(line)).unwrap_or(body));
            code.push('\n');
        }
        if !closed {
            return Err(format!("line {}: code block is never closed", i + 1));
        }
        if let Some(expect) = marked {
            let expect = expect.map_err(|e| format!("line {}: {e}", i + 1))?;
            blocks.push(Block {
                line: i + 1,
                code,
                expect,
            });
        }
    }
    Ok(blocks)
}

/// Whether `line` closes a block opened with `fence`: the same character, at least as many.
fn closes(line: &str, fence: &str) -> bool {
    let t = line.trim();
    let ch = fence.chars().next().unwrap_or('`');
    t.len() >= fence.len() && t.chars().all(|c| c == ch)
}

/// The indentation before a fence (fences inside list items are indented).
fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

impl Runner {
    /// Runs the blocks in order; a block's failure does not stop the next ones.
    pub fn run_all(&self, blocks: &[Block]) -> Vec<Failure> {
        blocks.iter().filter_map(|b| self.run(b)).collect()
    }

    /// Runs one block with `bash -e -o pipefail`; `Some` when it did not exit as expected.
    pub fn run(&self, block: &Block) -> Option<Failure> {
        let log = self.dir.join(format!(".block-{}.log", block.line));
        let got = self.exec(&block.code, &log);
        if got == Some(block.expect) {
            return None;
        }
        Some(Failure {
            line: block.line,
            expect: block.expect,
            got,
            output: tail(&std::fs::read_to_string(&log).unwrap_or_default(), 30),
        })
    }

    /// The exit code of `code`, or None when it ran past the timeout (and was killed).
    fn exec(&self, code: &str, log: &Path) -> Option<i32> {
        let out = std::fs::File::create(log).ok()?;
        let err = out.try_clone().ok()?;
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-e", "-o", "pipefail", "-c", code])
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .env_remove("AUGBENCH_TEST_FAULTS");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().ok()?;
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status.code().unwrap_or(-1));
            }
            if started.elapsed() > self.timeout {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// One line per failure, for an assertion message.
pub fn describe(page: &Path, failures: &[Failure]) -> String {
    failures
        .iter()
        .map(|f| {
            let got = f
                .got
                .map_or("a timeout".to_string(), |c| format!("exit {c}"));
            format!(
                "{}:{}: expected exit {}, got {got}\n{}\n",
                page.display(),
                f.line,
                f.expect,
                f.output
            )
        })
        .collect()
}
