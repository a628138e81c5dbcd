#!/usr/bin/env python3
"""Pipeline fidelity: does augbench's pipeline row say what a hand-written training loader does?

For AlbumentationsX and torchvision, RandomCrop224 and HorizontalFlip recipes, 2 loader workers,
batches of 32, 200 synthetic images: (a) `augbench run` in pipeline mode (median img/s from its
results JSON), (b) a hand-written PyTorch DataLoader loop in the library's own environment, with
the recipe written out here as a user would (not through augbench's adapters), (a) again. The
ratio augbench / hand-written uses medians over the augbench runs and the hand-written loops,
which alternate (A-B-A, or A-B-A-B-A with `--rounds 2`), so a drift of the machine cancels out. Beside each row: the decode ceiling, the same files decoded by the same
decoder in the same loader with nothing else, so a row reads "x% of what decoding alone allows".

The hand-written loop runs twice: over an endless sampler (what augbench times: no epoch
boundary inside a window), and as a training loop usually is written, epoch after epoch over a
shuffled dataset (`for batch in loader`), whose loader drains at every epoch's end. The second
ratio shows what a small dataset's epoch boundaries cost, which augbench's steady state leaves out.

    python3 scripts/pipeline_fidelity.py [--augbench target/release/augbench] [--num-items 200]
        [--batch 32] [--rounds 1] [--libraries albumentationsx,torchvision]

The parent uses only the standard library; it re-runs this file with each environment's Python
(``augbench env python <group>``) for the hand-written loops.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIBRARIES = {"albumentationsx": "albumentationsx", "torchvision": "torch_stack"}
TRANSFORMS = ("RandomCrop224", "HorizontalFlip")
WORKERS, RUNS = 2, 3
WARM_BATCHES, TIMED_BATCHES = 16, 48  # augbench here: 16 untimed, then 3 windows of 16
CHILD_FLAG = "--fidelity-child"
TOLERANCE = 0.05


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--augbench", default=str(REPO / "target" / "release" / "augbench"), help="augbench binary")
    p.add_argument("--num-items", type=int, default=200)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--rounds", type=int, default=1, help="hand-written loops, each between two augbench runs (medians)")
    p.add_argument("--libraries", default=",".join(LIBRARIES))
    return p.parse_args(argv)


def augbench_rate(binary: str, library: str, transform: str, items: int, batch: int, out: Path) -> tuple[float, str]:
    out.mkdir(parents=True, exist_ok=True)
    config = out / "pipeline.yaml"
    config.write_text(
        "version: 1\nselection: {scenario: image-rgb, mode: pipeline}\n"
        f"execution: {{workers: {WORKERS}, batch_size: {batch}, num_runs: {RUNS}, schedule: sequential}}\n"
    )
    cmd = [binary, "run", "--config", str(config), "--libraries", library, "--transforms", transform]
    cmd += ["--num-items", str(items), "--output", str(out), "--no-refresh-requirements"]
    subprocess.run(cmd, check=True, capture_output=True)
    (path,) = out.glob(f"image-rgb/pipeline/{library}_*_results.json")
    data = json.loads(path.read_text())
    return data["results"][transform]["median_throughput"], data["metadata"]["dataset"]["path"]


def child_rates(python: str, library: str, transform: str, folder: str, items: int, batch: int) -> dict[str, float]:
    cmd = [python, __file__, CHILD_FLAG, library, transform, folder, str(items), str(batch)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def listed(rates) -> str:
    return ", ".join(f"{x:.0f}" for x in rates)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    per_epoch = args.num_items // args.batch
    print(f"{WORKERS} workers, batch {args.batch}, {args.num_items} items: {per_epoch} batches an epoch (drop_last)")
    print(f"{'library':16} {'transform':15} {'augbench':>9} {'endless':>9} {'ratio':>7} {'epochs':>9} {'ratio':>7} {'decode only':>12} {'of ceiling':>10}")
    worst = 0.0
    for library in args.libraries.split(","):
        group = LIBRARIES[library]
        python = subprocess.run([args.augbench, "env", "python", group], check=True, capture_output=True, text=True).stdout.strip()
        for transform in TRANSFORMS:
            ours, hands = [], []
            with tempfile.TemporaryDirectory() as tmp:
                for i in range(args.rounds):  # A-B-…-A: each hand-written loop between two augbench runs
                    rate, folder = augbench_rate(args.augbench, library, transform, args.num_items, args.batch, Path(tmp) / f"a{i}")
                    ours.append(rate)
                    hands.append(child_rates(python, library, transform, folder, args.num_items, args.batch))
                ours.append(augbench_rate(args.augbench, library, transform, args.num_items, args.batch, Path(tmp) / "last")[0])
            a = statistics.median(ours)
            hand = {k: statistics.median(h[k] for h in hands) for k in hands[0]}
            ratio, by_epoch = a / hand["recipe"], a / hand["epochs"]
            worst = max(worst, abs(ratio - 1))
            print(
                f"{library:16} {transform:15} {a:9.0f} {hand['recipe']:9.0f} {ratio:7.3f} {hand['epochs']:9.0f} {by_epoch:7.3f} "
                f"{hand['decode']:12.0f} {a / hand['decode']:9.0%}   (augbench {listed(ours)}; endless {listed(h['recipe'] for h in hands)})"
            )
    verdict = "within" if worst <= TOLERANCE else "OUTSIDE"
    print(f"largest |ratio - 1| against the endless loop: {worst:.3f} ({verdict} ±{TOLERANCE:.0%})")
    return 0


# ----- child: the hand-written loader, in the library's environment --------------------------------
def hand_written(library: str, transform: str, folder: str, items: int, batch: int) -> dict[str, float]:
    import time

    import torch
    from torch.utils.data import DataLoader, Dataset, RandomSampler

    paths = sorted(str(p) for p in Path(folder).iterdir() if p.suffix.lower() in (".jpg", ".jpeg"))[:items]
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    if library == "albumentationsx":
        import albumentations as A
        import cv2
        from albumentations.pytorch import ToTensorV2

        crop = [A.RandomCrop(224, 224, pad_if_needed=True)]
        flip = [A.HorizontalFlip(p=1)] if transform == "HorizontalFlip" else []
        recipe = A.Compose([*crop, *flip, A.Normalize(mean=mean, std=std), ToTensorV2()])

        def read(path):
            return cv2.imread(path, cv2.IMREAD_COLOR_RGB)

        def apply(image):
            return recipe(image=image)["image"]
    else:
        from torchvision.io import ImageReadMode, decode_image
        from torchvision.transforms import v2

        flip = [v2.RandomHorizontalFlip(p=1)] if transform == "HorizontalFlip" else []
        recipe = v2.Compose([v2.RandomCrop(224, pad_if_needed=True), *flip, v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])

        def read(path):
            return decode_image(path, mode=ImageReadMode.RGB)

        apply = recipe

    class Files(Dataset):
        def __init__(self, fn):
            self.fn = fn

        def __len__(self):
            return len(paths)

        def __getitem__(self, i):
            return self.fn(read(paths[i]))

    def rate(fn, collate=None) -> float:
        sampler = RandomSampler(range(len(paths)), replacement=True, num_samples=10**9, generator=torch.Generator().manual_seed(0))
        loader = DataLoader(Files(fn), batch_size=batch, sampler=sampler, num_workers=WORKERS, persistent_workers=True, drop_last=True, collate_fn=collate)
        batches = iter(loader)
        for _ in range(WARM_BATCHES):
            next(batches)
        started = time.perf_counter()
        for _ in range(TIMED_BATCHES):
            next(batches)
        return TIMED_BATCHES * batch / (time.perf_counter() - started)

    def epochs_rate(fn) -> float:
        """A training loop: epoch after epoch of a shuffled dataset; untimed first epoch."""
        generator = torch.Generator().manual_seed(0)
        loader = DataLoader(Files(fn), batch_size=batch, shuffle=True, generator=generator, num_workers=WORKERS, persistent_workers=True, drop_last=True)
        for _ in loader:
            pass
        done, started = 0, time.perf_counter()
        while done < TIMED_BATCHES:
            for _ in loader:
                done += 1
        return done * batch / (time.perf_counter() - started)

    return {"recipe": rate(apply), "epochs": epochs_rate(apply), "decode": rate(lambda image: 0, collate=len)}


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == CHILD_FLAG:
        library, transform, folder, items, batch = sys.argv[2:7]
        print(json.dumps(hand_written(library, transform, folder, int(items), int(batch))))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
