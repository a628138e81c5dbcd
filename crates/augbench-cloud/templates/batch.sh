# Cloud Batch: a fresh VM per task, files in GCS through gcloud.
TASK="${BATCH_TASK_INDEX:?BATCH_TASK_INDEX is set by Batch}"
ROOT="${AUGBENCH_TASK_ROOT:-/mnt/disks/augbench}"
DATA="${AUGBENCH_DATA_DIR:-{{REMOTE_DATA_DIR}}}"
export AUGBENCH_CACHE="${AUGBENCH_CACHE:-$ROOT/cache}"
store_get() { gcloud storage cp "$1" "$2"; }
store_put() { gcloud storage cp "$1" "$2"; }
store_put_dir() { gcloud storage rsync --recursive "$1" "$2"; }