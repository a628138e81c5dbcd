//! Which items a counted row ran over, as the hash its `instructions` record keeps
//! (`InstructionRecord::items_hash`): the job's paths the worker loaded (those it skipped left
//! out), the first `row_items` of them in load order, each file's bytes (a clip folder's files in
//! name order) through `augbench_core::counts::ItemsHasher`. Two runs over other data with the
//! same number of items then hash differently and their counts are not compared.

use std::path::Path;

use anyhow::Context;
use augbench_core::counts::ItemsHasher;
use augbench_protocol::protocol::LoadResponse;

/// The counted items: the paths the worker loaded, in order, the first `items` of them.
pub fn counted<'a>(paths: &'a [String], load: &LoadResponse, items: u64) -> Vec<&'a str> {
    let skipped = |p: &str| load.skipped.iter().any(|s| s.path == p);
    paths
        .iter()
        .map(String::as_str)
        .filter(|p| !skipped(p))
        .take(items as usize)
        .collect()
}

/// The item-set hash of the counted items; `None` when the worker loaded fewer items than the
/// row counts from these paths (the set is then not known, and the record says nothing).
pub fn hash(paths: &[String], load: &LoadResponse, items: u64) -> anyhow::Result<Option<String>> {
    let counted = counted(paths, load, items);
    if (counted.len() as u64) < items {
        return Ok(None);
    }
    let mut hasher = ItemsHasher::default();
    for item in counted {
        let files = read_item(Path::new(item))
            .with_context(|| format!("hashing the counted item {item}"))?;
        hasher.item(files.iter().map(Vec::as_slice));
    }
    Ok(Some(hasher.finish()))
}

/// One item's bytes: a file's, or a clip folder's files in name order.
fn read_item(path: &Path) -> anyhow::Result<Vec<Vec<u8>>> {
    if !path.is_dir() {
        return Ok(vec![std::fs::read(path)?]);
    }
    let mut files: Vec<_> = std::fs::read_dir(path)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|f| f.is_file());
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read(f).map_err(anyhow::Error::from))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use augbench_protocol::protocol::Skipped;

    fn files(dir: &Path, items: &[(&str, &[u8])]) -> Vec<String> {
        items
            .iter()
            .map(|(name, bytes)| {
                let p = dir.join(name);
                std::fs::write(&p, bytes).unwrap();
                p.display().to_string()
            })
            .collect()
    }

    fn loaded(skipped: &[&String]) -> LoadResponse {
        LoadResponse {
            skipped: skipped
                .iter()
                .map(|p| Skipped {
                    path: (*p).clone(),
                    reason: "corrupt".into(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn other_data_of_the_same_count_hashes_differently_and_a_copy_the_same() {
        let (a, b, c) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let one = files(a.path(), &[("x.jpg", b"one"), ("y.jpg", b"two")]);
        let copy = files(b.path(), &[("p.jpg", b"one"), ("q.jpg", b"two")]);
        let other = files(c.path(), &[("x.jpg", b"one"), ("y.jpg", b"TWO")]);
        let h = |paths: &[String]| hash(paths, &loaded(&[]), 2).unwrap().unwrap();
        assert_eq!(h(&one), h(&copy), "names and folders are not the items");
        assert_ne!(h(&one), h(&other));
        assert_ne!(
            h(&one),
            hash(&one, &loaded(&[]), 1).unwrap().unwrap(),
            "only the counted items"
        );
    }

    #[test]
    fn skipped_paths_are_not_counted_and_too_few_loaded_give_no_hash() {
        let d = tempfile::tempdir().unwrap();
        let paths = files(
            d.path(),
            &[("a.jpg", b"a"), ("bad.jpg", b"?"), ("b.jpg", b"b")],
        );
        let load = loaded(&[&paths[1]]);
        assert_eq!(
            counted(&paths, &load, 2),
            vec![paths[0].as_str(), paths[2].as_str()]
        );
        assert_eq!(hash(&paths, &load, 3).unwrap(), None);
    }

    #[test]
    fn a_clip_folder_is_its_frames_in_name_order() {
        let d = tempfile::tempdir().unwrap();
        let clip = d.path().join("clip_000000");
        std::fs::create_dir(&clip).unwrap();
        files(&clip, &[("frame_001.png", b"b"), ("frame_000.png", b"a")]);
        let paths = vec![clip.display().to_string()];
        let got = hash(&paths, &loaded(&[]), 1).unwrap().unwrap();
        let mut want = ItemsHasher::default();
        want.item([b"a".as_slice(), b"b".as_slice()]);
        assert_eq!(got, want.finish());
    }
}
