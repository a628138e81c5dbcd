//! A minimal Motion-JPEG AVI (RIFF) writer: one video stream of already-encoded JPEG frames,
//! with the `avih`/`strh`/`strf` headers and an `idx1` index, as UCF101's files have. Enough for
//! OpenCV, PyAV and decord to read; no audio, no OpenDML (files stay far below 1 GiB).

use std::path::Path;

use anyhow::Context;

/// The AVI of `frames` (each a complete JPEG) at `fps` frames per second, `width`×`height`.
pub fn avi_bytes(width: u32, height: u32, fps: u32, frames: &[Vec<u8>]) -> anyhow::Result<Vec<u8>> {
    let largest = frames.iter().map(Vec::len).max().unwrap_or(0);
    let largest = u32::try_from(largest).context("a JPEG frame larger than 4 GiB")?;
    let count = u32::try_from(frames.len()).context("too many frames for an AVI")?;
    let head = Header {
        width,
        height,
        fps: fps.max(1),
        frames: count,
        largest,
    };
    let movi = movi_list(frames);
    let mut body = Vec::with_capacity(movi.len() + 512);
    body.extend_from_slice(b"AVI ");
    body.extend(list(
        b"hdrl",
        &[chunk(b"avih", &head.avih()), strl(&head)].concat(),
    ));
    body.extend(list(b"movi", &movi));
    body.extend(chunk(b"idx1", &index(frames)));
    u32::try_from(body.len()).context("the AVI would exceed 4 GiB")?;
    Ok(chunk(b"RIFF", &body))
}

/// Writes [`avi_bytes`] to `path`.
pub fn write_avi(
    path: &Path,
    width: u32,
    height: u32,
    fps: u32,
    frames: &[Vec<u8>],
) -> anyhow::Result<()> {
    let bytes = avi_bytes(width, height, fps, frames)?;
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

struct Header {
    width: u32,
    height: u32,
    fps: u32,
    frames: u32,
    largest: u32,
}

impl Header {
    /// MainAVIHeader (56 bytes).
    fn avih(&self) -> Vec<u8> {
        const AVIF_HASINDEX: u32 = 0x10;
        let buffer = self.largest.saturating_add(8);
        words(&[
            1_000_000 / self.fps,
            buffer.saturating_mul(self.fps),
            0,
            AVIF_HASINDEX,
            self.frames,
            0,
            1,
            buffer,
            self.width,
            self.height,
            0,
            0,
            0,
            0,
        ])
    }

    /// AVIStreamHeader (56 bytes) of the one video stream.
    fn strh(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(56);
        out.extend_from_slice(b"vids");
        out.extend_from_slice(b"MJPG");
        // flags, priority + language, initial frames, scale, rate, start, length
        out.extend(words(&[0, 0, 0, 1, self.fps, 0, self.frames]));
        // suggested buffer size, quality (-1: default), sample size (0: varies)
        out.extend(words(&[self.largest.saturating_add(8), u32::MAX, 0]));
        // rcFrame: left, top, right, bottom
        let frame = [0u16, 0, self.width as u16, self.height as u16];
        out.extend(frame.iter().flat_map(|v| v.to_le_bytes()));
        out
    }

    /// BITMAPINFOHEADER (40 bytes): 24-bit MJPG frames.
    fn strf(&self) -> Vec<u8> {
        let mut out = words(&[40, self.width, self.height]);
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&24u16.to_le_bytes());
        out.extend_from_slice(b"MJPG");
        out.extend(words(&[self.width * self.height * 3, 0, 0, 0, 0]));
        out
    }
}

fn strl(head: &Header) -> Vec<u8> {
    list(
        b"strl",
        &[chunk(b"strh", &head.strh()), chunk(b"strf", &head.strf())].concat(),
    )
}

/// The `movi` list's payload: one `00dc` chunk per frame.
fn movi_list(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(frames.iter().map(|f| f.len() + 9).sum());
    for f in frames {
        out.extend(chunk(b"00dc", f));
    }
    out
}

/// `idx1` entries: offsets count from the `movi` fourcc, as the AVI spec's readers expect.
fn index(frames: &[Vec<u8>]) -> Vec<u8> {
    const AVIIF_KEYFRAME: u32 = 0x10;
    let mut out = Vec::with_capacity(frames.len() * 16);
    let mut offset = 4u32;
    for f in frames {
        let len = f.len() as u32;
        out.extend_from_slice(b"00dc");
        out.extend(words(&[AVIIF_KEYFRAME, offset, len]));
        offset += 8 + len + (len & 1);
    }
    out
}

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A RIFF chunk: fourcc, little-endian size, data, a pad byte to an even length.
fn chunk(id: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 9);
    out.extend_from_slice(id);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    if data.len() % 2 == 1 {
        out.push(0);
    }
    out
}

fn list(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    chunk(b"LIST", &[kind.as_slice(), data].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (id, list kind or "", payload range) of each chunk in `bytes[range]`.
    fn chunks(bytes: &[u8], mut at: usize, end: usize) -> Vec<(String, String, usize, usize)> {
        let mut out = Vec::new();
        while at + 8 <= end {
            let id = String::from_utf8_lossy(&bytes[at..at + 4]).to_string();
            let size = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
            let data = at + 8;
            let kind = if id == "LIST" || id == "RIFF" {
                String::from_utf8_lossy(&bytes[data..data + 4]).to_string()
            } else {
                String::new()
            };
            assert!(data + size <= end, "{id} overruns its parent");
            out.push((id, kind, data, data + size));
            at = data + size + (size & 1);
        }
        assert_eq!(at, end, "chunks tile their parent exactly");
        out
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    fn fake_jpegs() -> Vec<Vec<u8>> {
        // Odd and even lengths, so the pad byte is exercised.
        vec![
            vec![0xFF, 0xD8, 1, 0xFF, 0xD9],
            vec![0xFF, 0xD8, 1, 2, 0xFF, 0xD9],
            vec![0xFF, 0xD8, 9, 9, 9, 0xFF, 0xD9],
        ]
    }

    #[test]
    fn riff_structure_headers_and_index() {
        let frames = fake_jpegs();
        let b = avi_bytes(320, 240, 25, &frames).unwrap();
        let top = chunks(&b, 0, b.len());
        assert_eq!(top.len(), 1);
        assert_eq!(
            (top[0].0.as_str(), u32_at(&b, 4) as usize),
            ("RIFF", b.len() - 8)
        );
        assert_eq!(&b[8..12], b"AVI ");
        let inner = chunks(&b, 12, b.len());
        let ids: Vec<(&str, &str)> = inner.iter().map(|c| (c.0.as_str(), c.1.as_str())).collect();
        assert_eq!(ids, vec![("LIST", "hdrl"), ("LIST", "movi"), ("idx1", "")]);

        let hdrl = chunks(&b, inner[0].2 + 4, inner[0].3);
        assert_eq!((hdrl[0].0.as_str(), hdrl[0].3 - hdrl[0].2), ("avih", 56));
        let avih = hdrl[0].2;
        assert_eq!(u32_at(&b, avih), 40_000, "µs per frame at 25 fps");
        assert_eq!(u32_at(&b, avih + 16), 3, "total frames");
        assert_eq!((u32_at(&b, avih + 32), u32_at(&b, avih + 36)), (320, 240));
        let strl = chunks(&b, hdrl[1].2 + 4, hdrl[1].3);
        let (strh, strf) = (&strl[0], &strl[1]);
        assert_eq!((strh.0.as_str(), strh.3 - strh.2), ("strh", 56));
        assert_eq!(&b[strh.2..strh.2 + 8], b"vidsMJPG");
        assert_eq!(
            (u32_at(&b, strh.2 + 20), u32_at(&b, strh.2 + 24)),
            (1, 25),
            "scale, rate"
        );
        assert_eq!(u32_at(&b, strh.2 + 32), 3, "stream length");
        assert_eq!((strf.0.as_str(), strf.3 - strf.2), ("strf", 40));
        assert_eq!(&b[strf.2 + 16..strf.2 + 20], b"MJPG");

        let movi_fourcc = inner[1].2;
        let movi = chunks(&b, movi_fourcc + 4, inner[1].3);
        assert_eq!(movi.len(), 3);
        let idx = inner[2].2;
        assert_eq!(inner[2].3 - idx, 16 * 3);
        for (i, (c, f)) in movi.iter().zip(&frames).enumerate() {
            assert_eq!(c.0, "00dc");
            assert_eq!(&b[c.2..c.3], f.as_slice());
            let e = idx + 16 * i;
            assert_eq!(&b[e..e + 4], b"00dc");
            assert_eq!(u32_at(&b, e + 4), 0x10, "keyframe");
            assert_eq!(
                movi_fourcc + u32_at(&b, e + 8) as usize,
                c.2 - 8,
                "offset from movi"
            );
            assert_eq!(u32_at(&b, e + 12) as usize, f.len());
        }
    }

    #[test]
    fn no_frames_is_still_a_well_formed_file() {
        let b = avi_bytes(16, 16, 25, &[]).unwrap();
        let inner = chunks(&b, 12, b.len());
        assert_eq!(inner.len(), 3);
        assert_eq!(inner[1].3 - inner[1].2, 4, "an empty movi list");
    }
}
