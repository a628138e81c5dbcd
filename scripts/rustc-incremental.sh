#!/usr/bin/env bash
# Cargo's workspace wrapper for the test build (scripts/test.sh sets RUSTC_WORKSPACE_WRAPPER to
# it): compiles each workspace crate incrementally into $AUGBENCH_INCREMENTAL_DIR, a folder kept
# per checkout folder, so a fresh clone in a folder that built before recompiles only what its
# commit changed (docs/ci.md, "The build cache"). Dependencies never pass through it.
# Cargo's own probes (`--crate-name ___`), a build that is incremental already and a run without
# the folder set go to rustc unchanged.
set -euo pipefail
rustc="$1"
shift
case " $* " in
  *" ___ "* | *"incremental="*) exec "$rustc" "$@" ;;
esac
[ -n "${AUGBENCH_INCREMENTAL_DIR:-}" ] || exec "$rustc" "$@"
exec "$rustc" "$@" -C "incremental=$AUGBENCH_INCREMENTAL_DIR"
