//! What ships inside the binary: the `envs/` folder, whose requirement inputs (`envs/<group>.in`)
//! and pinned locks (`envs/<group>.txt`) are the environment groups, and the Python packages (the
//! worker, and the clip-cache video decoder), extracted on demand into the cache.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::Context;
use include_dir::{Dir, File, include_dir};
use sha2::{Digest, Sha256};

static WORKER_PACKAGE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../python/augbench_worker");
static CLIPS_PACKAGE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../python/augbench_clips");
static ENVS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../envs");

pub struct GroupAssets {
    pub name: &'static str,
    pub input: &'static str,
    pub lock: &'static str,
}

/// Environment groups with Python requirements (the native group needs none): every
/// `envs/<group>.in` that has its lock `envs/<group>.txt` beside it, by name. A new input without
/// a lock is no group until `augbench env lock <group>` writes one.
pub fn groups() -> &'static [GroupAssets] {
    static GROUPS: OnceLock<Vec<GroupAssets>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let mut groups: Vec<GroupAssets> = ENVS.files().filter_map(group_of).collect();
        groups.sort_by_key(|g| g.name);
        groups
    })
}

/// The group whose input `file` is (`<group>.in`), with its lock; `None` for any other file.
fn group_of(file: &'static File<'static>) -> Option<GroupAssets> {
    let path = file.path();
    if path.extension()? != "in" {
        return None;
    }
    let name = path.file_stem()?.to_str()?;
    let lock = ENVS.get_file(format!("{name}.txt"))?;
    Some(GroupAssets {
        name,
        input: file.contents_utf8()?,
        lock: lock.contents_utf8()?,
    })
}

/// The group whose OpenCV decodes video files into the clip cache (no library runs in it).
pub const VIDEO_DECODE_GROUP: &str = "video_decode";

pub fn group_assets(name: &str) -> Option<&'static GroupAssets> {
    groups().iter().find(|g| g.name == name)
}

/// The version `package` is pinned to in the committed lock of `group` (`package==version`).
pub fn pinned_version(group: &str, package: &str) -> Option<&'static str> {
    let lock = group_assets(group)?.lock;
    lock.lines().find_map(|line| {
        let (name, version) = line.trim().split_once("==")?;
        name.eq_ignore_ascii_case(package)
            .then(|| version.split([' ', ';']).next().unwrap_or(version))
    })
}

/// The transforms the embedded Python adapter of `library` registers with `@builds("<name>")`,
/// read from its source without Python (the module comes from `LIBRARIES` in
/// `adapters/__init__.py`). `None` when the adapter registers none of its own (it reuses another
/// adapter's table) or cannot be found: its support is then unknown before a worker answers.
/// The planner's estimate uses it; a run learns support from the worker's replies.
pub fn adapter_builders(library: &str) -> Option<std::collections::BTreeSet<String>> {
    let table = WORKER_PACKAGE
        .get_file("adapters/__init__.py")?
        .contents_utf8()?;
    let module = table.lines().find_map(|line| {
        let rest = line.trim().strip_prefix(&format!("\"{library}\": (\""))?;
        rest.split('"').next()
    })?;
    let source = WORKER_PACKAGE
        .get_file(format!("adapters/{module}.py"))?
        .contents_utf8()?;
    let names: std::collections::BTreeSet<String> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("@builds(\"")?.split('"').next())
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// Extracts the embedded worker package once per content hash; returns the folder to put on
/// `PYTHONPATH` (it contains `augbench_worker/`).
pub fn worker_source_dir() -> anyhow::Result<PathBuf> {
    package_source_dir("augbench_worker", &WORKER_PACKAGE)
}

/// Extracts the embedded clip decoder package (`augbench_clips/`) the same way.
pub fn clips_source_dir() -> anyhow::Result<PathBuf> {
    package_source_dir("augbench_clips", &CLIPS_PACKAGE)
}

/// Extracts `package` once per content hash into `<cache>/worker-src/<hash>/<package>/`.
fn package_source_dir(package: &str, dir: &'static Dir<'static>) -> anyhow::Result<PathBuf> {
    let mut files = Vec::new();
    collect(dir, &mut files);
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut h = Sha256::new();
    h.update(package.as_bytes());
    for (path, bytes) in &files {
        h.update(path.to_string_lossy().as_bytes());
        h.update(bytes);
    }
    let key = format!("{:x}", h.finalize());
    let root = augbench_host::cache::cache_root()
        .join("worker-src")
        .join(&key[..16]);
    if root.join(".complete").exists() {
        return Ok(root);
    }
    let extract = |tmp: &Path| write_files(tmp, package, &files);
    augbench_host::fsutil::build_dir(&root, extract, |r| r.join(".complete").exists())?;
    Ok(root)
}

/// Writes `files` below `<tmp>/<package>/` and marks `tmp` complete.
fn write_files(tmp: &Path, package: &str, files: &[(PathBuf, &[u8])]) -> anyhow::Result<()> {
    for (path, bytes) in files {
        let dest = tmp.join(package).join(path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&dest, bytes).with_context(|| format!("writing {}", dest.display()))?;
    }
    std::fs::write(tmp.join(".complete"), b"")
        .with_context(|| format!("marking {package} source complete"))
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(PathBuf, &'static [u8])>) {
    for f in dir.files() {
        let p = f.path();
        let skip = p.components().any(|c| c.as_os_str() == "__pycache__");
        if !skip && p.extension().is_some_and(|e| e == "py") {
            out.push((p.to_path_buf(), f.contents()));
        }
    }
    for d in dir.dirs() {
        collect(d, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_adapters_name_what_they_build() {
        let pillow = adapter_builders("pillow").expect("pillow registers its builders");
        assert!(pillow.contains("HorizontalFlip"), "{pillow:?}");
        assert!(
            !pillow.contains("RandomCrop224"),
            "Pillow has no random crop"
        );
        assert!(adapter_builders("albumentationsx").is_some_and(|b| b.len() > 40));
        assert_eq!(adapter_builders("no-such-library"), None);
    }

    #[test]
    fn every_input_has_its_lock_and_is_a_group() {
        let mut inputs: Vec<&str> = ENVS
            .files()
            .filter(|f| f.path().extension().is_some_and(|e| e == "in"))
            .filter_map(|f| f.path().file_stem()?.to_str())
            .collect();
        inputs.sort_unstable();
        let names: Vec<&str> = groups().iter().map(|g| g.name).collect();
        assert_eq!(
            names, inputs,
            "an envs/<group>.in lacks its lock envs/<group>.txt"
        );
        assert!(names.contains(&"torch_stack"), "{names:?}");
    }

    #[test]
    fn every_decoder_of_the_matrix_has_its_group() {
        for d in &augbench_core::Matrix::get().decoders {
            assert!(
                group_assets(&d.env_group).is_some(),
                "{} lacks envs/{}.in",
                d.name,
                d.env_group
            );
        }
    }

    #[test]
    fn every_python_library_has_a_pinned_version() {
        let m = augbench_core::Matrix::get();
        for lib in &m.libraries {
            if lib.backend != augbench_core::Backend::NativeWorker {
                assert!(
                    pinned_version(&lib.env_group, &lib.package).is_some(),
                    "{} is not pinned in envs/{}.txt",
                    lib.name,
                    lib.env_group
                );
            }
        }
        assert_eq!(
            pinned_version("albumentations", "albumentations"),
            Some("2.0.8")
        );
        assert_eq!(pinned_version("dali", "nvidia-dali-cuda120"), Some("2.4.0"));
    }

    #[test]
    fn worker_package_is_embedded() {
        let mut files = Vec::new();
        collect(&WORKER_PACKAGE, &mut files);
        assert!(files.iter().any(|(p, _)| p.ends_with("__main__.py")));
        let mut files = Vec::new();
        collect(&CLIPS_PACKAGE, &mut files);
        assert!(files.iter().any(|(p, _)| p.ends_with("decode.py")));
        assert!(files.iter().any(|(p, _)| p.ends_with("bench.py")));
        assert!(group_assets(VIDEO_DECODE_GROUP).is_some());
    }
}
