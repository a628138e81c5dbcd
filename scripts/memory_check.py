#!/usr/bin/env python3
"""Checks augbench's memory sampler against an independent reading (issue 42, item 5).

Starts a forked workload (a parent and three workers, like a loader: the parent's pages shared
copy-on-write with the workers, each worker writing its own) under augbench's sampler (the
`sample_tree` example of augbench-host, period `MEMORY_SAMPLE_PERIOD_MS`), and meanwhile sums
`Rss:` and `Pss:` of `/proc/<pid>/smaps_rollup` over the same tree itself every 50 ms. Prints
both peaks and their ratio per repeat; the target is a PSS ratio within 5% of 1.

    python3 scripts/memory_check.py [--repeats 3] [--sampler PATH]

Stdlib only, Linux only. Without --sampler it builds the example with cargo (release).
"""

import argparse
import json
import os
import subprocess
import sys
import time

PERIOD_SEC = 0.05
MB = 1 << 20

# Deterministic, no randomness: the parent writes 120 MB, forks three workers; worker i writes
# 40 + 20*i MB in 10 MB steps 100 ms apart, holds 1.5 s, frees half, holds 0.5 s and exits.
WORKLOAD = r"""
import os, time
shared = bytearray(b"\x11") * (120 << 20)
kids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        own = []
        for _ in range((40 + 20 * i) // 10):
            own.append(bytearray(b"\x22") * (10 << 20))
            time.sleep(0.1)
        time.sleep(1.5)
        del own[: len(own) // 2]
        time.sleep(0.5)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
time.sleep(0.2)
"""


def build_sampler():
    cmd = ["cargo", "build", "--release", "-q", "-p", "augbench-host", "--example", "sample_tree",
           "--message-format=json-render-diagnostics"]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "sample_tree":
            if msg.get("executable"):
                return msg["executable"]
    sys.exit("cargo built no sample_tree executable")


def table():
    """(pid, ppid) of every process, as the Rust sampler lists them."""
    rows = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 1:].split()
        if len(fields) >= 2:
            rows.append((int(name), int(fields[1])))
    return rows


def tree(root):
    children = {}
    for pid, ppid in table():
        children.setdefault(ppid, []).append(pid)
    out, todo = [root], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def rollup(pid):
    """(rss, pss) bytes, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    vals = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss"):
            vals[key] = int(rest.split()[0]) * 1024
    if "Rss" not in vals:
        return None
    return vals["Rss"], vals["Pss"]


def one_run(sampler):
    proc = subprocess.Popen([sampler, sys.executable, "-c", WORKLOAD], stdout=subprocess.PIPE, text=True)
    # The workload is the sampler's child.
    root = None
    while root is None and proc.poll() is None:
        root = next((pid for pid, ppid in table() if ppid == proc.pid), None)
        if root is None:
            time.sleep(0.005)
    peak_rss = peak_pss = samples = max_procs = 0
    cost = 0.0
    deadline = time.monotonic()
    while root is not None and proc.poll() is None:
        t0 = time.monotonic()
        rss = pss = n = 0
        for pid in tree(root):
            r = rollup(pid)
            if r is not None:
                rss, pss, n = rss + r[0], pss + r[1], n + 1
        cost += time.monotonic() - t0
        if n:
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            max_procs, samples = max(max_procs, n), samples + 1
        deadline += PERIOD_SEC
        time.sleep(max(0.0, deadline - time.monotonic()))
    out, _ = proc.communicate()
    rust = json.loads(out)
    return rust, {"peak_rss_bytes": peak_rss, "peak_pss_bytes": peak_pss, "samples": samples,
                  "max_processes": max_procs, "ms_per_reading": 1000 * cost / max(samples, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sampler", help="path of the built sample_tree example")
    args = ap.parse_args()
    sampler = args.sampler or build_sampler()
    print(f"{'run':>3} {'augbench PSS':>13} {'python PSS':>11} {'ratio':>6} "
          f"{'augbench RSS':>13} {'python RSS':>11} {'ratio':>6} {'samples':>9} {'procs':>5}")
    worst = 0.0
    for i in range(args.repeats):
        rust, py = one_run(sampler)
        rp = rust["peaks"]
        if rp["unavailable"]:
            print(f"{i + 1:>3} augbench: unavailable: {rp['unavailable']}")
            worst = float("inf")
            continue
        cpu = rust.get("sampler_cpu_ms")
        augbench_ms = "?" if cpu is None else f"{cpu / max(rp['samples'], 1):.1f}"
        pss_ratio = rp["peak_pss_bytes"] / py["peak_pss_bytes"]
        rss_ratio = rp["peak_rss_bytes"] / py["peak_rss_bytes"]
        worst = max(worst, abs(pss_ratio - 1))
        print(f"{i + 1:>3} {rp['peak_pss_bytes'] / MB:>10.1f} MB {py['peak_pss_bytes'] / MB:>8.1f} MB "
              f"{pss_ratio:>6.3f} {rp['peak_rss_bytes'] / MB:>10.1f} MB {py['peak_rss_bytes'] / MB:>8.1f} MB "
              f"{rss_ratio:>6.3f} {rp['samples']:>4}/{py['samples']:<4} "
              f"{rp['max_processes']}/{py['max_processes']}"
              f"  ms/reading: augbench {augbench_ms} CPU (process), {rp['reading_cpu_ms'] / max(rp['samples'], 1):.1f} CPU (thread);"
              f" python {py['ms_per_reading']:.1f} wall;"
              f" augbench interval {rp['span_ms'] / max(rp['samples'] - 1, 1):.0f} ms")
    verdict = "within" if worst <= 0.05 else "NOT within"
    print(f"largest PSS peak difference {100 * worst:.1f}%: {verdict} the 5% target")
    return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
