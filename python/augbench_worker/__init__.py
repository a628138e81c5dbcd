"""augbench Python worker: serves one augmentation library over the JSON-lines worker protocol.

Run as ``python -m augbench_worker --library <name> [--spec FILE.py]``; the protocol itself is
described in docs/protocol.md. This package file stays import-free so that ``__main__`` can claim
the protocol stream before anything else runs.
"""

PROTOCOL_VERSION = 1
