# Slurm: one array task per shard on a node of its own (--exclusive), files on the shared folder.
TASK="${SLURM_ARRAY_TASK_ID:?SLURM_ARRAY_TASK_ID is set by sbatch --array}"
ROOT="${AUGBENCH_TASK_ROOT:-${TMPDIR:-/tmp}/augbench-{{RUN_NAME}}-$TASK}"
DATA="${AUGBENCH_DATA_DIR:-$ROOT/data}"
{{NODE_CACHE}}
store_get() { cp "$1" "$2"; }
store_put() { mkdir -p "$(dirname "$2")" && cp "$1" "$2.part" && mv -f "$2.part" "$2"; }
store_put_dir() { mkdir -p "$2" && cp -R "$1/." "$2/"; }