#!/usr/bin/env python3
"""Fidelity probe: why does a transform read slower in augbench's worker than in a bare loop?

For one library and transform, on the same synthetic photos, fresh processes alternate (A-B-A-B,
PAIRS pairs), each timing the very same function (the adapter's ``_timed_loops`` over the loaded
items, ``LOOPS`` loops per value, ``VALUES`` values):

- ``worker``: augbench's worker process (``python -m augbench_worker``), driven over its protocol
  as the coordinator drives it: hello, load, prepare, check, then ``time`` requests;
- ``bare``: a fresh process that imports the adapter and times the loop directly (what pyperf's
  workers do), with the variants below.

Per process it reports img/s (fastest and median value) and the minor page faults per item
during the timed values (from /proc), then each variant's median ratio to ``worker`` with the
spread over pairs. Variants (``VARIANTS``, space separated): ``bare`` (load, prepare, loop),
``bare+check`` (the worker's contract check and output-form loop first), ``bare+protocol`` (the
protocol's stdout claim and thread policy as ``__main__`` sets them), ``bare+fresh-arrays`` (the
loaded items copied into fresh arrays first), ``bare+worker-env`` (the coordinator's thread
variables, ``OPENCV_NUM_THREADS=1`` among them, which a bare process and pyperf's workers lack).

    [LIBRARY=albumentationsx] [TRANSFORM=Resize] [PAIRS=4] python3 studies/fidelity_probe.py

The parent uses only the standard library; children run in the library's augbench environment.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHILD = "--probe-child"


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def load_avg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def minflt(pid: int) -> int:
    # /proc/PID/stat: field 10 is minflt; the command name (field 2) may hold spaces.
    rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(rest[7])


def spec_params(binary: str, transform: str) -> dict:
    listing = subprocess.run([binary, "list", "transforms"], check=True, capture_output=True, text=True).stdout
    for line in listing.splitlines():
        if line.split()[:1] == [transform]:
            return json.loads(re.search(r"\{.*\}$", line).group(0))
    raise SystemExit(f"no transform {transform} in `augbench list transforms`")


# What augbench's coordinator sets for a micro worker: the worker's copy of the one list
# (augbench_worker/threads.py, checked against crates/augbench-protocol/src/threads.rs).
sys.path.insert(0, str(REPO / "python"))
from augbench_worker.threads import THREAD_ENV_VARS  # noqa: E402


def child_env(variant: str = "worker") -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), AUGBENCH_THREAD_POLICY="single")
    if variant == "worker" or "worker-env" in variant:  # the coordinator's whole thread environment
        env.update({var: "1" for var in THREAD_ENV_VARS})
    return env


def rates(ns: list[int], items: int) -> dict:
    per = [items / (n / 1e9) for n in ns]
    return {"max": max(per), "median": statistics.median(per)}


def run_worker(python: str, lib: str, transform: str, params: dict, paths: list[str], loops: int, values: int) -> dict:
    proc = subprocess.Popen([python, "-m", "augbench_worker", "--library", lib], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=child_env("worker"))

    def call(req: dict) -> dict:
        proc.stdin.write(json.dumps(req) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        if not reply.get("ok"):
            raise SystemExit(f"worker: {reply}")
        return reply

    try:
        call({"op": "hello"})
        call({"op": "load", "media": "image", "paths": paths, "channels": 3, "device": "cpu"})
        call({"op": "prepare", "transform": transform, "params": params, "device": "cpu"})
        call({"op": "check"})
        call({"op": "time", "start": 0, "count": len(paths), "loops": loops})  # warm, untimed
        before = minflt(proc.pid)
        ns = [n for _ in range(values) for n in call({"op": "time", "start": 0, "count": len(paths), "loops": loops})["ns"]]
        faults = minflt(proc.pid) - before
        call({"op": "shutdown"})
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return {**rates(ns, len(paths)), "faults_per_item": faults / (len(ns) * len(paths))}


def run_bare(python: str, variant: str, lib: str, transform: str, params: dict, paths: list[str], loops: int,
             values: int) -> dict:
    job = json.dumps({"variant": variant, "library": lib, "transform": transform, "params": params,
                      "paths": paths, "loops": loops, "values": values})
    done = subprocess.run([python, __file__, CHILD, job], check=True, capture_output=True, text=True,
                          env=child_env(variant))
    return json.loads(done.stdout.strip().splitlines()[-1])


def parent() -> int:
    binary = os.environ.get("AUGBENCH_BIN", str(REPO / "target" / "release" / "augbench"))
    lib, transform = os.environ.get("LIBRARY", "albumentationsx"), os.environ.get("TRANSFORM", "Resize")
    pairs, loops, values = env_int("PAIRS", 4), env_int("LOOPS", 2), env_int("VALUES", 8)
    variants = ["worker", *os.environ.get("VARIANTS", "bare bare+check bare+protocol bare+fresh-arrays").split()]
    group = subprocess.run([binary, "list", "libraries"], check=True, capture_output=True, text=True).stdout
    env_group = os.environ.get("ENV_GROUP") or next((line.split()[-4] for line in group.splitlines() if line.split()[:1] == [lib]), lib)
    python = subprocess.run([binary, "env", "python", env_group], check=True, capture_output=True, text=True).stdout.strip()
    params = spec_params(binary, transform)
    print(f"{lib} {transform} {json.dumps(params)}; {loops} loops per value, {values} values; load {load_avg()}")
    with tempfile.TemporaryDirectory(prefix="augbench-probe-") as tmp:
        data = Path(tmp) / "data"
        subprocess.run([binary, "data", "synth", "--out", str(data), "--n", str(env_int("ITEMS", 50))],
                       check=True, capture_output=True)
        paths = sorted(str(p) for p in data.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
        seen: dict[str, list[dict]] = {v: [] for v in variants}
        for i in range(pairs):
            order = variants if i % 2 == 0 else variants[::-1]
            for v in order:
                r = (run_worker(python, lib, transform, params, paths, loops, values) if v == "worker"
                     else run_bare(python, v, lib, transform, params, paths, loops, values))
                seen[v].append(r)
                print(f"  pair {i + 1} {v:19} max {r['max']:8.0f} img/s  median {r['median']:8.0f}  "
                      f"faults/item {r['faults_per_item']:7.1f}  load {load_avg()}", flush=True)
    print("\nvariant / worker, per pair (fastest value of each process), median and range over pairs")
    for v in variants[1:]:
        ratios = [b["max"] / w["max"] for b, w in zip(seen[v], seen["worker"])]
        faults = statistics.median(r["faults_per_item"] for r in seen[v])
        print(f"  {v:19} {statistics.median(ratios):6.3f} ({min(ratios):.3f}-{max(ratios):.3f})  faults/item {faults:.1f}")
    if "bare" in seen:
        print("variant / bare, per pair")
        for v in variants:
            if v != "bare":
                ratios = [x["max"] / b["max"] for x, b in zip(seen[v], seen["bare"])]
                print(f"  {v:19} {statistics.median(ratios):6.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
    wf = statistics.median(r["faults_per_item"] for r in seen["worker"])
    print(f"  {'worker':19}  1.000               faults/item {wf:.1f}")
    print(f"load at the end: {load_avg()}")
    return 0


def child(job: dict) -> int:
    variant = job["variant"]
    out_stream = sys.stdout
    if "protocol" in variant:  # as __main__ does, before anything else is imported
        from augbench_worker import protocol

        out_stream = protocol.claim_stdout()
    from augbench_worker import threads

    threads.apply_env(threads.SINGLE)
    import resource

    from augbench_worker import adapters

    adapter = adapters.create(job["library"])
    adapter.pin_threads(True)
    adapter.load({"media": "image", "paths": job["paths"], "channels": 3, "device": "cpu"})
    if "fresh-arrays" in variant:
        adapter.items = [item.copy() for item in adapter.items]
    adapter.prepare({"transform": job["transform"], "params": job["params"], "device": "cpu"})
    if "check" in variant:
        adapter.check({})
    prepared, items, loops = adapter.prepared, list(adapter.items), job["loops"]
    adapter._timed_loops(prepared, items, loops)  # warm, untimed
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    ns = [n for _ in range(job["values"]) for n in adapter._timed_loops(prepared, items, loops)[0]]
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    out = {**rates(ns, len(items)), "faults_per_item": faults / (len(ns) * len(items))}
    print(json.dumps(out), file=out_stream, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(child(json.loads(sys.argv[2])) if len(sys.argv) > 2 and sys.argv[1] == CHILD else parent())
