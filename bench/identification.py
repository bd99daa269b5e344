"""Wall time and peak memory of identification (Panda): OLS from 1e5 twin samples (regressor,
friction columns, base reduction, solve) and reverse engineering from 1010 poses of M, g.

Targets on the 2-core machine: <= 2 s and <= 1 s. Writes
``bench/results/<date>-<robot>-identification.json``. Run with ``make bench``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from dynid._files import atomic_write
from dynid.bench import format_identification, run_identification_bench


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--robot", default="panda")
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--poses", type=int, default=1010)
    args = parser.parse_args()
    result = run_identification_bench(robot=args.robot, n_samples=args.samples,
                                      n_poses=args.poses,
                                      progress=lambda line: print(line, file=sys.stderr))
    print(format_identification(result))
    folder = Path(__file__).resolve().parent / "results"
    folder.mkdir(exist_ok=True)
    path = folder / f"{datetime.date.today().isoformat()}-{args.robot}-identification.json"
    text = json.dumps(result, indent=2) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text))
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
