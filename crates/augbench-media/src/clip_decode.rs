//! The one video decoder behind the clip cache: OpenCV in the `video_decode` Python environment,
//! started by the command augbench-exec builds (`exec::worker::clip_decoder`) with the job file
//! appended (through `host::child`, which keeps its stderr's tail), streaming one manifest line per
//! video back. The augbench binary links no FFmpeg.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::Context;
use augbench_core::policy;
use augbench_host::child::{self, CommandLine};
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::clips::SAMPLING_RULE;

/// A ready decoder: the command that starts it and the identity its clips are cached under.
#[derive(Debug, Clone)]
pub struct Decoder {
    pub command: CommandLine,
    /// Part of the clip cache key: the group and a hash of the lock its environment was built
    /// from (a new OpenCV means new clips).
    pub identity: String,
}

/// One input of a decode job: a video file and the clip folder to write.
#[derive(Debug, Clone, Serialize)]
pub struct JobItem {
    pub source: String,
    pub out: String,
}

/// What the decoder is asked to do (written as the job file).
#[derive(Debug, Clone, Serialize)]
pub struct DecodeJob {
    pub clip_length: u64,
    pub min_side: u32,
    pub memory_bytes: u64,
    pub items: Vec<JobItem>,
}

/// One manifest line: a clip written, or an input skipped with its reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub source: String,
    /// The clip folder's name inside the cache, when a clip was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Frames decoded (video) or found (frame folder).
    #[serde(default)]
    pub frames: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    #[serde(default)]
    pub indices: Vec<u64>,
    /// Something the user should know about a clip that was still written (a truncated file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Entry {
    pub fn skip(source: &Path, reason: impl Into<String>) -> Self {
        Entry {
            source: source.display().to_string(),
            clip: None,
            skipped: Some(reason.into()),
            frames: 0,
            fps: None,
            width: None,
            height: None,
            indices: Vec::new(),
            note: None,
        }
    }
}

#[derive(Debug, Deserialize)]
struct Hello {
    decoder: String,
    version: String,
    sampling_rule: String,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Line {
    Hello { hello: Hello },
    Entry(Entry),
}

/// What a decode run returns: the decoder's name and version, and one entry per job item.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub decoder: String,
    pub entries: Vec<Entry>,
}

impl Decoder {
    /// The decoder started by `command` in the environment of `group` built from `lock`.
    pub fn new(command: CommandLine, group: &str, lock: &str) -> Self {
        let digest = Sha256::digest(lock.as_bytes());
        let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        Decoder {
            command,
            identity: format!("{group}-{hash}"),
        }
    }

    /// Decodes every item of `job` (the job file is written into `work`); `bar` moves per video.
    pub fn decode(
        &self,
        job: &DecodeJob,
        work: &Path,
        bar: &ProgressBar,
    ) -> anyhow::Result<Decoded> {
        let job_file = work.join(".decode-job.json");
        let text = serde_json::to_vec(job).context("encoding the decode job")?;
        std::fs::write(&job_file, text)
            .with_context(|| format!("writing {}", job_file.display()))?;
        let cmd = &self.command;
        let mut process = cmd.command();
        process.arg(&job_file);
        let mut running = child::spawn(&mut process, policy::STDERR_TAIL_LINES)
            .with_context(|| format!("starting the video decoder ({})", cmd.label))?;
        drop(running.take_stdin()); // it reads nothing from stdin
        let lines = running.take_stdout().map(|out| read_lines(out, bar));
        let done = running.finish().context("waiting for the video decoder")?;
        let _ = std::fs::remove_file(&job_file);
        let lines = lines.unwrap_or_else(|| Ok(Vec::new()));
        let decoded = lines.and_then(|l| collect(l, job.items.len()));
        let status = done.status;
        match (status.success(), decoded) {
            (true, Ok(d)) => Ok(d),
            (ok, d) => Err(d
                .err()
                .unwrap_or_else(|| anyhow::anyhow!("exit status {status}")))
            .with_context(|| failure(&cmd.label, ok, &done.stderr)),
        }
    }
}

fn failure(label: &str, exited_ok: bool, tail: &str) -> String {
    let how = if exited_ok {
        "answered badly"
    } else {
        "failed"
    };
    format!("the video decoder ({label}) {how}; its stderr:\n{tail}")
}

/// Parses the decoder's stdout line by line, moving `bar` for each entry.
fn read_lines(out: impl Read, bar: &ProgressBar) -> anyhow::Result<Vec<Line>> {
    let mut lines = Vec::new();
    for line in BufReader::new(out).lines() {
        let line = line.context("reading the video decoder's output")?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(&line)
            .with_context(|| format!("the video decoder sent a malformed line: {line}"))?;
        if matches!(parsed, Line::Entry(_)) {
            bar.inc(1);
        }
        lines.push(parsed);
    }
    Ok(lines)
}

/// The hello and exactly `expected` entries, with the decoder's rule checked against ours.
fn collect(lines: Vec<Line>, expected: usize) -> anyhow::Result<Decoded> {
    let mut hello = None;
    let mut entries = Vec::new();
    for line in lines {
        match line {
            Line::Hello { hello: h } => hello = Some(h),
            Line::Entry(e) => entries.push(e),
        }
    }
    let hello = hello.context("the video decoder did not say hello")?;
    anyhow::ensure!(
        hello.sampling_rule == SAMPLING_RULE,
        "the video decoder samples with `{}`, augbench with `{SAMPLING_RULE}`",
        hello.sampling_rule
    );
    anyhow::ensure!(
        entries.len() == expected,
        "the video decoder answered for {} of {expected} videos",
        entries.len()
    );
    Ok(Decoded {
        decoder: format!("{} {}", hello.decoder, hello.version),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line> {
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn hello_and_entries_are_collected() {
        let text = format!(
            "{{\"hello\": {{\"decoder\": \"opencv\", \"version\": \"5.0.0\", \"sampling_rule\": \"{SAMPLING_RULE}\"}}}}\n\
             {{\"source\": \"a.avi\", \"clip\": \"clip_000000\", \"frames\": 3, \"fps\": 25.0, \"width\": 32, \"height\": 16, \"indices\": [0, 1, 2], \"note\": null}}\n\
             {{\"source\": \"b.avi\", \"skipped\": \"cannot open\"}}"
        );
        let d = collect(lines(&text), 2).unwrap();
        assert_eq!(d.decoder, "opencv 5.0.0");
        assert_eq!(d.entries[0].indices, vec![0, 1, 2]);
        assert_eq!(d.entries[0].note, None);
        assert_eq!(d.entries[1].skipped.as_deref(), Some("cannot open"));
        assert!(
            collect(lines(&text), 3).is_err(),
            "a missing answer is an error"
        );
    }

    #[test]
    fn a_different_sampling_rule_is_refused() {
        let text = "{\"hello\": {\"decoder\": \"opencv\", \"version\": \"1\", \"sampling_rule\": \"other/v9\"}}";
        let e = collect(lines(text), 0).unwrap_err().to_string();
        assert!(e.contains("other/v9"), "{e}");
    }
}
