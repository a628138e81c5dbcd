//! Video clips in the native worker: a clip is the frames of one folder (sorted file names are
//! the time order), held in the crate's own image type. The crates have no clip type, so a
//! transform runs frame by frame over the clip, and one clip counts as one item (THWC).

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::adapters::{Fir, ImageRs, Imageproc, Kornia, Zune};
use crate::clock::Loops;
use crate::library::Library;
use crate::load::{self, Rgb8};
use crate::params::Params;
use crate::reply::failure;
use crate::session::{Adapter, DTYPE, FORCE_SHARE, OUTPUT_CONTIGUOUS, Op, Session};
use augbench_protocol::protocol::{
    CheckResponse, Failure, FailureKind, LoadRequest, LoadResponse, Skipped, TimeRequest,
    TimeResponse,
};

pub(crate) const LAYOUT: &str = "THWC";

/// Answers `load` with `media: video`: one clip per folder; an unreadable folder is skipped.
pub(crate) fn load(
    lib: Library,
    req: &LoadRequest,
) -> Result<(Box<dyn Session>, LoadResponse), Failure> {
    let t0 = Instant::now();
    let mut frames = Vec::new();
    let mut skipped = Vec::new();
    for folder in &req.paths {
        match read_clip(Path::new(folder)) {
            Ok(clip) => frames.push(clip),
            Err(reason) => skipped.push(Skipped {
                path: folder.clone(),
                reason,
            }),
        }
    }
    if frames.is_empty() {
        let msg = format!("none of the {} clip folders could be read", req.paths.len());
        let detail = skipped
            .iter()
            .map(|s| format!("{}: {}", s.path, s.reason))
            .collect::<Vec<_>>()
            .join("\n");
        return Err(Failure {
            error: msg,
            kind: FailureKind::Exception,
            detail,
        });
    }
    let (session, shape) = match lib {
        Library::Image => into::<ImageRs>(frames)?,
        Library::Imageproc => into::<Imageproc>(frames)?,
        Library::FastImageResize => into::<Fir>(frames)?,
        Library::KorniaRs => into::<Kornia<3>>(frames)?,
        Library::ZuneImage => into::<Zune>(frames)?,
    };
    let response = LoadResponse {
        count: (req.paths.len() - skipped.len()) as u64,
        decode_seconds: t0.elapsed().as_secs_f64(),
        shape,
        dtype: DTYPE.into(),
        layout: LAYOUT.into(),
        skipped,
        converted: 0,
        targets: None,
    };
    Ok((session, response))
}

/// The decoded frames of one clip folder, in sorted file-name order.
pub(crate) fn read_clip(folder: &Path) -> Result<Vec<Rgb8>, String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .map_err(|e| format!("cannot list the clip folder: {e}"))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.path().display().to_string())
        .filter(|p| {
            !Path::new(p)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    names.sort();
    let decoded = load::decode_all(&names);
    if let Some(bad) = decoded.skipped.first() {
        return Err(format!("frame {}: {}", bad.path, bad.reason));
    }
    if decoded.items.is_empty() {
        return Err("the clip folder holds no frames".into());
    }
    Ok(decoded.items)
}

fn into<A: Adapter>(clips: Vec<Vec<Rgb8>>) -> Result<(Box<dyn Session>, Vec<u64>), Failure> {
    let clips = clips
        .into_iter()
        .map(|frames| {
            frames
                .into_iter()
                .map(|f| A::convert(f.width, f.height, f.data))
                .collect::<Result<Vec<_>, String>>()
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| failure(FailureKind::Exception, format!("{}: {e}", A::LIBRARY)))?;
    let shape = clip_shape::<A>(&clips[0]).to_vec();
    Ok((Box::new(Clips::<A> { clips, op: None }), shape))
}

/// `[T, H, W, C]` of a clip (its first frame's size).
fn clip_shape<A: Adapter>(frames: &[A::Item]) -> [u64; 4] {
    let [h, w, c] = frames.first().map(A::shape).unwrap_or_default();
    [frames.len() as u64, h, w, c]
}

struct Clips<A: Adapter> {
    clips: Vec<Vec<A::Item>>,
    op: Option<Op<A>>,
}

impl<A: Adapter> Session for Clips<A> {
    fn prepare(&mut self, transform: &str, params: &Value) -> Result<String, Failure> {
        self.op = None;
        self.op = Some(A::build(transform, &Params::new(transform, params))?);
        Ok(transform.to_string())
    }

    fn check(&mut self) -> Result<CheckResponse, Failure> {
        let op = self
            .op
            .as_mut()
            .ok_or_else(|| bad("no transform prepared: send `prepare` first"))?;
        let clip = &self.clips[0];
        let mut out = [0u64; 4];
        for frame in clip {
            let o = A::out_shape(&op(frame).map_err(exception)?);
            out = [clip.len() as u64, o[0], o[1], o[2]];
        }
        Ok(CheckResponse {
            input_shape: clip_shape::<A>(clip).to_vec(),
            output_shape: out.to_vec(),
            input_dtype: DTYPE.into(),
            output_dtype: DTYPE.into(),
            layout: LAYOUT.into(),
            output_contiguous: OUTPUT_CONTIGUOUS,
            force_share: FORCE_SHARE,
            targets_out: None,
        })
    }

    fn time(&mut self, req: TimeRequest) -> Result<TimeResponse, Failure> {
        let op = self
            .op
            .as_mut()
            .ok_or_else(|| bad("no transform prepared: send `prepare` first"))?;
        let n = self.clips.len();
        let mut loops = Loops::with_capacity(req.loops);
        for _ in 0..req.loops {
            let started = Loops::start();
            for k in 0..req.count as usize {
                for frame in &self.clips[(req.start as usize + k) % n] {
                    black_box(op(black_box(frame)).map_err(exception)?);
                }
            }
            loops.stop(started);
        }
        Ok(loops.finish())
    }
}

fn exception(e: String) -> Failure {
    failure(FailureKind::Exception, e)
}

fn bad(e: &str) -> Failure {
    failure(FailureKind::BadRequest, e.to_string())
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use serde_json::json;

    use crate::{ServeOptions, serve_with};

    /// Two clip folders of three 64×48 PNG frames; the second also holds a hidden file.
    fn clips(dir: &std::path::Path) -> Vec<String> {
        (0..2)
            .map(|c| {
                let folder = dir.join(format!("clip_{c}"));
                std::fs::create_dir(&folder).unwrap();
                for t in 0..3u8 {
                    let img = image::RgbImage::from_pixel(64, 48, image::Rgb([t * 50, c * 90, 7]));
                    img.save(folder.join(format!("frame_{t:03}.png"))).unwrap();
                }
                std::fs::write(folder.join(".DS_Store"), b"junk").unwrap();
                folder.display().to_string()
            })
            .collect()
    }

    #[test]
    fn a_clip_is_one_item_transformed_frame_by_frame() {
        let dir = tempfile::tempdir().unwrap();
        let paths = clips(dir.path());
        let requests = [
            json!({"op": "load", "media": "video", "paths": paths, "channels": 3, "clip_length": 3, "device": "cpu"}),
            json!({"op": "prepare", "transform": "Resize", "params": {"target_size": 32, "interpolation": "bilinear"}, "device": "cpu"}),
            json!({"op": "check"}),
            json!({"op": "time", "start": 1, "count": 2, "loops": 2}),
            json!({"op": "load", "media": "video", "paths": paths, "channels": 9, "clip_length": 3, "device": "cpu"}),
        ];
        let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
        let mut out = Vec::new();
        serve_with(
            "kornia-rs",
            Cursor::new(input),
            &mut out,
            ServeOptions::default(),
        )
        .unwrap();
        let replies: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies[0]["count"], 2, "{}", replies[0]);
        assert_eq!(replies[0]["shape"], json!([3, 48, 64, 3]));
        assert_eq!(replies[0]["layout"], "THWC");
        assert_eq!(
            replies[2]["output_shape"],
            json!([3, 32, 32, 3]),
            "{}",
            replies[2]
        );
        assert_eq!(replies[3]["ns"].as_array().unwrap().len(), 2);
        assert_eq!(replies[4]["kind"], "unsupported");
    }
}
