#!/usr/bin/env python3
"""The noise study (docs/methodology.md, "Where the noise lives"): why one row's worker processes
settle at different speeds, and what removes it.

Times one transform in many fresh worker processes per condition, the conditions alternating
process by process (A, B, C, …, A, B, C, …) so the host's drift falls on all of them alike. Each
process: hello, load, prepare, check, a warm pass, then ROUNDS timed requests; its level is the
median per-item time over its rounds, on the wall clock and on the thread's CPU clock (the
`cpu_ns` of the protocol's `time` reply). Per condition it prints the spread of the levels
(max/min, cv), the within-process round-to-round cv, and the share of the variance that sits
between processes (the part that neither pairing rounds nor averaging them can remove).

Conditions: normal; aslr-off (`setarch -R`); cpu0 / cpu1 (`taskset -c N`); fresh-buffers (the
worker copies its items into new allocations before every request, AUGBENCH_FRESH_BUFFERS=1);
no-thp (transparent huge pages off for the process, `prctl(PR_SET_THP_DISABLE)` before exec);
forked (Python libraries: one warm parent per study, started once in the library's environment,
imports the worker and the library's adapter, then forks each process of this condition, which
serves the protocol over a pair of FIFOs: so it shares the parent's heap layout and imports
instead of starting an interpreter of its own).

    python3 studies/noise_study.py --augbench target/release/augbench --library pillow \
        --transform GaussianBlur --processes 20 --out study.json

Standard library only. The Python worker runs in the library's cached environment
(`augbench env python <library>`); a Rust crate runs as `augbench worker --library <crate>`.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NATIVE = {"image", "imageproc", "fast_image_resize", "kornia-rs", "zune-image"}
sys.path.insert(0, str(ROOT / "python"))
from augbench_worker.threads import THREAD_ENV_VARS  # noqa: E402  (standard library only)

# The coordinator's thread variables (the one list, checked against augbench-protocol's).
SINGLE_THREAD_ENV = {k: "1" for k in THREAD_ENV_VARS}
PR_SET_THP_DISABLE = 41


def params_of(transform: str) -> dict:
    text = (ROOT / "specs" / "transforms.yaml").read_text()
    m = re.search(rf"- name: {re.escape(transform)}\n\s+params: (\{{.*\}})", text)
    if not m:
        sys.exit(f"error: {transform} is not in specs/transforms.yaml")
    return json.loads(m.group(1))


def no_thp() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_THP_DISABLE)")


# The warm parent of the `forked` condition, run with the library environment's Python: it
# imports the worker and the adapter, then for each line `<in fifo> <out fifo>` on stdin forks a
# child that serves the protocol on those FIFOs, and answers the child's pid.
FORK_SERVER = r"""
import os, runpy, sys
library = sys.argv[1]
from augbench_worker import protocol, threads, worker  # noqa: F401 - warm imports
from augbench_worker.adapters import create
create(library)
for line in sys.stdin:
    fifo_in, fifo_out = line.split()
    while True:  # reap finished children
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(fifo_in, os.O_RDONLY), 0)
        os.dup2(os.open(fifo_out, os.O_WRONLY), 1)
        sys.stdin, sys.stdout = open(0), open(1, "w")
        sys.argv = ["augbench_worker", "--library", library]
        try:
            runpy.run_module("augbench_worker", run_name="__main__")
        finally:
            os._exit(0)
    print(pid, flush=True)
"""

CONDITIONS = {
    "normal": ([], {}, None),
    "aslr-off": (["setarch", "-R"], {}, None),
    "cpu0": (["taskset", "-c", "0"], {}, None),
    "cpu1": (["taskset", "-c", "1"], {}, None),
    "fresh-buffers": ([], {"AUGBENCH_FRESH_BUFFERS": "1"}, None),
    "no-thp": ([], {}, no_thp),
    "forked": ([], {}, None),
}


class Worker:
    def __init__(self, argv: list[str], env: dict, preexec) -> None:
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, preexec_fn=preexec, text=True,
        )

        self.stdin, self.stdout = self.p.stdin, self.p.stdout

    def call(self, request: dict) -> dict:
        assert self.stdin and self.stdout
        self.stdin.write(json.dumps(request) + "\n")
        self.stdin.flush()
        reply = json.loads(self.stdout.readline())
        if not reply.get("ok"):
            raise RuntimeError(f"{request['op']}: {reply.get('error')}")
        return reply

    def shutdown(self) -> None:
        try:
            self.call({"op": "shutdown"})
        except Exception:  # noqa: BLE001 - the process is ending anyway
            pass

    def close(self) -> None:
        self.shutdown()
        self.p.wait(timeout=30)


class ForkServer:
    """The `forked` condition's warm parent; `spawn` gives a forked child as a `Worker`."""

    def __init__(self, argv: list[str], env: dict, library: str, folder: Path) -> None:
        python = argv[0]
        self.p = subprocess.Popen([python, "-c", FORK_SERVER, library], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=env, text=True)
        self.folder, self.count = folder, 0

    def spawn(self) -> "Forked":
        assert self.p.stdin and self.p.stdout
        self.count += 1
        fifo_in, fifo_out = (self.folder / f"{self.count}.{d}" for d in ("in", "out"))
        for f in (fifo_in, fifo_out):
            os.mkfifo(f)
        self.p.stdin.write(f"{fifo_in} {fifo_out}\n")
        self.p.stdin.flush()
        return Forked(fifo_in, fifo_out, int(self.p.stdout.readline()))

    def close(self) -> None:
        if self.p.stdin:
            self.p.stdin.close()
        self.p.wait(timeout=30)


class Forked(Worker):
    """A child of the fork server, served over two FIFOs (opened in the child's order)."""

    def __init__(self, fifo_in: Path, fifo_out: Path, pid: int) -> None:  # noqa: D107
        self.stdin = open(fifo_in, "w")
        self.stdout = open(fifo_out)
        self.pid = pid

    def close(self) -> None:
        self.shutdown()
        self.stdin.close()
        self.stdout.close()


def worker_argv(args) -> tuple[list[str], dict]:
    env = dict(os.environ, **SINGLE_THREAD_ENV, AUGBENCH_THREAD_POLICY="single")
    if args.library in NATIVE:
        return [args.augbench, "worker", "--library", args.library], env
    py = subprocess.run(
        [args.augbench, "env", "python", args.library], check=True, capture_output=True, text=True
    ).stdout.strip()
    env["PYTHONPATH"] = str(ROOT / "python")
    return [py, "-m", "augbench_worker", "--library", args.library], env


def one_process(args, condition: str, paths: list[str], params: dict, server=None) -> dict:
    prefix, extra_env, preexec = CONDITIONS[condition]
    if condition == "forked":
        w = server.spawn()
    else:
        argv, env = worker_argv(args)
        w = Worker(prefix + argv, dict(env, **extra_env), preexec)
    try:
        w.call({"op": "hello"})
        w.call({"op": "load", "media": "image", "paths": paths, "channels": 3, "clip_length": 1,
                "device": "cpu"})
        w.call({"op": "prepare", "transform": args.transform, "params": params, "device": "cpu"})
        w.call({"op": "check"})
        n = len(paths)
        w.call({"op": "time", "start": 0, "count": n, "loops": args.warm_loops})
        wall, cpu = [], []
        for r in range(args.rounds):
            reply = w.call({"op": "time", "start": 0, "count": n, "loops": args.loops})
            wall.append(statistics.median(reply["ns"]) / n)
            cpu.append(statistics.median(reply.get("cpu_ns") or [math.nan]) / n)
        return {"condition": condition, "wall_ns": wall, "cpu_ns": cpu}
    finally:
        w.close()


def cv(xs: list[float]) -> float:
    return statistics.stdev(xs) / statistics.mean(xs) if len(xs) > 1 else math.nan


def summarize(processes: list[dict], clock: str) -> dict:
    """Spread of per-process levels, and the share of variance between processes (log scale)."""
    logs = [[math.log(v) for v in p[clock]] for p in processes]
    levels = [statistics.median(p[clock]) for p in processes]
    within = statistics.mean(statistics.variance(l) for l in logs)
    between = statistics.variance([statistics.mean(l) for l in logs])
    rounds = len(logs[0])
    # One-way random effects: the between-process variance net of what the rounds' own noise
    # puts into the process means.
    between_net = max(0.0, between - within / rounds)
    return {
        "processes": len(levels),
        "level_max_over_min": max(levels) / min(levels),
        "level_cv": cv(levels),
        "within_round_cv": statistics.median(cv(p[clock]) for p in processes),
        "between_share": between_net / (between_net + within) if between_net + within else 0.0,
        "median_ns_per_item": statistics.median(levels),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--augbench", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--transform", required=True)
    ap.add_argument("--images", help="a folder of JPEGs (default: the cached synthetic set)")
    ap.add_argument("--items", type=int, default=10)
    ap.add_argument("--processes", type=int, default=20, help="fresh processes per condition")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--loops", type=int, default=3)
    ap.add_argument("--warm-loops", type=int, default=3)
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument("--out", help="write every process's rounds here (JSON)")
    args = ap.parse_args()
    conditions = args.conditions.split(",")
    for c in conditions:
        if c not in CONDITIONS:
            sys.exit(f"error: unknown condition {c!r}; known: {', '.join(CONDITIONS)}")
    folder = Path(args.images) if args.images else next(
        (Path.home() / ".cache" / "augbench" / "datasets").glob("synthetic-image-*")
    )
    paths = sorted(str(p) for p in folder.glob("*.jpg"))[: args.items]
    params = params_of(args.transform)
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    print(f"{args.library} {args.transform}: {len(paths)} items from {folder}; "
          f"{args.processes} processes × {args.rounds} rounds × {args.loops} loops per condition; "
          f"THP {thp.read_text().strip() if thp.exists() else 'unknown'}; "
          f"load {open('/proc/loadavg').read().split()[:3]}", flush=True)
    if "forked" in conditions and args.library in NATIVE:
        sys.exit("error: the forked condition needs a Python library (a fork server in its environment)")
    runs: list[dict] = []
    started = time.monotonic()
    fifos = tempfile.TemporaryDirectory(prefix="noise-study-")
    server = ForkServer(*worker_argv(args), args.library, Path(fifos.name)) \
        if "forked" in conditions else None
    for k in range(args.processes):
        for c in conditions:
            runs.append(one_process(args, c, paths, params, server))
        print(f"  {k + 1}/{args.processes} processes per condition "
              f"({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    if server:
        server.close()
    fifos.cleanup()
    report = {c: {clock: summarize([r for r in runs if r["condition"] == c], clock)
                  for clock in ("wall_ns", "cpu_ns")} for c in conditions}
    print(f"{'condition':14} {'clock':5} {'max/min':>8} {'level cv':>9} {'round cv':>9} "
          f"{'between':>8} {'ns/item':>10}")
    for c in conditions:
        for clock in ("wall_ns", "cpu_ns"):
            s = report[c][clock]
            print(f"{c:14} {clock[:-3]:5} {s['level_max_over_min']:8.3f} {s['level_cv']:9.2%} "
                  f"{s['within_round_cv']:9.2%} {s['between_share']:8.0%} "
                  f"{s['median_ns_per_item']:10.0f}")
    print(f"load after: {open('/proc/loadavg').read().split()[:3]}")
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": report, "processes": runs}, indent=1))


if __name__ == "__main__":
    main()
