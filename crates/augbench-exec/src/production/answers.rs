//! Python workers' answers to `production_builds`, kept in the cache
//! (`<cache>/coverage/<key>.json`) so `list recipes` and `production --plan` ask a library once:
//! asking starts its worker, which imports the library (seconds; torch's most). The key hashes
//! the worker's command line, whose program is the environment's Python (its folder named by
//! the group, Python version and lock) and whose `PYTHONPATH` is the embedded worker source's
//! folder (named by its content), and the request (recipes and their stages): a changed lock,
//! adapter or recipe asks again. A cache that cannot be read or written only means asking.

use augbench_host::child::CommandLine;
use augbench_protocol::protocol::{ProductionBuildsRequest, ProductionBuildsResponse};
use sha2::{Digest, Sha256};

/// The cache file of `command` asked `request`.
pub(super) fn key(command: &CommandLine, request: &ProductionBuildsRequest) -> String {
    let mut h = Sha256::new();
    h.update(command.program.to_string_lossy().as_bytes());
    for part in command
        .args
        .iter()
        .chain(command.env.iter().flat_map(|(name, value)| [name, value]))
    {
        h.update([0]);
        h.update(part.as_bytes());
    }
    h.update([0]);
    h.update(serde_json::to_vec(request).unwrap_or_default());
    format!("{:x}", h.finalize())[..24].to_string()
}

fn path(key: &str) -> std::path::PathBuf {
    augbench_host::cache::coverage_dir().join(format!("{key}.json"))
}

/// The kept answer for `key`, if one was kept and still reads.
pub(super) fn read(key: &str) -> Option<ProductionBuildsResponse> {
    let bytes = std::fs::read(path(key)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Keeps `answer` for `key` (atomically; a failure to write is left unsaid: the next run asks).
pub(super) fn keep(key: &str, answer: &ProductionBuildsResponse) {
    if let Ok(bytes) = serde_json::to_vec_pretty(answer) {
        let _ = augbench_host::fsutil::write_atomic(&path(key), &bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use augbench_protocol::protocol::RecipeStages;

    fn command(pythonpath: &str) -> CommandLine {
        CommandLine {
            program: "/envs/pillow-0123/bin/python".into(),
            args: vec!["-m".into(), "augbench_worker".into()],
            env: vec![("PYTHONPATH".into(), pythonpath.into())],
            label: "pillow worker".into(),
        }
    }

    fn request(recipe: &str) -> ProductionBuildsRequest {
        ProductionBuildsRequest {
            device: "cpu".into(),
            recipes: vec![RecipeStages {
                recipe: recipe.into(),
                stages: Vec::new(),
                stages_in_workers: 0,
            }],
        }
    }

    #[test]
    fn the_key_changes_with_the_worker_source_and_the_request_and_nothing_else() {
        let base = key(&command("/worker-src/aaaa"), &request("Resize"));
        assert_eq!(base, key(&command("/worker-src/aaaa"), &request("Resize")));
        let mut relabelled = command("/worker-src/aaaa");
        relabelled.label = "another label".into();
        assert_eq!(base, key(&relabelled, &request("Resize")));
        assert_ne!(base, key(&command("/worker-src/bbbb"), &request("Resize")));
        assert_ne!(base, key(&command("/worker-src/aaaa"), &request("Rotate")));
        let mut other_env = command("/worker-src/aaaa");
        other_env.program = "/envs/pillow-4567/bin/python".into();
        assert_ne!(base, key(&other_env, &request("Resize")));
    }
}
