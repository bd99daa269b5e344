"""The README's flow on every arm dynid loads (issue 22): robot show -> excite -> simulate ->
identify (ols, cls3) -> save -> validate -> report -> export -> codegen (compiled with
``-Wall -Werror``) -> retrieve -> detect, with no option the README does not show.

The arms: every one ``dynid robots`` lists, a Kinova-Gen3-like vendor description (an MDH table
with its real small offsets and rounded twists, continuous joints, no acceleration limits,
inertias that miss physical consistency by rounding on links 1 and 5) and a UR5 DH table with
its twists rounded to 1.5708. Each command runs in-process through ``dynid.cli.main``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings

import numpy as np
import pytest
import yaml
from conftest import with_physical_margin

from dynid.cli import main
from dynid.model.linear_model import load_model
from dynid.robot import RoundedInertiaWarning, load_robot
from dynid.robot.inertia import physical_margin


def _listed() -> list[str]:
    """The names ``dynid robots --json`` lists (example-robot-data's when it is installed)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["robots", "--json"]) == 0
    payload = json.loads(out.getvalue())
    return [row["name"] for row in payload["robots"]
            if row["source"] == "dynid" or payload["example_robot_data"]["installed"]]


def _gen3_like(folder) -> str:
    """A Gen3-like robot file as a vendor publishes it: MDH rows with d = -0.0117, -0.0128,
    -0.00035 m and a 6e-17 entry, twists rounded to 1.5708, joints 1, 3, 5, 7 continuous, no
    acceleration limits, and links 1 and 5 at pseudo-inertia margins of -0.4 % and -1 %."""
    half = 1.5708
    rows = [(0.0, 3.1416, -0.2848), (0.0, half, -0.0117), (0.0, -half, -0.4208),
            (6e-17, half, -0.0128), (0.0, -half, -0.3143), (0.0, half, -0.00035),
            (0.0, -half, -0.1674)]
    masses = (1.3773, 1.1636, 1.1636, 0.9302, 0.6781, 0.6781, 0.5006)
    com = ((0.0, -0.0104, -0.0734), (0.0, -0.0996, -0.0133), (0.0, -0.0066, -0.1179),
           (0.0, -0.0755, -0.0150), (0.0, -0.0094, -0.0639), (0.0, -0.0455, -0.0097),
           (0.0, 0.0001, -0.0229))
    inertia = ((0.00457, 0.0, 0.0, 0.004831, 0.000448, 0.001409),
               (0.011088, 0.0, 0.0, 0.001072, -0.000691, 0.011255),
               (0.010932, 0.0, 0.0, 0.011127, 0.000606, 0.001043),
               (0.008147, 0.0, 0.0, 0.000631, -0.0005, 0.008316),
               (0.001596, 0.0, 0.0, 0.001607, 0.000256, 0.000399),
               (0.001641, 0.0, 0.0, 0.00041, -0.000278, 0.001641),
               (0.000587, 0.0, 0.0, 0.000369, -0.000118, 0.000609))
    continuous = float("inf")
    spec = {
        "schema": "dynid-robot/1", "name": "gen3-like",
        "description": "Kinova Gen3-like 7-DoF arm as a vendor description gives it",
        "kinematics": {"convention": "mdh", "joints": [
            {"name": f"joint_{k + 1}", "type": "revolute", "a": a, "alpha": alpha, "d": d,
             "theta": 0.0} for k, (a, alpha, d) in enumerate(rows)]},
        "gravity": [0.0, 0.0, -9.81],
        "limits": {
            "position": {"lower": [-continuous, -2.41, -continuous, -2.66, -continuous, -2.23,
                                   -continuous],
                         "upper": [continuous, 2.41, continuous, 2.66, continuous, 2.23,
                                   continuous]},
            "velocity": [1.39, 1.39, 1.39, 1.39, 1.22, 1.22, 1.22],
            "torque": [39.0, 39.0, 39.0, 39.0, 9.0, 9.0, 9.0]},
        "inertia": {"frame": "link", "about": "com", "links": [
            {"name": f"link_{k + 1}", "mass": m, "com": list(c), "inertia": list(i)}
            for k, (m, c, i) in enumerate(zip(masses, com, inertia, strict=True))]},
    }
    path = folder / "gen3.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    # links 1 and 5 as rounding leaves them: just outside physical consistency
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RoundedInertiaWarning)
        robot = load_robot(path)
    parameters = robot.parameters.copy()
    for k, margin in ((0, -0.004), (4, -0.01)):
        parameters[k] = with_physical_margin(parameters[k], margin)
    from dynid.robot import robot_to_dict

    spec["inertia"] = robot_to_dict(robot.with_parameters(parameters))["inertia"]
    spec["inertia"].pop("physical", None)  # a vendor makes no claim either way
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return str(path)


def _ur5_rounded(folder) -> str:
    """UR5's DH table with its twists rounded to 1.5708, and UR5's published limits."""
    d = (0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823)
    a = (0.0, -0.425, -0.39225, 0.0, 0.0, 0.0)
    twist = (1.5708, 0.0, 0.0, 1.5708, -1.5708, 0.0)
    masses = (3.7, 8.393, 2.275, 1.219, 1.219, 0.1879)
    com = ((0.0, -0.02561, 0.00193), (0.2125, 0.0, 0.11336), (0.15, 0.0, 0.0265),
           (0.0, -0.0018, 0.01634), (0.0, 0.0018, 0.01634), (0.0, 0.0, -0.001159))
    spec = {
        "schema": "dynid-robot/1", "name": "ur5-rounded",
        "description": "UR5, DH table with rounded twists",
        "kinematics": {"convention": "dh", "joints": [
            {"name": f"j{k + 1}", "type": "revolute", "a": a[k], "alpha": twist[k],
             "d": d[k], "theta": 0.0} for k in range(6)]},
        "gravity": [0.0, 0.0, -9.81],
        "limits": {"position": {"lower": [-6.2832] * 6, "upper": [6.2832] * 6},
                   "velocity": [3.1416] * 6, "torque": [150.0, 150.0, 150.0, 28.0, 28.0, 28.0]},
        "inertia": {"frame": "link", "about": "com", "links": [
            {"name": f"l{k + 1}", "mass": masses[k], "com": list(com[k]),
             "inertia": [0.01 * masses[k], 0.0, 0.0, 0.01 * masses[k], 0.0,
                         0.006 * masses[k]]} for k in range(6)]},
    }
    path = folder / "ur5-rounded.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return str(path)


_WRITTEN = {"gen3-like": _gen3_like, "ur5-rounded": _ur5_rounded}


def _run(*argv: str) -> None:
    __tracebackhide__ = True
    status = main([*argv, *(["--quiet"] if argv[0] in ("excite", "compare") else [])])
    assert status == 0, f"dynid {' '.join(argv)} exited with {status}"


@pytest.mark.parametrize("arm", [*_WRITTEN, *_listed()])
def test_readme_flow_runs_on_every_arm(arm, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    robot = _WRITTEN[arm](tmp_path) if arm in _WRITTEN else arm
    with warnings.catch_warnings():
        # a vendor's rounded inertias load with their one warning; nothing else is expected
        warnings.simplefilter("ignore", RoundedInertiaWarning)
        _run("robot", "show", robot)
        for name, seed in (("traj", "0"), ("check", "1")):
            _run("excite", robot, "-o", f"{name}.csv", "--harmonics", "3", "--period", "4",
                 "--starts", "1", "--iterations", "3", "--seed", seed)
        _run("simulate", robot, "traj.yaml", "--noise", "0.1", "--velocity-from-positions",
             "-o", "log.csv")
        _run("simulate", robot, "check.yaml", "--noise", "0.1", "--velocity-from-positions",
             "-o", "check_log.csv")
        _run("identify", robot, "log.csv", "--method", "ols", "-o", "ols.yaml")
        _run("identify", robot, "log.csv", "--method", "cls3", "-o", "cls3.yaml")
        for model in ("ols.yaml", "cls3.yaml"):
            _run("validate", model, "check_log.csv")
        _run("report", "cls3.yaml", "check_log.csv", "--identification", "log.csv",
             "-o", "report.html")
        _run("export", "cls3.yaml", "-o", "identified.urdf")
        _run("codegen", "cls3.yaml", "-o", "arm.h")
        _run("retrieve", robot, "ols.yaml", "-o", "retrieved.yaml")
        _run("validate", "retrieved.yaml", "check_log.csv")
        _run("detect", "cls3.yaml", "check_log.csv", "--calibration", "log.csv")
    # what each step wrote is what the next one reads: a full, consistent set stays one
    cls3 = load_model(tmp_path / "cls3.yaml")
    assert cls3.physical_parameters is not None
    assert (physical_margin(cls3.physical_parameters) > -1e-9).all()
    assert load_model(tmp_path / "retrieved.yaml").physical_parameters is not None
    load_robot(tmp_path / "identified.urdf")
    compiler = shutil.which("cc")
    if compiler is not None:  # test_codegen says when there is none
        subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                        "-c", "arm.c", "-o", "arm.o"], check=True, cwd=tmp_path)
    assert np.isfinite(np.loadtxt(tmp_path / "check_log.csv", delimiter=",",
                                  skiprows=1)).all()
