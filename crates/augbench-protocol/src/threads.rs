//! Thread settings handed to workers: micro runs pin every library to one thread; pipeline runs
//! keep production threading. The settings used are recorded in each result file.

use augbench_core::config::ThreadPolicy;

/// The thread-count variables a `single` worker starts with set to 1: the one list (the Python
/// worker re-asserts the same names in `python/augbench_worker/threads.py`, checked by a test
/// below). The union of every list the project had, each name read by a runtime a worker may load:
/// OpenMP, OpenBLAS, MKL and NumExpr when their pools start, Apple's Accelerate (`VECLIB`), Rayon
/// (the native worker and Rust-backed Python packages), and `OPENCV_NUM_THREADS`, which the studies
/// ran with; OpenCV sizes its own pool from `OPENCV_FOR_THREADS_NUM`, and each adapter that
/// imports OpenCV runs it sequentially with `cv2.setNumThreads(0)`, so that name stays for what
/// the recorded figures were measured under.
pub const THREAD_ENV_VARS: &[&str] = &[
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "RAYON_NUM_THREADS",
    "OPENCV_NUM_THREADS",
];

/// The environment a worker starts with under `policy`.
pub fn worker_env(policy: ThreadPolicy) -> Vec<(String, String)> {
    let name = serde_json::to_value(policy)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut env = vec![("AUGBENCH_THREAD_POLICY".to_string(), name)];
    if policy == ThreadPolicy::Single {
        env.extend(
            THREAD_ENV_VARS
                .iter()
                .map(|k| (k.to_string(), "1".to_string())),
        );
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_pins_everything_and_pipeline_pins_nothing() {
        let single = worker_env(ThreadPolicy::Single);
        assert!(single.contains(&("OMP_NUM_THREADS".into(), "1".into())));
        assert!(single.contains(&("AUGBENCH_THREAD_POLICY".into(), "single".into())));
        let pipe = worker_env(ThreadPolicy::PipelineDefault);
        assert_eq!(
            pipe,
            vec![("AUGBENCH_THREAD_POLICY".into(), "pipeline-default".into())]
        );
    }

    /// The names the Python worker sets (its `THREAD_ENV_VARS` tuple), in order.
    fn python_list() -> Vec<String> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../python/augbench_worker/threads.py"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let (_, after) = text.split_once("\nTHREAD_ENV_VARS = (").unwrap();
        let (body, _) = after.split_once(')').unwrap();
        body.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_python_worker_sets_the_same_variables() {
        assert_eq!(
            python_list(),
            THREAD_ENV_VARS,
            "python/augbench_worker/threads.py THREAD_ENV_VARS differs from this list"
        );
    }
}
