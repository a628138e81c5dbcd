"""Entry point: ``python -m augbench_clips JOB.json`` (see ``augbench_clips.decode``)."""

import sys

from augbench_clips.decode import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
