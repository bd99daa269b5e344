"""`dynid --help`, `dynid --version` and `dynid robots` load no heavy library: the command
modules import library code inside their handlers.

Each check runs in a fresh interpreter (this one has loaded everything). Start-up times are not
asserted: CI machines are busy.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# scipy.signal loads scipy.stats: 2-5 s of `robot show` and `base` before (issue 31)
HEAVY = ("numba", "pinocchio", "cvxpy", "sympy", "matplotlib", "dynid.bench.dynamics",
         "dynid.workflow.demo", "scipy.signal")


def _loaded_heavy(argv: list[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The modules of ``heavy`` loaded after `dynid ARGV` (which must succeed)."""
    script = (
        "import sys\n"
        "from dynid.cli import main\n"
        "try:\n"
        f"    status = main({argv!r})\n"
        "except SystemExit as exit_:\n"
        "    status = exit_.code\n"
        "assert status == 0, status\n"
        f"print('loaded:' + ','.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.strip().splitlines()[-1].removeprefix("loaded:")
    return [m for m in loaded.split(",") if m]


@pytest.mark.parametrize("argv", [["robots"], ["robots", "--json"], ["--help"], ["--version"],
                                  ["identify", "--help"], ["robot", "show", "--help"]])
def test_start_up_loads_nothing_heavy(argv):
    assert _loaded_heavy(argv) == []


def test_robot_show_loads_numba_only():
    """The base-parameter count needs the compiled regressor (numba), and nothing else heavy;
    and the check above does see a heavy import."""
    assert _loaded_heavy(["robot", "show", "panda"]) == ["numba"]


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["identify", "--help"],
                                  ["retrieve", "--help"]])
def test_help_loads_no_numpy(argv):
    """Help and version are argparse alone: not even numpy (0.1 s of every start-up)."""
    assert _loaded_heavy(argv, ("numpy", "yaml", *HEAVY)) == []
