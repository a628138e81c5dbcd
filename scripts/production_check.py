#!/usr/bin/env python3
"""Production cells, checked against peers measured in the same script (docs/pipeline.md,
"Production cells"). Three checks, each interleaved so a drift of the machine cancels out:

  fidelity  augbench's cell against a hand-written DataLoader loop doing the same recipe
            (--recipes, rows of the catalog: HorizontalFlip is RandomCrop224 → HorizontalFlip,
            Resize and RandomResizedCrop their one stage; per-sample CHW uint8, normalized and
            cast to float16 on the batch), written out here as a user would, for each library of
            --library at each --shapes (photos x batch): augbench / hand-written, A-B then B-A
            over --rounds.
  memory    the cells' peak PSS against an independent sampler: this script sums
            /proc/<pid>/smaps_rollup PSS over the worker's process tree every 50 ms while
            `augbench production` runs, and compares its peak with the largest cell peak.
  cost      throughput with the memory sampler and without it (`memory: false`), alternating
            runs (A-B, then B-A): the median per-cell ratio and its spread; and the sampler's own
            CPU time (`reading_cpu_ms`) as a share of the machine's CPU over the time it sampled
            (`span_ms` × CPUs): what it can take from a loader that keeps every CPU busy, a bound
            read in every cell rather than a difference of two noisy throughputs.

    python3 scripts/production_check.py [--augbench target/release/augbench] [--check fidelity,memory,cost]
        [--library albumentationsx[,torchvision]] [--recipes HorizontalFlip[,Resize,RandomResizedCrop]]
        [--shapes 60x16,60x32,200x16,200x32] [--rounds 2]

The parent uses only the standard library; it re-runs this file with the library environment's
Python (``augbench env python <group>``) for the hand-written loop.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GROUPS = {"albumentationsx": "albumentationsx", "torchvision": "torch_stack"}
RECIPES = ("HorizontalFlip", "Resize", "RandomResizedCrop")  # rows the hand-written loop writes out
WORKERS, WARMUP, MEASURED = 2, 2, 48
COST_MEASURED = 64  # longer cells: the sampler's cost is a few percent at most
CHILD_FLAG = "--hand-written-child"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--augbench", default=str(REPO / "target" / "release" / "augbench"))
    p.add_argument("--check", default="fidelity,memory,cost")
    p.add_argument("--library", default="albumentationsx",
                   help=f"comma-separated, of {', '.join(sorted(GROUPS))} (memory and cost use the first)")
    p.add_argument("--recipes", default=RECIPES[0], help=f"fidelity: comma-separated rows, of {', '.join(RECIPES)}")
    p.add_argument("--shapes", default="60x16,60x32,200x16,200x32", help="fidelity: photos x batch, comma-separated")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--measured", type=int, default=MEASURED,
                   help="fidelity: measured batches of each side (longer windows, less noise per pair)")
    args = p.parse_args(argv)
    args.libraries = args.library.split(",")
    args.library = args.libraries[0]
    for name in args.libraries:
        if name not in GROUPS:
            p.error(f"--library {name}: not one of {', '.join(sorted(GROUPS))}")
    args.recipes = args.recipes.split(",")
    for row in args.recipes:
        if row not in RECIPES:
            p.error(f"--recipes {row}: not one of {', '.join(RECIPES)}")
    try:
        args.shapes = [tuple(int(x) for x in shape.split("x")) for shape in args.shapes.split(",")]
    except ValueError:
        args.shapes = []
    if not args.shapes or any(len(shape) != 2 or min(shape) < 1 for shape in args.shapes):
        p.error("--shapes: write photos x batch, comma-separated, e.g. 60x16,200x32")
    return args


def config(folder: Path, data: Path, implementations: list[str], recipes: list[str], batch: int, memory: bool, measured: int = MEASURED) -> Path:
    path = folder / "production.yaml"
    path.write_text(
        "version: 1\nproduction:\n"
        f"  implementations: [{', '.join(implementations)}]\n  recipes: [{', '.join(recipes)}]\n  seeds: [137]\n"
        f"  batch_size: {batch}\n  warmup_batches: {WARMUP}\n  measured_batches: {measured}\n  workers: {WORKERS}\n"
        f"  memory: {'true' if memory else 'false'}\n"
        f"data:\n  data_dir: {data}\noutput:\n  output_dir: {folder / 'out'}\n"
    )
    return path


def run_cells(binary: str, cfg: Path) -> list[dict]:
    """Runs `augbench production` on a fresh output folder and returns its cells."""
    subprocess.run([binary, "production", "--no-refresh-requirements", "--config", str(cfg)], check=True, capture_output=True)
    return [json.loads(p.read_text()) for p in sorted((cfg.parent / "out").glob("runs/*/cells/*/*/seed-*.json"))]


def fresh(tmp: Path, name: str) -> Path:
    folder = tmp / name
    folder.mkdir(parents=True)
    return folder


def dataset(binary: str, tmp: Path, n: int) -> Path:
    folder = tmp / f"data{n}"
    if folder.is_dir():
        return folder
    subprocess.run([binary, "data", "synth", "--out", str(folder), "--n", str(n)], check=True, capture_output=True)
    return folder


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f}, range {min(values):.3f}–{max(values):.3f}"


# ----- fidelity -------------------------------------------------------------------------------
def fidelity(args: argparse.Namespace, tmp: Path) -> None:
    worst = 0.0
    for library in args.libraries:
        python = subprocess.run([args.augbench, "env", "python", GROUPS[library]], check=True, capture_output=True, text=True).stdout.strip()
        for row in args.recipes:
            print(f"fidelity: {library} {row} recipe, {WORKERS} workers, {WARMUP} warm-up + {args.measured} measured batches")
            for items, batch in args.shapes:
                ratios = fidelity_pairs(args, tmp, python, library, row, items, batch)
                worst = max(worst, *(abs(x - 1) for x in ratios))
                print(f"  {items:4} photos, batch {batch:3}: augbench / hand-written {spread(ratios)}", flush=True)
    print(f"  largest |ratio - 1|: {worst:.3f} ({'within' if worst <= 0.10 else 'OUTSIDE'} ±10%)")


def fidelity_pairs(args: argparse.Namespace, tmp: Path, python: str, library: str, row: str, items: int, batch: int) -> list[float]:
    data = dataset(args.augbench, tmp, items)
    ratios = []
    for r in range(args.rounds):  # A-B, then B-A: neither side always runs first
        cfg = config(fresh(tmp, f"f{library}_{row}_{items}_{batch}_{r}"), data, [f"{library}_cpu"], [row], batch, memory=False,
                     measured=args.measured)
        cmd = [python, __file__, CHILD_FLAG, library, row, str(data), str(batch), str(args.measured)]

        def hand_rate() -> float:
            done = subprocess.run(cmd, check=True, capture_output=True, text=True)
            return json.loads(done.stdout.strip().splitlines()[-1])

        hand = hand_rate() if r % 2 else 0.0
        ours = run_cells(args.augbench, cfg)[0]["items_per_sec"]
        hand = hand or hand_rate()
        ratios.append(ours / hand)
        print(f"  {items:4} photos, batch {batch:3}: augbench {ours:7.0f}, hand-written {hand:7.0f} img/s: {ours / hand:.3f}", flush=True)
    return ratios


def hand_written(library: str, row: str, folder: str, batch: int, measured: int) -> float:
    """A training loader as a user writes it, for the recipe of `row` (the catalog's stages and
    parameters) → uint8 CHW, normalized and cast to float16 on the batch; the same sampler
    semantics as a production cell (one seeded permutation, repeated), the same warm-up and
    measured batches."""
    import random

    import numpy as np
    import torch
    from torch.utils.data import DataLoader, Dataset, Sampler

    paths = sorted(str(p) for p in Path(folder).iterdir() if p.suffix.lower() in (".jpg", ".jpeg"))
    if library == "albumentationsx":
        import albumentations as A
        import cv2

        stages = {
            "HorizontalFlip": [A.RandomCrop(224, 224, pad_if_needed=True), A.HorizontalFlip(p=1)],
            "Resize": [A.Resize(224, 224, interpolation=cv2.INTER_LINEAR, p=1)],
            "RandomResizedCrop": [A.RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), ratio=(0.75, 4 / 3),
                                                      interpolation=cv2.INTER_LINEAR, p=1)],
        }
        recipe = A.Compose(stages[row], seed=137)

        def sample(path):
            out = recipe(image=cv2.imread(path, cv2.IMREAD_COLOR_RGB))["image"]
            return torch.from_numpy(np.ascontiguousarray(out)).permute(2, 0, 1).contiguous()
    else:
        from torchvision.io import ImageReadMode, decode_image
        from torchvision.transforms import v2

        bilinear = v2.InterpolationMode.BILINEAR
        stages = {
            "HorizontalFlip": [v2.RandomCrop(224, pad_if_needed=True), v2.RandomHorizontalFlip(p=1)],
            "Resize": [v2.Resize((224, 224), interpolation=bilinear, antialias=True)],
            "RandomResizedCrop": [v2.RandomResizedCrop((224, 224), scale=(0.08, 1.0), ratio=(0.75, 4 / 3),
                                                       interpolation=bilinear, antialias=True)],
        }
        recipe = v2.Compose(stages[row])

        def sample(path):
            return recipe(decode_image(path, mode=ImageReadMode.RGB)).contiguous()

    class Files(Dataset):
        def __len__(self):
            return len(paths)

        def __getitem__(self, i):
            return sample(paths[i])

    class Repeated(Sampler):
        def __init__(self):
            self.order = list(range(len(paths)))
            random.Random(137).shuffle(self.order)

        def __iter__(self):
            while True:
                yield from self.order

    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    loader = DataLoader(Files(), batch_size=batch, sampler=Repeated(), num_workers=WORKERS, prefetch_factor=2,
                        persistent_workers=True, drop_last=True)
    batches = iter(loader)

    def take():
        return next(batches).float().div_(255).sub_(mean).div_(std).half()

    for _ in range(WARMUP):
        take()
    started = time.perf_counter()
    for _ in range(measured):
        take()
    return measured * batch / (time.perf_counter() - started)


# ----- memory ---------------------------------------------------------------------------------
def tree(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(int(name))
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(parents.get(pid, []))
    return found


def pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0


def workers_of(root: int) -> list[int]:
    """The Python workers among `root`'s children (each is a cell's process-tree root)."""
    out = []
    for pid in tree(root)[1:]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"augbench_worker" in f.read() and pss(pid):
                    out.append(pid)
        except OSError:
            continue
    return out


def memory(args: argparse.Namespace, tmp: Path) -> None:
    data = dataset(args.augbench, tmp, 200)
    implementations = [f"{lib}_cpu" for lib in GROUPS]
    cfg = config(fresh(tmp, "memory"), data, implementations, ["Resize", "HorizontalFlip", "GaussianBlur"], 16, memory=True, measured=32)
    peaks: dict[int, int] = {}
    child = subprocess.Popen([args.augbench, "production", "--no-refresh-requirements", "--config", str(cfg)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def sample() -> None:
        while child.poll() is None:
            for worker in workers_of(child.pid):
                total = sum(pss(p) for p in tree(worker))
                peaks[worker] = max(peaks.get(worker, 0), total)
            time.sleep(0.05)

    thread = threading.Thread(target=sample)
    thread.start()
    child.wait()
    thread.join()
    cells = [json.loads(p.read_text()) for p in sorted((cfg.parent / "out").glob("runs/*/cells/*/*/seed-*.json"))]
    ours = max(c["memory"]["peak_pss_bytes"] for c in cells if c["status"] == "ok")
    theirs = max(peaks.values()) if peaks else 0
    print(f"memory: largest cell peak PSS {ours / 2**20:.0f} MiB; independent sampler (50 ms, worker trees) {theirs / 2**20:.0f} MiB: ratio {ours / max(theirs, 1):.3f}")
    for imp in implementations:
        mine = [c["memory"]["peak_pss_bytes"] / 2**20 for c in cells if c["id"]["implementation"] == imp and c["status"] == "ok"]
        print(f"  {imp}: cell peaks {', '.join(f'{m:.0f}' for m in mine)} MiB")


# ----- cost -----------------------------------------------------------------------------------
def cost(args: argparse.Namespace, tmp: Path) -> None:
    data = dataset(args.augbench, tmp, 200)
    recipes = ["Resize", "HorizontalFlip", "GaussianBlur", "Rotate"]
    by_mode: dict[bool, list[list[float]]] = {True: [], False: []}
    shares: list[float] = []
    for r in range(args.rounds):
        for memory_on in ((True, False) if r % 2 == 0 else (False, True)):  # A-B, then B-A
            cfg = config(fresh(tmp, f"cost{r}{memory_on}"), data, [f"{args.library}_cpu"], recipes, 16, memory=memory_on, measured=COST_MEASURED)
            cells = run_cells(args.augbench, cfg)
            by_mode[memory_on].append([c["items_per_sec"] for c in cells])
            if memory_on:
                shares += [s for s in map(sampler_share, cells) if s is not None]
    ratios = [on / off for ons, offs in zip(by_mode[True], by_mode[False]) for on, off in zip(ons, offs)]
    print(f"cost: {args.library}, {len(recipes)} recipes × {args.rounds} rounds, with / without the sampler: {spread(ratios)}")
    if shares:
        print(f"cost: the sampler's CPU over the time it sampled, as a share of all {os.cpu_count()} CPUs: "
              f"{spread(shares)} (a loader that keeps every CPU busy loses at most that, plus cache effects)")


def sampler_share(cell: dict) -> float | None:
    """The sampler's CPU time as a share of the machine's CPU over the cell's sampled span."""
    m = cell.get("memory") or {}
    span, cpu = m.get("span_ms") or 0, m.get("reading_cpu_ms")
    if span <= 0 or cpu is None:
        return None
    return cpu / (span * (os.cpu_count() or 1))


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    checks = {"fidelity": fidelity, "memory": memory, "cost": cost}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.check.split(","):
            checks[name](args, Path(tmp))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == CHILD_FLAG:
        library, row, folder, batch, measured = sys.argv[2:7]
        print(json.dumps(hand_written(library, row, folder, int(batch), int(measured))))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
