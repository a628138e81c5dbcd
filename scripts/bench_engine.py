#!/usr/bin/env python3
"""Helper of scripts/bench_engine.sh (engine benchmarks of issue 3, item 7).

`timeline OUT_DIR TIMELINE_JSON -- CMD...` runs CMD (an `augbench run`) and, by polling the results
files it rewrites after every transform, records when each transform finished.
`report OUT` turns the criterion estimates, the round-trip percentiles, /usr/bin/time output and
the timelines into a markdown table.
"""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

POLL_SEC = 0.1
# The per-transform budget the overhead is judged against (issue 3, item 7a).
REFERENCE_TRANSFORM_NS = 10_000.0
TOP_TRANSFORMS = 12


def results_files(out_dir):
    return sorted(out_dir.glob("**/*_results.json"))


def read_results(path):
    try:
        return json.loads(path.read_text())["results"]
    except (OSError, ValueError, KeyError):
        return None


def poll(out_dir, seen, events, t0):
    for path in results_files(out_dir):
        results = read_results(path)
        if results is None:
            continue
        for name in results:
            key = (path.name, name)
            if key not in seen:
                seen.add(key)
                events.append({"t": time.monotonic() - t0, "job": path.name, "transform": name})


def timeline(argv):
    out_dir, target, cmd = Path(argv[0]), Path(argv[1]), argv[3:]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    seen, events = set(), []
    while proc.poll() is None:
        poll(out_dir, seen, events, t0)
        time.sleep(POLL_SEC)
    poll(out_dir, seen, events, t0)
    data = {"wall_sec": time.monotonic() - t0, "returncode": proc.returncode, "events": events}
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(target)
    return proc.returncode


def load_avg(out, name):
    path = out / f"{name}.uptime"
    if not path.exists():
        return "?"
    m = re.search(r"load average: ([\d.]+), ([\d.]+), ([\d.]+)", path.read_text())
    return f"{m.group(1)} / {m.group(2)} / {m.group(3)}" if m else "?"


def criterion_estimates(root):
    """full_id -> (median ns per iteration, elements per iteration or None)."""
    found = {}
    for bench in root.glob("**/new/benchmark.json"):
        meta = json.loads(bench.read_text())
        est = json.loads((bench.parent / "estimates.json").read_text())
        elements = (meta.get("throughput") or {}).get("Elements")
        found[meta["full_id"]] = (est["median"]["point_estimate"], elements)
    return found


def per_item(est, full_id):
    ns, elements = est.get(full_id, (None, None))
    return None if ns is None else ns / (elements or 1)


def fmt(x, spec=".2f", unit=""):
    return "n/a" if x is None else f"{x:{spec}}{unit}"


def overhead_section(out, est):
    bare = per_item(est, "harness_identity/bare")
    boxed = per_item(est, "harness_identity/bare_boxed_op")
    clock = per_item(est, "harness_identity/worker_clock")
    load = load_avg(out, "bench")
    rows = ["## (a) Harness overhead (Identity, 20 synthetic JPEGs, `image` worker)", "",
            "| measure | ns / item | % of a 10 µs transform | load (1/5/15 min) |", "|---|---|---|---|"]
    for label, v in [("bare in-process loop", bare), ("bare loop, boxed op (real-transform path)", boxed),
                     ("worker `time`, worker's clock", clock)]:
        pct = None if v is None else 100 * v / REFERENCE_TRANSFORM_NS
        rows.append(f"| {label} | {fmt(v)} | {fmt(pct, '.4f', ' %')} | {load} |")
    if bare is not None and clock is not None:
        diff = clock - bare
        rows.append(f"| **overhead: worker clock − bare** | {diff:.2f} | "
                    f"**{100 * diff / REFERENCE_TRANSFORM_NS:.4f} %** (target < 1 %) | {load} |")
    return rows + [""] + wall_rows(est, clock, load)


def wall_rows(est, clock, load):
    rows = ["Coordinator-side wall time of one `time` request (protocol included), per item:", "",
            "| loops per request | wall ns / item | protocol µs / request | % of a 10 µs transform |",
            "|---|---|---|---|"]
    prefix = "harness_wall/time_request/"
    for full_id in sorted((k for k in est if k.startswith(prefix)), key=lambda k: int(k.rsplit("/", 1)[1])):
        ns, elements = est[full_id]
        wall = ns / elements
        proto = None if clock is None else (ns - clock * elements) / 1000
        rows.append(f"| {full_id.rsplit('/', 1)[1]} | {wall:.2f} | {fmt(proto)} | "
                    f"{100 * wall / REFERENCE_TRANSFORM_NS:.3f} % |")
    return rows + [f"\n(load during the bench: {load})", ""]


def rtt_section(out, est):
    rows = ["## (b) Protocol round trip (`hello`)", "",
            "| worker | samples | p50 µs | p95 µs | p99 µs | criterion median µs |", "|---|---|---|---|---|---|"]
    path = out / "rtt.json"
    for r in json.loads(path.read_text())["hello_rtt"] if path.exists() else []:
        crit = est.get(f"hello_rtt/{r['worker']}", (None, None))[0]
        rows.append(f"| {r['worker']} | {r['samples']} | {r['p50_us']:.1f} | {r['p95_us']:.1f} | "
                    f"{r['p99_us']:.1f} | {fmt(None if crit is None else crit / 1000, '.1f')} |")
    return rows + [f"\n(load during the bench: {load_avg(out, 'bench')})", ""]


def gnu_time(path):
    text = path.read_text() if path.exists() else ""
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", text)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    cpu = re.search(r"Percent of CPU this job got: (\S+)", text)
    status = re.search(r"Exit status: (\d+)", text)
    return (wall.group(1) if wall else "?", f"{int(rss.group(1)) / 1024:.0f} MiB" if rss else "?",
            cpu.group(1) if cpu else "?", status.group(1) if status else "?")


def quickstart_section(out):
    rows = ["## (c) Quickstart (`configs/examples/quickstart.yaml`)", "",
            "| run | exit | wall (h:mm:ss / m:ss) | peak RSS | CPU | first result s | load at start (1/5/15 min) |",
            "|---|---|---|---|---|---|---|"]
    for run in ["first", "cached"]:
        wall, rss, cpu, status = gnu_time(out / f"quickstart-{run}.time")
        first = first_result(out / f"quickstart-{run}.timeline.json")
        rows.append(f"| {run} | {status} | {wall} | {rss} | {cpu} | {fmt(first)} | {load_avg(out, f'quickstart-{run}')} |")
    return rows + [""] + breakdown(out, "cached")


def first_result(path):
    """Seconds from start to the first results-file write (dataset, worker start and decode)."""
    if not path.exists():
        return None
    events = json.loads(path.read_text())["events"]
    return min((e["t"] for e in events), default=None)


def job_walls(events):
    """Wall seconds per job: from the previous job's last rewrite (or the start) to its own last.
    Jobs run one after another; transforms of an interleaved group finish together."""
    last = {}
    for e in events:
        last[e["job"]] = max(last.get(e["job"], 0.0), e["t"])
    prev, walls = 0.0, {}
    for job, t in sorted(last.items(), key=lambda kv: kv[1]):
        walls[job] = t - prev
        prev = t
    return walls


def costs(r, min_time):
    """Estimated seconds of one transform from its result: timed runs (each lasts at least
    `min_time`) and the slow preflight."""
    timed = sum(max(min_time, t) for t in r.get("times") or [])
    per_item, n = r.get("preflight_sec_per_item"), r.get("slow_preflight_items")
    preflight = per_item * n if per_item and n else 0.0
    return timed, preflight


def job_rows(run_dir, walls):
    rows, per_transform = [], []
    for path in results_files(run_dir):
        data = json.loads(path.read_text())
        min_time = data["metadata"]["benchmark_params"]["min_time"]
        statuses, timed, pre, warm = {}, 0.0, 0.0, 0
        for name, r in data["results"].items():
            statuses[r["status"]] = statuses.get(r["status"], 0) + 1
            t, p = costs(r, min_time)
            timed, pre, warm = timed + t, pre + p, warm + (r.get("warmup_iterations") or 0)
            per_transform.append((t + p, path.name, name, r))
        wall = walls.get(path.name)
        rest = None if wall is None else wall - timed - pre
        counts = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        rows.append(f"| {path.name.replace('_micro_results.json', '')} | {fmt(wall, '.1f')} | {timed:.1f} | "
                    f"{pre:.1f} | {warm} | {fmt(rest, '.1f')} | {counts} |")
    return rows, per_transform


def breakdown(out, run):
    path = out / f"quickstart-{run}.timeline.json"
    if not path.exists():
        return []
    walls = job_walls(json.loads(path.read_text())["events"])
    rows, per_transform = job_rows(out / f"quickstart-{run}", walls)
    head = [f"Where the {run} run's time goes, per job (wall from results-file rewrites polled every "
            f"{POLL_SEC} s; timed = runs x max(min_time, pass); the rest is warmup, worker start, "
            "decode and protocol):", "",
            "| job | wall s | timed runs s | slow preflight s | warmup passes | rest s | statuses |",
            "|---|---|---|---|---|---|---|"]
    return head + rows + [""] + top_transforms(per_transform)


def top_transforms(per_transform):
    rows = [f"Costliest {TOP_TRANSFORMS} transforms (estimated timed + preflight seconds):", "",
            "| job | transform | est. s | status | warmup passes | runs | ms / item |",
            "|---|---|---|---|---|---|---|"]
    for sec, job, name, r in sorted(per_transform, key=lambda x: -x[0])[:TOP_TRANSFORMS]:
        thr = r.get("median_throughput")
        ms = 1000 / thr if thr else (r.get("preflight_sec_per_item") or 0) * 1000 or None
        rows.append(f"| {job.replace('_micro_results.json', '')} | {name} | {sec:.2f} | {r.get('status')} | "
                    f"{r.get('warmup_iterations')} | {r.get('num_successful_runs')} | {fmt(ms)} |")
    return rows + [""]


def report(argv):
    out = Path(argv[0])
    est = criterion_estimates(out / "criterion")
    lines = overhead_section(out, est) + rtt_section(out, est) + quickstart_section(out)
    print("\n".join(lines))
    return 0


def main(argv):
    if len(argv) >= 4 and argv[0] == "timeline" and argv[3] == "--":
        return timeline(argv[1:])
    if len(argv) == 2 and argv[0] == "report":
        return report(argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
