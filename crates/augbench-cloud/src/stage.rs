//! Dataset staging (`augbench stage`): a deterministic tarball of a data folder's media files —
//! sorted paths, fixed mtime, owner and mode, no hidden files or macOS junk (`._*`, `.DS_Store`) —
//! so the same folder always gives the same bytes and the upload is named by its SHA-256.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_media::{IMAGE_EXTENSIONS, VIDEO_EXTENSIONS};
use sha2::{Digest, Sha256};

/// Modification time stamped on every entry (2000-01-01T00:00:00Z): the archive never depends on
/// when the files were copied.
const FIXED_MTIME: u64 = 946_684_800;
/// Mode of every entry (read-only data).
const FILE_MODE: u32 = 0o644;

/// A written tarball and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staged {
    pub path: PathBuf,
    pub sha256: String,
    pub files: usize,
    pub bytes: u64,
}

/// Whether a file name is a media file the runner reads (by extension, any case).
fn is_media(name: &str) -> bool {
    let Some((_, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let ext = ext.to_ascii_lowercase();
    IMAGE_EXTENSIONS.contains(&ext.as_str()) || VIDEO_EXTENSIONS.contains(&ext.as_str())
}

/// Hidden files and folders (`.DS_Store`, AppleDouble `._x.jpg`, `.git`) are never staged.
fn is_hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// The media files under `dir` as (archive path with `/` separators, file path), sorted by
/// archive path. Symbolic links are followed as the runner does when it scans a data folder.
pub fn media_files(dir: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().to_string();
        if is_hidden(&name) {
            continue;
        }
        let path = entry.path();
        let rel = format!("{prefix}{name}");
        if path.is_dir() {
            walk(&path, &format!("{rel}/"), out)?;
        } else if path.is_file() && is_media(&name) {
            out.push((rel, path));
        }
    }
    Ok(())
}

/// Writes the tarball of `dir`'s media files to `out` (atomically) and returns its SHA-256.
pub fn stage(dir: &Path, out: &Path) -> anyhow::Result<Staged> {
    let files = media_files(dir)?;
    if files.is_empty() {
        return Err(augbench_core::UsageError::new(
            format!("{} holds no media files", dir.display()),
            format!(
                "staging packs images ({}) and videos ({}), found recursively",
                IMAGE_EXTENSIONS.join(", "),
                VIDEO_EXTENSIONS.join(", ")
            ),
        )
        .into());
    }
    let bytes = augbench_host::fsutil::write_streamed_with(out, |w| write_tar(&files, w))?;
    Ok(Staged {
        path: out.to_path_buf(),
        sha256: sha256_file(out)?,
        files: files.len(),
        bytes,
    })
}

/// Streams the tarball of `files` into `out`; returns the bytes of file content it holds.
fn write_tar(files: &[(String, PathBuf)], out: &mut impl Write) -> anyhow::Result<u64> {
    let mut tar = tar::Builder::new(out);
    let mut total = 0;
    for (name, src) in files {
        let f = File::open(src).with_context(|| format!("reading {}", src.display()))?;
        let size = f.metadata()?.len();
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(size);
        header.set_mode(FILE_MODE);
        header.set_mtime(FIXED_MTIME);
        header.set_uid(0);
        header.set_gid(0);
        tar.append_data(&mut header, name, f.take(size))
            .with_context(|| format!("adding {} to the tarball", src.display()))?;
        total += size;
    }
    tar.into_inner()
        .context("finishing the tarball")?
        .flush()
        .context("writing the tarball")?;
    Ok(total)
}

/// Hex SHA-256 of a file's bytes.
pub fn sha256_file(path: &Path) -> anyhow::Result<String> {
    let mut f = File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!("{:x}", h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_and_junk_names() {
        assert!(is_media("a.JPG") && is_media("clip.mp4") && is_media("x.y.png"));
        assert!(!is_media("notes.txt") && !is_media("jpg"));
        assert!(is_hidden("._a.jpg") && is_hidden(".DS_Store") && !is_hidden("a.jpg"));
    }
}
