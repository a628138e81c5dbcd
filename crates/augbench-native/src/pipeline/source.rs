//! The media a pipeline loader reads, and reading it for `load`: decoded items or clips of
//! frames (memory scope), or paths and clip folders the loader decodes (decode scopes), with the
//! files skipped and why. Shared by the loader side (`pipe`) and the row's recipe (`recipe`).

use augbench_protocol::protocol::{Failure, FailureKind, LoadRequest, Skipped};

use crate::load::{self, Decoded};
use crate::reply::failure;
use crate::session::Adapter;

/// The media a loader reads: decoded items (memory scope) or paths (decode scopes).
pub(super) enum Source<A: Adapter> {
    Paths(Vec<String>),
    Items(Vec<A::Item>),
    /// Video, decode scopes: clip folders, read frame by frame in the loader.
    ClipPaths(Vec<String>),
    /// Video, memory scope: each clip's decoded frames.
    Clips(Vec<Vec<A::Item>>),
}

impl<A: Adapter> Source<A> {
    pub(super) fn len(&self) -> usize {
        match self {
            Source::Items(v) => v.len(),
            Source::Paths(v) | Source::ClipPaths(v) => v.len(),
            Source::Clips(v) => v.len(),
        }
    }

    /// What `load` answers as the first item's shape (`[T, H, W, C]` for a clip).
    pub(super) fn first_shape(&self) -> Vec<u64> {
        match self {
            Source::Items(items) => items.first().map(|i| A::shape(i).to_vec()),
            Source::Clips(clips) => clips.first().map(|c| {
                let [h, w, ch] = c.first().map(A::shape).unwrap_or_default();
                vec![c.len() as u64, h, w, ch]
            }),
            Source::Paths(_) | Source::ClipPaths(_) => None,
        }
        .unwrap_or_default()
    }
}

/// What `load` read: the source, the files it skipped and how many it converted to RGB.
pub(super) struct Read<A: Adapter> {
    pub(super) source: Source<A>,
    pub(super) skipped: Vec<Skipped>,
    pub(super) converted: u64,
}

/// The memory scope: every file decoded now (unreadable ones skipped with the reason).
pub(super) fn decoded<A: Adapter>(paths: &[String]) -> Result<Read<A>, Failure> {
    let Decoded {
        items,
        skipped,
        converted,
    } = load::decode_all(paths);
    let items = items
        .into_iter()
        .map(|d| A::convert(d.width, d.height, d.data))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| failure(FailureKind::Exception, format!("{}: {e}", A::LIBRARY)))?;
    Ok(Read {
        source: Source::Items(items),
        skipped,
        converted,
    })
}

/// Video, memory scope: every clip folder read now (an unreadable one skipped with the reason).
pub(super) fn decoded_clips<A: Adapter>(folders: &[String]) -> Result<Read<A>, Failure> {
    let mut clips = Vec::new();
    let mut skipped = Vec::new();
    for folder in folders {
        match crate::clips::read_clip(std::path::Path::new(folder)) {
            Ok(frames) => clips.push(convert_frames::<A>(frames)?),
            Err(reason) => skipped.push(Skipped {
                path: folder.clone(),
                reason,
            }),
        }
    }
    Ok(Read {
        source: Source::Clips(clips),
        skipped,
        converted: 0,
    })
}

fn convert_frames<A: Adapter>(frames: Vec<load::Rgb8>) -> Result<Vec<A::Item>, Failure> {
    frames
        .into_iter()
        .map(|f| A::convert(f.width, f.height, f.data))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| failure(FailureKind::Exception, format!("{}: {e}", A::LIBRARY)))
}

/// The decode scopes: the loader decodes; a missing file (clip folder) is skipped now.
pub(super) fn paths_only<A: Adapter>(paths: &[String], clips: bool) -> Read<A> {
    let exists = |p: &String| {
        let p = std::path::Path::new(p);
        if clips { p.is_dir() } else { p.is_file() }
    };
    let (found, missing): (Vec<_>, Vec<_>) = paths.iter().cloned().partition(exists);
    let reason = if clips {
        "no such clip folder"
    } else {
        "no such file"
    };
    let skipped = missing
        .into_iter()
        .map(|path| Skipped {
            path,
            reason: reason.into(),
        })
        .collect();
    let source = if clips {
        Source::ClipPaths(found)
    } else {
        Source::Paths(found)
    };
    Read {
        source,
        skipped,
        converted: 0,
    }
}

pub(super) fn nothing_read(req: &LoadRequest, skipped: &[Skipped]) -> Failure {
    let first = skipped
        .first()
        .map(|s| format!(" (first: {}: {})", s.path, s.reason))
        .unwrap_or_default();
    let msg = format!("none of the {} files could be read{first}", req.paths.len());
    failure(FailureKind::Exception, msg)
}
