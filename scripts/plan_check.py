#!/usr/bin/env python3
"""Checks `plan`'s time estimate and the run bar's ETA against the measured wall time (issue 44).

For each config: reads `augbench plan`'s `# time estimate` (one figure, or a range under a
precision target), then runs `augbench run` under a pseudo-terminal so the progress bars draw,
stamps every `(ETA …)` the bars print with the seconds since the start, and prints:
- the estimate over the wall time (low and high for a range); the target is within ±25%;
- the ETA's error at a quarter, half and three quarters of the run: (elapsed + ETA) over the
  wall time, read from the whole-run bar (the interleaved schedule's), or from the last bar drawn.

    python3 scripts/plan_check.py [--bin PATH] [--out DIR] CONFIG [CONFIG ...] [-- RUN ARGS]

Stdlib only, Linux only. RUN ARGS go to both `plan` and `run` (e.g. `--num-items 200`).
"""

import argparse
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ESTIMATE = re.compile(r"# time estimate: (.+)")
DURATION = re.compile(r"(?:(\d+) min)?\s*(?:(\d+(?:\.\d+)?) s)?")
ETA = re.compile(r"(\d+)% .*?\(ETA ((?:\d+ min )?\d+(?:\.\d+)? s|\?)\)")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def seconds(text):
    """`12 min 3 s`, `45 s`, `~2 min 21 s` → seconds (None when nothing parses)."""
    m = DURATION.fullmatch(text.strip().lstrip("~").strip())
    if not m or not any(m.groups()):
        return None
    return 60 * int(m.group(1) or 0) + float(m.group(2) or 0)


def estimate(binary, config, out, extra):
    argv = [binary, "plan", "--config", config, "--output", str(out), *extra]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    m = ESTIMATE.search(out)
    if not m:
        sys.exit(f"{config}: `plan` printed no time estimate")
    text = m.group(1).split("(")[0].strip()
    parts = [seconds(p) for p in text.split(" to ")]
    return text, parts


def run_on_pty(argv, log_path):
    """Runs argv on a 200-column pseudo-terminal; returns (wall seconds, [(t, pct, eta)])."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
    start, readings, tail = time.monotonic(), [], ""
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            t = time.monotonic() - start
            text = data.decode(errors="replace")
            log.write(text)
            tail = (tail + ANSI.sub("", text))[-4000:]
            for pct, eta in ETA.findall(tail):
                left = seconds(eta) if eta != "?" else None
                if left is not None:
                    readings.append((t, int(pct), left))
            tail = tail[-300:]
    _, status = os.waitpid(pid, 0)
    wall = time.monotonic() - start
    return wall, readings, os.waitstatus_to_exitcode(status)


def eta_at(readings, wall, share):
    """(elapsed + ETA) / wall from the reading closest to `share` of the wall time."""
    if not readings:
        return None
    t, _, left = min(readings, key=lambda r: abs(r[0] - share * wall))
    return (t + left) / wall


def check(binary, config, out_root, extra):
    name = Path(config).stem
    out = out_root / name
    text, parts = estimate(binary, config, out, extra)
    argv = [binary, "run", "--config", config, "--output", str(out), *extra]
    wall, readings, code = run_on_pty(argv, out_root / f"{name}.log")
    ratios = " to ".join(f"{p / wall:.2f}" for p in parts if p)
    etas = ", ".join(
        f"{int(s * 100)}%: {r:.2f}" if (r := eta_at(readings, wall, s)) else f"{int(s * 100)}%: -"
        for s in (0.25, 0.5, 0.75)
    )
    print(
        f"{name}: estimate {text}; wall {wall:.0f} s (exit {code}); estimate/wall {ratios}; "
        f"(elapsed+ETA)/wall at {etas}",
        flush=True,
    )


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1 :] if "--" in args else []
    args = args[: args.index("--")] if "--" in args else args
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.environ.get("AUGBENCH_BIN", "target/release/augbench"))
    p.add_argument("--out", default="output/plan_check")
    p.add_argument("configs", nargs="+")
    a = p.parse_args(args)
    out_root = Path(a.out)
    out_root.mkdir(parents=True, exist_ok=True)
    for config in a.configs:
        check(a.bin, config, out_root, extra)


if __name__ == "__main__":
    main()
