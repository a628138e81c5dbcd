//! Thread settings handed to workers: micro runs pin every library to one thread; pipeline runs
//! keep production threading. The settings used are recorded in each result file.

use augbench_core::config::ThreadPolicy;

const PINNED: &[&str] = &[
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
        env.extend(PINNED.iter().map(|k| (k.to_string(), "1".to_string())));
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
}
