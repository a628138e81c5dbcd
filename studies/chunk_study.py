#!/usr/bin/env python3
"""How finely should two A/B variants alternate? (docs/ab.md, "Chunked rounds"). Two worker
processes run Pillow's GaussianBlur over the same 50 synthetic 640×480 images; the parent times one
run of each (the thread CPU time of 50 items) with the variants alternating every CHUNK items, for
CHUNK in 50 (whole runs, as interleaved rounds did), 10 and 2, the chunk sizes in a seeded
shuffled order in every round. Both workers run the same code, so every ln ratio is noise. Prints,
per chunk size, the round-to-round sd of the ln ratio within a worker pair and the sd of the
pairs' means.

    python studies/chunk_study.py [pairs=6] [rounds=4]     (in an environment with Pillow and numpy)
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import time
from multiprocessing import Pipe, Process

import numpy as np
from PIL import Image, ImageFilter

CHUNKS = (50, 10, 2)
ITEMS = 50


def images() -> list[Image.Image]:
    rng = np.random.default_rng(1)
    return [Image.fromarray(rng.integers(0, 255, (480, 640, 3), dtype=np.uint8)) for _ in range(ITEMS)]


def worker(conn) -> None:
    items, blur = images(), ImageFilter.GaussianBlur(2)
    while (msg := conn.recv()) is not None:
        start, stop = msg
        t0 = time.thread_time_ns()
        for im in items[start:stop]:
            im.filter(blur).load()
        conn.send(time.thread_time_ns() - t0)


def one_run(pipes, chunk: int, order: list[int]) -> float:
    """ln(time of A ÷ time of B) over every item, alternating every `chunk` items."""
    total = [0, 0]
    for start in range(0, ITEMS, chunk):
        for who in order:
            pipes[who].send((start, start + chunk))
            total[who] += pipes[who].recv()
    return math.log(total[0] / total[1])


def main(pairs: int, rounds: int) -> None:
    rnd = random.Random(3)
    logs: dict[int, dict[int, list[float]]] = {c: {} for c in CHUNKS}
    for pair in range(pairs):
        ends = [Pipe() for _ in range(2)]
        procs = [Process(target=worker, args=(child,)) for _, child in ends]
        for p in procs:
            p.start()
        pipes = [parent for parent, _ in ends]
        for p in pipes:  # warm: two untimed passes each
            for _ in range(2):
                p.send((0, ITEMS))
                p.recv()
        for _ in range(rounds):
            for chunk in rnd.sample(CHUNKS, len(CHUNKS)):
                logs[chunk].setdefault(pair, []).append(one_run(pipes, chunk, rnd.sample([0, 1], 2)))
        for p in pipes:
            p.send(None)
        for p in procs:
            p.join()
    for chunk, by_pair in logs.items():
        within = math.sqrt(statistics.fmean(statistics.variance(v) for v in by_pair.values()))
        means = statistics.stdev(statistics.fmean(v) for v in by_pair.values())
        print(f"alternating every {chunk:2d} items: round sd of ln ratio {within:.4f}, "
              f"sd of pair means {means:.4f} ({pairs} pairs × {rounds} rounds)")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*(args + [6, 4][len(args):]))
