"""Entry point: ``python -m augbench_worker --library <name> [--spec FILE.py]``.

Order matters: first the protocol stream is claimed (so nothing a library prints reaches the
coordinator's stdout), then the thread variables are asserted (numpy's BLAS reads them when it
loads), and only then is anything else imported.
"""

from augbench_worker import protocol

PROTOCOL_OUT = protocol.claim_stdout()

from augbench_worker import threads  # noqa: E402 - stdlib only, after claiming stdout

try:
    POLICY, POLICY_ERROR = threads.read_policy(), None
except threads.PolicyError as exc:
    POLICY, POLICY_ERROR = threads.SINGLE, str(exc)
THREAD_ENV = threads.apply_env(POLICY)
PINNED = threads.pin_cpu()  # before any import can start a thread
if PINNED is not None:
    THREAD_ENV[threads.PIN_CPU_VAR] = str(PINNED)  # reported in hello, kept in the results

import argparse  # noqa: E402
import sys  # noqa: E402

from augbench_worker.adapters import LIBRARIES  # noqa: E402 - registry only, no library import
from augbench_worker.worker import Worker  # noqa: E402


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m augbench_worker", description=__doc__)
    parser.add_argument("--library", choices=sorted(LIBRARIES), help="library to serve")
    parser.add_argument("--spec", help="custom spec file defining LIBRARY, __call__ and TRANSFORMS")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    worker = Worker(args.library, args.spec, POLICY, THREAD_ENV, POLICY_ERROR)
    return protocol.serve(PROTOCOL_OUT, worker.handle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
