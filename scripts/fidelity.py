#!/usr/bin/env python3
"""Fidelity check: does augbench measure what pyperf measures?

Five transforms of AlbumentationsX and Pillow (or the `--libraries` given: any Python library of
the support matrix, e.g. torchvision kornia) are timed twice on the same decoded images, each in
its library's own augbench environment (pyperf comes from a folder of its own on PYTHONPATH):
(a) by `augbench run` (medians read from its results JSON), (b) by pyperf's ``Runner.bench_time_func``, which times the very same callable that the
augbench worker times (the worker's adapter builds it, with the parameters augbench recorded),
in a process brought to the worker's state first: its thread variables, and its contract check
(the transform applied once) before the first timed run.
It prints two ratios augbench/pyperf per transform, each estimator against the same estimator of
pyperf's values: the median of all runs (augbench's `median_throughput` against the median of
pyperf's values), and the headline figure (augbench's `figure_throughput`, the median over worker
processes of each one's fastest run, against the same of pyperf's processes), and whether the
figure's ratio is within the tolerance. The fastest of k runs climbs with k where runs spread, so
pyperf takes as many values per process as augbench took runs per process, each lasting at least
augbench's `min_time` (both read from augbench's results); `--pyperf-values K` takes K instead,
and a last column then recomputes augbench's figure from the first K runs of each of its
processes, like for like. `--repeats N` measures every row N times, the rows in turn. A
row's verdict pools every worker process of all its triples, each harness apart: the ratio of the
medians of the processes' fastest values, with a seeded bootstrap 95% interval over processes.
It is `within` when that ratio is within the tolerance, `OUTSIDE` when the whole interval is
outside it, and `undecided` otherwise: the worker process is the unit of a shared host's noise
(a process's speed can differ from the next one's by 1.5x for its whole life), so one triple
cannot tell a few percent apart. With `--workdir`, every triple's runs and values go to
`rows.jsonl` there. Each transform is measured augbench, pyperf, augbench
again, so a drift of the machine's load during the comparison cancels out of the ratio.

    python3 scripts/fidelity.py [--augbench target/release/augbench] [--num-items 50]

The parent part uses only the standard library; it re-runs this file with each environment's
Python (``augbench env python <group>``) for the pyperf part, which pyperf itself re-runs once per
worker process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIBRARIES = ("albumentationsx", "pillow")
TRANSFORMS = ("Resize", "HorizontalFlip", "GaussianBlur", "JpegCompression", "Rotate")
CHILD_FLAG = "--fidelity-child"


# ----- parent: augbench run, then one pyperf child per library ------------------------------------
def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--augbench", default=str(REPO / "target" / "release" / "augbench"), help="augbench binary")
    p.add_argument("--config", default=None,
                   help="run config (default: augbench's defaults for image-rgb micro)")
    p.add_argument("--num-items", type=int, default=50)
    p.add_argument("--num-runs", type=int, default=10,
                   help="augbench runs per measurement (pyperf takes processes x values)")
    p.add_argument("--libraries", nargs="+", default=list(LIBRARIES))
    p.add_argument("--transforms", nargs="+", default=list(TRANSFORMS))
    p.add_argument("--pyperf-processes", type=int, default=6, help="pyperf worker processes per transform")
    p.add_argument("--pyperf-values", type=int, default=None,
                   help="pyperf values per process (default: augbench's runs per process)")
    p.add_argument("--tolerance", type=float, default=0.05, help="accepted |ratio - 1|")
    p.add_argument("--repeats", type=int, default=1,
                   help="A-B-A triples per row, the rows in turn; a row is judged by their median")
    p.add_argument("--workdir", default=None, help="keep data and outputs here (default: a temp dir)")
    return p.parse_args(argv)


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    if os.environ.get("FIDELITY_VERBOSE"):
        print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kw)


def load_avg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def run_augbench(a: argparse.Namespace, lib: str, transform: str, data: Path, out: Path) -> dict:
    """One `augbench run` of one library and transform; returns that transform's result, with the
    `min_time` the run used added as `_min_time`."""
    cmd = [a.augbench, "run", "--config", a.config, "--data-dir", str(data), "--output", str(out),
           "--num-items", str(a.num_items), "--no-refresh-requirements",
           "--libraries", lib, "--transforms", transform]
    if a.num_runs:
        cmd += ["--num-runs", str(a.num_runs)]
    sh(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files = list(out.glob(f"**/{lib}_micro*_results.json"))
    if len(files) != 1:
        raise SystemExit(f"expected one results file for {lib} under {out}, found {files}")
    file = json.loads(files[0].read_text())
    result = file["results"][transform]
    result["_min_time"] = file["metadata"]["run_config"]["execution"]["min_time"]
    return result


def pyperf_folder(envpy: str, work: Path) -> Path:
    """A folder holding pyperf alone, put on the pyperf processes' PYTHONPATH, so the library
    environments stay exactly what their locks say (installed once per work folder)."""
    folder = work / "pyperf-only"
    if not (folder / "pyperf").is_dir():
        sh(["uv", "pip", "install", "--quiet", "--python", envpy, "--target", str(folder), "pyperf"])
    return folder


def run_pyperf(a: argparse.Namespace, envpy: str, lib: str, transform: str, ours: dict, data: Path,
               work: Path) -> dict:
    """pyperf's {"median": img/s, "figure": img/s} for the transform, with as many values per
    process as augbench's run `ours` took runs per process (or `--pyperf-values`), each lasting at
    least its `min_time`."""
    params = ours["params"]
    values = a.pyperf_values or max(ours.get("process_runs") or [a.num_runs])
    job = work / f"{lib}_{transform}_job.json"
    job.write_text(json.dumps({"library": lib, "data": str(data), "params": {transform: params}}))
    summary = work / f"{lib}_{transform}_pyperf.json"
    env = dict(os.environ, PYTHONPATH=f"{REPO / 'python'}{os.pathsep}{pyperf_folder(envpy, work)}")
    sh([envpy, __file__, CHILD_FLAG, str(job), "--summary", str(summary), "--quiet",
        "--processes", str(a.pyperf_processes), "--values", str(values),
        "--min-time", str(ours["_min_time"])], env=env)
    return json.loads(summary.read_text())[transform]


def figure(r: dict) -> float:
    """The row's headline figure (its median in a file written before figures existed)."""
    return r.get("figure_throughput") or r["median_throughput"]


def figure_of_first(r: dict, k: int) -> float:
    """The headline figure's estimator over only the first `k` runs of each worker process."""
    return statistics.median(process_fastest(r, k))


def compare(a: argparse.Namespace, lib: str, transform: str, envpy: str, data: Path,
            work: Path) -> tuple[list[float], list[float]] | None:
    """augbench, pyperf, augbench again (A-B-A): the mean of the two augbench medians cancels a
    linear drift of the machine's load over the comparison. Returns each harness's worker
    processes' fastest runs (None when augbench did not measure the row)."""
    load = load_avg()
    first = run_augbench(a, lib, transform, data, work / f"{lib}-{transform}-a1")
    if first.get("status") != "ok":
        print(f"{lib:<16} {transform:<16} not compared: {first.get('status')} {first.get('reason', '')}")
        return None
    theirs = run_pyperf(a, envpy, lib, transform, first, data, work)
    second = run_augbench(a, lib, transform, data, work / f"{lib}-{transform}-a2")
    ours = (first["median_throughput"] + second["median_throughput"]) / 2
    ours_fig = (figure(first) + figure(second)) / 2
    ratio, ratio_fig = ours / theirs["median"], ours_fig / theirs["figure"]
    ok = abs(ratio_fig - 1) <= a.tolerance
    verdict = f"{'within' if ok else 'OUTSIDE'} ±{a.tolerance:.0%}"
    first_k = ""
    if a.pyperf_values:
        k = a.pyperf_values
        first_k = f" {(figure_of_first(first, k) + figure_of_first(second, k)) / 2 / theirs['figure']:>9.3f}"
    print(f"{lib:<16} {transform:<16} {ours:>9.1f} {theirs['median']:>9.1f} {ratio:>7.3f}"
          f" {ours_fig:>9.1f} {theirs['figure']:>9.1f} {ratio_fig:>7.3f}  {verdict:<14} {load}{first_k}", flush=True)
    if a.workdir:
        keep = ("throughputs", "process_runs", "median_throughput", "figure_throughput")
        row = {"library": lib, "transform": transform, "load": load, "pyperf": theirs,
               "augbench": [{k: r.get(k) for k in keep} for r in (first, second)]}
        with open(work / "rows.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
    return process_fastest(first) + process_fastest(second), [max(v) for v in theirs["process_values"]]


def process_fastest(r: dict, k: int | None = None) -> list[float]:
    """Each worker process's fastest run of an augbench result (of its first `k` runs)."""
    xs, fastest = r["throughputs"], []
    for n in r.get("process_runs") or [len(xs)]:
        fastest.append(max(xs[:n][:k]))
        xs = xs[n:]
    return fastest


def pooled_ratio(ours: list[float], theirs: list[float], resamples: int = 4000) -> tuple[float, float, float]:
    """median(ours) / median(theirs) with a seeded bootstrap 95% interval (processes resampled)."""
    rng = random.Random(0)
    boot = sorted(statistics.median(rng.choices(ours, k=len(ours)))
                  / statistics.median(rng.choices(theirs, k=len(theirs))) for _ in range(resamples))
    ratio = statistics.median(ours) / statistics.median(theirs)
    return ratio, boot[int(0.025 * resamples)], boot[int(0.975 * resamples) - 1]


def verdict(ratio: float, low: float, high: float, tolerance: float) -> str:
    """`within` the tolerance, `OUTSIDE` it beyond the interval, else `undecided`."""
    if abs(ratio - 1) <= tolerance:
        return "within"
    return "OUTSIDE" if high < 1 - tolerance or low > 1 + tolerance else "undecided"


def judge(a: argparse.Namespace, pooled: dict[tuple[str, str], tuple[list[float], list[float]]]) -> bool:
    """Each row by the pooled ratio of its processes' fastest runs; False if a row is OUTSIDE."""
    print(f"\nevery worker process of {a.repeats} triple(s) per row, each harness pooled (median of the"
          f" processes' fastest runs, augbench / pyperf, bootstrap 95% interval; tolerance ±{a.tolerance:.0%}):")
    ok = True
    for (lib, t), (ours, theirs) in pooled.items():
        ratio, low, high = pooled_ratio(ours, theirs)
        word = verdict(ratio, low, high, a.tolerance)
        ok &= word != "OUTSIDE"
        print(f"{lib:<16} {t:<16} {ratio:>7.3f}  [{low:.3f}, {high:.3f}]  {len(ours)} vs {len(theirs)} processes  {word}")
    return ok


def env_groups(augbench: str) -> dict[str, str]:
    """Each library's environment group, from the support matrix (`augbench list libraries`)."""
    table = sh([augbench, "list", "libraries"], capture_output=True, text=True).stdout.splitlines()
    rows = [re.split(r"  +", line.strip()) for line in table[1:]]
    return {r[0]: r[4] for r in rows if len(r) > 4}


def parent(argv: list[str]) -> int:
    a = parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="augbench-fidelity-") as tmp:
        work = Path(a.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        if a.config is None:
            a.config = str(work / "task.yaml")
            Path(a.config).write_text("version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n")
        data = work / "data"
        if not data.exists():
            sh([a.augbench, "data", "synth", "--out", str(data), "--n", str(a.num_items)], stdout=subprocess.DEVNULL)
        print(f"\n{'':<33} {'median of runs, img/s':^27} {'figure, img/s':^27}")
        print(f"{'library':<16} {'transform':<16} {'augbench':>9} {'pyperf':>9} {'ratio':>7}"
              f" {'augbench':>9} {'pyperf':>9} {'ratio':>7}  {'verdict':<14} load (1/5/15 min)"
              + (f"  ratio, first {a.pyperf_values} runs" if a.pyperf_values else ""))
        groups = env_groups(a.augbench)
        envpys = {lib: sh([a.augbench, "env", "python", groups.get(lib, lib)], capture_output=True,
                          text=True).stdout.strip()
                  for lib in a.libraries}
        pooled: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
        for _ in range(a.repeats):
            for lib in a.libraries:
                for t in a.transforms:
                    got = compare(a, lib, t, envpys[lib], data, work)
                    if got is not None:
                        ours, theirs = pooled.setdefault((lib, t), ([], []))
                        ours += got[0]
                        theirs += got[1]
        ok = judge(a, pooled)
    print(f"\nload average at the end: {load_avg()}; wall {time.monotonic() - started:.0f} s")
    print("no row outside the tolerance" if ok else "some rows are outside the tolerance beyond their interval")
    return 0 if ok else 1


# ----- child: pyperf in the library's environment (this part runs in every pyperf worker) ---------
def child(argv: list[str]) -> int:
    job_path = argv[argv.index(CHILD_FLAG) + 1]
    job = json.loads(Path(job_path).read_text())
    # As the augbench worker gets them: the coordinator's thread variables (OPENCV_NUM_THREADS
    # among them, which pyperf's minimal worker environment drops; the worker's THREAD_ENV_VARS
    # is the same list), all set before numpy or the library is imported.
    from augbench_worker import threads

    threads.apply_env(threads.SINGLE)
    import pyperf
    from augbench_worker import adapters

    def keep_child_args(cmd: list[str], args: argparse.Namespace) -> None:
        cmd.extend([CHILD_FLAG, job_path])

    runner = pyperf.Runner(add_cmdline_args=keep_child_args)
    runner.argparser.add_argument(CHILD_FLAG, metavar="JOB")
    runner.argparser.add_argument("--summary", help="write {transform: img/s} here (main process)")
    args = runner.parse_args()
    adapter = adapters.create(job["library"])
    adapter.pin_threads(True)
    paths = sorted(str(p) for p in Path(job["data"]).iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    adapter.load({"media": "image", "paths": paths, "channels": 3, "device": "cpu"})
    medians: dict[str, dict[str, float]] = {}
    for name, params in job["params"].items():
        adapter.prepare({"transform": name, "params": params, "device": "cpu"})
        adapter.check({})  # as the worker does before its first timed run
        run, items = adapter.prepared.run, list(adapter.items)
        bench = runner.bench_time_func(f"{job['library']}:{name}", time_pass, run, items)
        if bench is not None and not args.worker:  # the main process, with every worker's values
            n = len(items)
            fastest = [min(r.values) for r in bench.get_runs() if r.values]  # each process's
            medians[name] = {"median": n / statistics.median(bench.get_values()),
                             "figure": n / statistics.median(fastest),
                             "process_values": [[n / v for v in r.values] for r in bench.get_runs() if r.values]}
    if args.summary and medians:
        Path(args.summary).write_text(json.dumps(medians))
    return 0


def time_pass(loops: int, run, items: list) -> float:
    """What the worker's timed loop does: each item once per loop, the output forced."""
    clock = time.perf_counter
    started = clock()
    for _ in range(loops):
        for item in items:
            run(item)
    return clock() - started


if __name__ == "__main__":
    sys.exit(child(sys.argv) if CHILD_FLAG in sys.argv else parent(sys.argv[1:]))
