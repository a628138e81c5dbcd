//! `load`: decodes image files once with the `image` crate (outside any timing), skips unreadable
//! or corrupt files with a reason, converts grayscale/RGBA/16-bit files to RGB8 and counts them,
//! stacks RGB k times for 3·k channels, and hands the pixels to the library's own image type.

use std::path::Path;
use std::time::Instant;

use crate::adapters::{Fir, ImageRs, Imageproc, Kornia, Zune};
#[cfg(test)]
use crate::decode::jpeg_is_complete;
pub(crate) use crate::decode::{Rgb8, decode};
use crate::library::Library;
use crate::reply::failure;
use crate::session::{Adapter, DTYPE, LAYOUT, Loaded, Session};
use augbench_protocol::protocol::{Failure, FailureKind, LoadRequest, LoadResponse, Skipped};

pub(crate) struct Decoded {
    pub items: Vec<Rgb8>,
    pub skipped: Vec<Skipped>,
    pub converted: u64,
}

/// Decodes every path; a file that cannot be opened or decoded is skipped with its reason.
pub(crate) fn decode_all(paths: &[String]) -> Decoded {
    let mut out = Decoded {
        items: Vec::new(),
        skipped: Vec::new(),
        converted: 0,
    };
    for path in paths {
        match decode(Path::new(path)) {
            Ok((img, was_converted)) => {
                out.converted += u64::from(was_converted);
                out.items.push(img);
            }
            Err(reason) => out.skipped.push(Skipped {
                path: path.clone(),
                reason,
            }),
        }
    }
    out
}

/// Repeats each RGB pixel `k` times along the channel axis (3·k channels).
pub(crate) fn stack(rgb: &[u8], k: usize) -> Vec<u8> {
    if k == 1 {
        return rgb.to_vec();
    }
    let mut out = Vec::with_capacity(rgb.len() * k);
    for px in rgb.chunks_exact(3) {
        for _ in 0..k {
            out.extend_from_slice(px);
        }
    }
    out
}

/// Answers `load`: the new session and the response.
pub(crate) fn load(
    lib: Library,
    req: &LoadRequest,
    test_faults: bool,
) -> Result<(Box<dyn Session>, LoadResponse), Failure> {
    check_request(lib, req)?;
    let t0 = Instant::now();
    let decoded = decode_all(&req.paths);
    if decoded.items.is_empty() {
        return Err(nothing_loaded(req, &decoded));
    }
    let count = decoded.items.len() as u64;
    let (session, shape) = match (lib, req.channels) {
        (Library::Image, 3) => into_session::<ImageRs>(decoded.items, 1, test_faults)?,
        (Library::Imageproc, 3) => into_session::<Imageproc>(decoded.items, 1, test_faults)?,
        (Library::FastImageResize, 3) => into_session::<Fir>(decoded.items, 1, test_faults)?,
        (Library::KorniaRs, 3) => into_session::<Kornia<3>>(decoded.items, 1, test_faults)?,
        (Library::KorniaRs, 9) => into_session::<Kornia<9>>(decoded.items, 3, test_faults)?,
        (Library::ZuneImage, 3) => into_session::<Zune>(decoded.items, 1, test_faults)?,
        _ => unreachable_channels(lib, req.channels)?,
    };
    let response = LoadResponse {
        count,
        decode_seconds: t0.elapsed().as_secs_f64(),
        shape,
        dtype: DTYPE.into(),
        layout: LAYOUT.into(),
        skipped: decoded.skipped,
        converted: decoded.converted,
        targets: None,
    };
    Ok((session, response))
}

pub(crate) fn check_request(lib: Library, req: &LoadRequest) -> Result<(), Failure> {
    if req.media == "video" && req.channels != 3 {
        let msg = format!("{} measures RGB video clips only", lib.name());
        return Err(failure(FailureKind::Unsupported, msg));
    }
    if req.media != "image" && req.media != "video" {
        let msg = format!(
            "{} measures images and video clips, not `{}`",
            lib.name(),
            req.media
        );
        return Err(failure(FailureKind::Unsupported, msg));
    }
    if req.device != "cpu" {
        let msg = format!("{} runs on cpu only, not `{}`", lib.name(), req.device);
        return Err(failure(FailureKind::Unsupported, msg));
    }
    if req.targets.is_some() {
        let msg = format!(
            "{} has no API that moves masks, boxes or keypoints with the image",
            lib.name()
        );
        return Err(failure(FailureKind::Unsupported, msg));
    }
    let ok = matches!((lib, req.channels), (_, 3) | (Library::KorniaRs, 9));
    if !ok {
        return unreachable_channels(lib, req.channels);
    }
    Ok(())
}

fn unreachable_channels<T>(lib: Library, channels: u64) -> Result<T, Failure> {
    let why = match lib {
        Library::KorniaRs => "kornia-rs is served here with 3 or 9 channels",
        _ => "its image type holds at most 4 channels (RGB here)",
    };
    Err(failure(
        FailureKind::Unsupported,
        format!(
            "{} cannot load {channels}-channel images: {why}",
            lib.name()
        ),
    ))
}

/// Every file was skipped: a `bad_input` failure naming the first file (every file and its
/// reason in `detail`, one a line).
fn nothing_loaded(req: &LoadRequest, decoded: &Decoded) -> Failure {
    let detail: Vec<String> = decoded
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.path, s.reason))
        .collect();
    let first = detail.first().map_or("none given", String::as_str);
    Failure {
        error: format!(
            "none of the {} files could be decoded (first: {first})",
            req.paths.len()
        ),
        kind: FailureKind::BadInput,
        detail: detail.join("\n"),
    }
}

fn into_session<A: Adapter>(
    decoded: Vec<Rgb8>,
    stack_k: usize,
    test_faults: bool,
) -> Result<(Box<dyn Session>, Vec<u64>), Failure> {
    let items = decoded
        .into_iter()
        .map(|d| {
            let data = if stack_k == 1 {
                d.data
            } else {
                stack(&d.data, stack_k)
            };
            A::convert(d.width, d.height, data)
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| failure(FailureKind::Exception, format!("{}: {e}", A::LIBRARY)))?;
    let session = Loaded::<A>::new(items, test_faults);
    let shape = session.first_shape();
    Ok((Box::new(session), shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jpeg_completeness_needs_an_end_marker_after_the_last_scan() {
        assert!(jpeg_is_complete(&[
            0xFF, 0xD8, 0xFF, 0xDA, 1, 2, 0xFF, 0xD9
        ]));
        assert!(!jpeg_is_complete(&[
            0xFF, 0xD8, 0xFF, 0xD9, 0xFF, 0xDA, 1, 2
        ]));
        assert!(!jpeg_is_complete(&[0xFF, 0xD8, 1, 2]));
    }

    #[test]
    fn stacking_repeats_each_pixel() {
        assert_eq!(
            stack(&[1, 2, 3, 4, 5, 6], 2),
            vec![1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]
        );
        assert_eq!(stack(&[1, 2, 3], 1), vec![1, 2, 3]);
    }
}
