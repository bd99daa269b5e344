"""The dynid command: each verb, its JSON keys, and clean errors."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from dynid.cli import main
from dynid.cli.identify import UNCONVERGED_STATUS


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_robots(capsys):
    names = {row["name"] for row in _json(capsys, ["robots", "--json"])["robots"]}
    assert {"panda", "panda-cad", "jaco2", "arm3"} <= names
    assert main(["robots"]) == 0
    assert "panda" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "convention", "n", "base"), [
    ("panda", "mdh", 7, 43), ("arm3", "dh", 3, 15), ("jaco2", "dh", 7, 43),
])
def test_robot_show_json(capsys, name, convention, n, base):
    payload = _json(capsys, ["robot", "show", name, "--json"])
    assert {"name", "n_joints", "convention", "total_mass", "n_base_parameters"} <= set(payload)
    assert (payload["name"], payload["convention"], payload["n_joints"]) == (name, convention, n)
    assert payload["n_base_parameters"] == base
    assert payload["total_mass"] > 0
    assert len(payload["joints"]) == n


def test_robot_show_text_and_file(capsys, tmp_path):
    from dynid.robot import load_robot, save_robot

    assert main(["robot", "show", "panda"]) == 0
    text = capsys.readouterr().out
    assert "43 of 70" in text and "MDH" in text and "16.062 kg" in text
    save_robot(load_robot("arm3"), tmp_path / "mine.yaml")
    payload = _json(capsys, ["robot", "show", str(tmp_path / "mine.yaml"), "--json"])
    assert payload["name"] == "arm3"


def test_robot_show_urdf(capsys, tmp_path):
    path = tmp_path / "one.urdf"
    path.write_text(
        '<robot name="one"><link name="base"/><link name="a"><inertial><mass value="2"/>'
        '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
        '<joint name="j" type="continuous"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0 1"/></joint></robot>'
    )
    payload = _json(capsys, ["robot", "show", str(path), "--json"])
    assert (payload["convention"], payload["n_joints"], payload["total_mass"]) == ("urdf", 1, 2.0)
    assert payload["joints"][0]["lower"] is None  # continuous: no position limit
    assert main(["robot", "show", str(path)]) == 0


def test_unknown_robot_is_a_clean_error(capsys):
    assert main(["robot", "show", "nosuchrobot"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dynid: error:") and "nosuchrobot" in err
    assert "Traceback" not in err


def test_bench_json_keys(capsys):
    payload = _json(capsys, ["bench", "--json", "--sizes", "50", "--repeat", "1", "--quiet"])
    for key in ("regressor_us_per_sample", "pinocchio_regressor_us_per_sample",
                "regressor_speedup", "rnea_us_per_sample", "pinocchio_rnea_us_per_sample",
                "rnea_speedup"):
        assert payload[key] > 0, key
    assert payload["by_size"][0]["n_samples"] == 50


def test_bench_options_a_suite_does_not_take_are_refused(capsys, monkeypatch):
    """--robot, --sizes and --repeat reach the suites that use them, and are refused (not
    ignored) by the others; the benchmark suites run on the robot --robot names."""
    for argv, flag in ((["--suite", "estimators", "--robot", "panda"], "--robot"),
                       (["--suite", "codegen", "--repeat", "3"], "--repeat"),
                       (["--suite", "benchmark", "--sizes", "10"], "--sizes")):
        assert main(["bench", *argv]) == 2
        assert f"`{flag}` is for --suite" in capsys.readouterr().err
    import dynid.bench.benchmark as bench_benchmark

    seen = []
    monkeypatch.setattr(bench_benchmark, "run",
                        lambda robot, **options: seen.append(robot) or {})
    monkeypatch.setattr("dynid.cli.bench.print_json", lambda result: None)
    assert main(["bench", "--suite", "benchmark-quick", "--json"]) == 0
    assert main(["bench", "--suite", "benchmark", "--robot", "rv2sq", "--json"]) == 0
    assert seen == ["tx40", "rv2sq"]


def test_bench_scale_options_are_checked_before_any_work(capsys, tmp_path, monkeypatch):
    assert main(["bench", "--samples", "100000"]) == 2
    assert "`--samples` is for --suite scale" in capsys.readouterr().err
    assert main(["bench", "--suite", "scale", "--folder", str(tmp_path / "nowhere")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    import shutil
    from collections import namedtuple

    from dynid.bench.scale import run_scale_bench

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: usage(2**40, 2**40 - 2**30, 2**30))
    with pytest.raises(ValueError, match=r"need about 4\.3 GiB .* 1\.0 GiB are free"):
        run_scale_bench(n_samples=10**7, folder=tmp_path)  # 10^7 samples: 4.3 GiB, 1 free
    assert not list(tmp_path.iterdir())


def test_console_script_runs():
    script = Path(sys.executable).with_name("dynid")
    if not script.exists():
        pytest.skip(f"no installed `dynid` entry point beside {sys.executable}")
    result = subprocess.run([str(script), "robots"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "panda" in result.stdout


def test_base_json_and_symbolic(capsys):
    payload = _json(capsys, ["base", "arm3", "--json", "--symbolic"])
    assert payload["rank"] == 24 and payload["n_parameters"] == 39
    first = payload["base_parameters"][0]
    assert first["expression"] == "Iyy1 + 0.5 mx2 + Iyy2 + 0.5 mx3 + Iyy3"
    assert first["symbolic"] == "Iyy1 + Iyy2 + Iyy3 + a2*mx2 + a3*mx3"
    assert payload["classification"]["m1"] == "unidentifiable"
    static = _json(capsys, ["base", "panda", "--static", "--json"])
    assert static["rank"] == 43 and static["joint1_gravity_dropped"] is True
    assert main(["base", "panda", "--method", "qr"]) == 0
    assert "43 base parameters of 70" in capsys.readouterr().out


def test_identify_from_csv_writes_a_loadable_model(capsys, tmp_path):
    from dynid.data import write_dataset
    from dynid.excitation import random_fourier
    from dynid.model import load_model
    from dynid.robot import load_robot
    from dynid.simulate import SensorModel, simulate_open_loop

    robot = load_robot("arm3")
    data = simulate_open_loop(robot, random_fourier(robot, seed=5), duration=14.0, rate=200.0,
                              sensor=SensorModel(torque_noise_std=[0.5, 0.3, 0.7]), seed=1)
    write_dataset(tmp_path / "log.csv", data)
    out = tmp_path / "model.yaml"
    payload = _json(capsys, ["identify", "arm3", str(tmp_path / "log.csv"), "--method", "wls",
                             "--json", "-o", str(out)])
    assert payload["rank"] == 24 and payload["method"] == "wls"
    assert payload["friction"] == "arctan"  # the robot file's own linear model
    assert len(payload["rmse"]) == 3 and max(payload["rmse"]) < 1.0
    assert {"condition_number", "relative_error_percent", "coefficients"} <= set(payload)
    model = load_model(out)
    tau = model.predict(data.q, data.dq, data.ddq)
    assert np.sqrt(np.mean((tau - data.tau) ** 2)) < 1.0
    assert main(["identify", "arm3", str(tmp_path / "log.csv"), "--friction",
                 "viscous-coulomb", "--drop-above", "30"]) == 0
    assert "RMSE per joint" in capsys.readouterr().out


def test_identify_static_json(capsys, tmp_path):
    from dynid.dynamics import gravity_torque, mass_matrix
    from dynid.robot import load_robot

    robot = load_robot("panda")
    q = np.random.default_rng(0).uniform(robot.limits.lower, robot.limits.upper, (200, 7))
    np.savez(tmp_path / "static.npz", q=q, M=mass_matrix(robot, q), g=gravity_torque(robot, q))
    payload = _json(capsys, ["identify-static", "panda", str(tmp_path / "static.npz"),
                             "--json", "-o", str(tmp_path / "coefficients.yaml")])
    assert payload["rank"] == 43 and payload["n_samples"] == 200
    assert payload["relative_error_percent"] < 1e-9
    assert 10 < payload["condition_number"] < 1e4
    from dynid.model import load_model

    model = load_model(tmp_path / "coefficients.yaml")
    assert_close = np.testing.assert_allclose
    assert_close(model.mass_matrix(q[:3]), mass_matrix(robot, q[:3]), atol=1e-12)


def test_cli_option_mistakes_are_clean_errors(capsys, tmp_path):
    assert main(["base", "arm3", "--kv", "50"]) == 2
    assert "`--kv` and `--delta` shape the arctan model" in capsys.readouterr().err
    assert main(["base", "panda", "--static", "--friction", "arctan"]) == 2
    assert "no friction columns" in capsys.readouterr().err
    assert main(["identify", "arm3", "log.csv", "-o", str(tmp_path / "no" / "m.yaml")]) == 2
    assert "no/m.yaml': folder" in capsys.readouterr().err


def test_identify_bad_file_is_a_clean_error(capsys, tmp_path):
    (tmp_path / "log.csv").write_text("t,q1\n0,1\n")
    assert main(["identify", "arm3", str(tmp_path / "log.csv")]) == 2
    assert "dynid: error:" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::dynid.identification.IVConvergenceWarning")
def test_identify_iv_command(capsys, tmp_path):
    from dynid.data import write_dataset
    from dynid.excitation import random_fourier, save_trajectory
    from dynid.robot import load_robot
    from dynid.simulate import SensorModel, simulate_closed_loop

    robot = load_robot("arm3")
    reference = random_fourier(robot, seed=3)
    save_trajectory(tmp_path / "ref.csv", reference, duration=14.0, rate=200.0,
                    allow_moving_ends=True)
    data = simulate_closed_loop(robot, reference, duration=14.0, rate=200.0,
                                natural_frequency=10.0,
                                sensor=SensorModel(torque_noise_std=0.1))
    write_dataset(tmp_path / "log.csv", data)
    assert main(["identify", "arm3", str(tmp_path / "log.csv"), "--method", "iv"]) == 2
    assert "needs `--reference`" in capsys.readouterr().err
    payload = _json(capsys, ["identify", "arm3", str(tmp_path / "log.csv"), "--method", "iv",
                             "--reference", str(tmp_path / "ref.yaml"), "--natural-frequency",
                             "10", "--json"])
    assert payload["method"] == "iv" and payload["rank"] == 24
    assert max(payload["rmse"]) < 0.5
    # a second run of the same reference, its torque sensor offset: one reference for both
    biased = simulate_closed_loop(robot, reference, duration=14.0, rate=200.0,
                                  natural_frequency=10.0, seed=1, sensor=SensorModel(
                                      torque_noise_std=0.1, torque_bias=[0.3, -0.2, 0.1]))
    write_dataset(tmp_path / "biased.csv", biased)
    logs = [str(tmp_path / "log.csv"), str(tmp_path / "biased.csv")]
    ref = str(tmp_path / "ref.yaml")
    assert main(["identify", "arm3", *logs, "--method", "iv", "--reference", ref, ref, ref]) == 2
    assert "one trajectory for all logs or one per log (2), got 3" in capsys.readouterr().err
    # IV's iterates on these two logs settle at about its tolerance (last changes 0.019,
    # 0.011 against 0.01 after its 5 iterations): converged or not (status 3, the reason on
    # stderr), the offsets are what is checked here
    status = main(["identify", "arm3", *logs, "--method", "iv", "--reference", ref,
                   "--natural-frequency", "10", "--friction", "viscous-coulomb", "--json"])
    assert status in (0, UNCONVERGED_STATUS)
    payload = json.loads(capsys.readouterr().out)
    first, second = (np.array(entry["offsets"]) for entry in payload["log_offsets"])
    assert np.abs(second - first - [0.3, -0.2, 0.1]).max() < 0.05


def test_identify_constrained_command(capsys, tmp_path):
    from dynid.cli.identify import IDENTIFY_METHODS
    from dynid.data import write_dataset
    from dynid.excitation import random_fourier
    from dynid.identification import CONSTRAINED_METHODS
    from dynid.robot import load_robot
    from dynid.simulate import SensorModel, simulate_open_loop

    assert set(CONSTRAINED_METHODS) <= set(IDENTIFY_METHODS)
    robot = load_robot("panda")
    data = simulate_open_loop(robot, random_fourier(robot, seed=4), duration=10.0, rate=100.0,
                              sensor=SensorModel(torque_noise_std=0.1), seed=4)
    write_dataset(tmp_path / "log.csv", data)
    params = tmp_path / "params.yaml"
    with warnings.catch_warnings():  # the README's prior is a body: no warning about it
        warnings.simplefilter("error", UserWarning)
        payload = _json(capsys, ["identify", "panda", str(tmp_path / "log.csv"), "--method",
                                 "cls3", "--prior", "panda-cad", "--validate", "0.2", "--json",
                                 "--parameters-output", str(params)])
    assert payload["constrained"]["consistent"] and payload["constrained"]["success"]
    # which physical parameters the data determine (issue 32): link 1's mass is the prior's
    held = {(q["kind"], q["owner"]) for q in payload["identifiability"]["quantities"]
            if q["status"] == "held"}
    assert ("mass", "link1") in held and ("inertia", "link7") not in held
    assert max(payload["validation"]["rmse"]) < 0.5
    identified = load_robot(params)
    assert identified.n_joints == 7 and identified.bounds is not None
    assert 16.0 <= identified.total_mass <= 20.0  # the panda file's total-mass bounds
    assert main(["identify", "panda", str(tmp_path / "log.csv"), "--prior", "panda-cad"]) == 2
    assert "`--prior` is for --method cls1|cls2|cls3|log-cholesky, not ols" in (
        capsys.readouterr().err)
    assert main(["identify", "panda", str(tmp_path / "log.csv"), "--method", "cls3",
                 "--prior", "arm3"]) == 2
    assert "`--prior`: 'arm3' has 3 links" in capsys.readouterr().err


def _parsers():
    """The `dynid` parser and every sub-parser under it (argparse internals: a test may)."""
    from dynid.cli import _parser

    pending = [_parser()]
    while pending:
        parser = pending.pop()
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())


def _default_forms(default) -> set[str]:
    """How a help text may show ``default``."""
    if isinstance(default, (list, tuple)):
        return {" ".join(map(str, default)), str(default)}
    if isinstance(default, float):
        return {str(default), f"{default:g}"}
    if default is True:  # a --flag/--no-flag pair on by default
        return {"(default;", "(default)", "default: on"}
    return {str(default)}


def test_every_option_has_help_that_shows_its_default():
    problems = []
    parsers = list(_parsers())
    assert len(parsers) > 15  # dynid, every command, robot show, data inspect
    for parser in parsers:
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            name = f"`{parser.prog} {'/'.join(action.option_strings) or action.dest}`"
            if isinstance(action, argparse._SubParsersAction):
                problems += [f"`{parser.prog} {command.dest}`: no help"
                             for command in action._choices_actions if not command.help]
                continue
            if not action.help:
                problems.append(f"{name}: no help")
                continue
            text = formatter._expand_help(action)
            if action.default is None or action.default is False:
                continue
            if "default" not in text or not any(form in text
                                                for form in _default_forms(action.default)):
                problems.append(f"{name}: default {action.default!r} not shown in {text!r}")
    assert not problems, "\n".join(problems)


def test_the_option_check_sees_a_missing_default():
    parser = argparse.ArgumentParser()
    action = parser.add_argument("--rate", type=float, default=1000.0, help="Hz")
    assert not any(form in parser._get_formatter()._expand_help(action)
                   for form in _default_forms(action.default))


def test_version(capsys):
    import dynid

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"dynid {dynid.__version__}\n"


def test_literal_choices_and_defaults_are_the_library_s():
    """The parser's choice lists and defaults are literals (`--help` imports nothing heavy):
    each equals the library's own."""
    from dynid.bench import dynamics as bench
    from dynid.cli import bench as bench_command
    from dynid.cli import compare as compare_command
    from dynid.cli import demo as demo_command
    from dynid.cli import excite as excite_command
    from dynid.cli._fit_options import LINEAR_FRICTION, NONLINEAR_FRICTION
    from dynid.cli.identify import BESPOKE_METHODS, IDENTIFY_METHODS
    from dynid.excitation import CRITERIA
    from dynid.identification import (
        COMPARE_METHODS,
        CONSTRAINED_METHODS,
        DEFAULT_METHODS,
        ESTIMATORS,
        IDENTIFICATION_METHODS,
        NLS_FRICTION_MODELS,
    )
    from dynid.workflow import demo

    assert set(BESPOKE_METHODS) == {*ESTIMATORS, "iv", *CONSTRAINED_METHODS, "nls"}
    # every registered method is reachable from `dynid identify`
    assert set(IDENTIFY_METHODS) == {*IDENTIFICATION_METHODS, "iv"}
    assert (*LINEAR_FRICTION, *NONLINEAR_FRICTION) == NLS_FRICTION_MODELS
    assert compare_command.COMPARE_CHOICES == COMPARE_METHODS
    assert compare_command.COMPARE_DEFAULTS == DEFAULT_METHODS
    assert excite_command.CRITERIA == CRITERIA
    assert (demo_command.DEFAULT_DURATION, demo_command.DEFAULT_NOISE_STD,
            demo_command.DEFAULT_ITERATIONS) == (demo.DEFAULT_DURATION, demo.DEFAULT_NOISE_STD,
                                                 demo.DEFAULT_ITERATIONS)
    assert (bench_command.DEFAULT_SIZES, bench_command.DEFAULT_REPEAT) == (
        bench.DEFAULT_SIZES, bench.DEFAULT_REPEAT)


def test_closed_loop_simulation_reports_progress_on_stderr(capsys, tmp_path):
    from dynid.excitation import random_fourier, save_trajectory
    from dynid.robot import load_robot

    save_trajectory(tmp_path / "ref.csv", random_fourier(load_robot("arm3"), seed=3),
                    duration=1.0, rate=100.0, allow_moving_ends=True)
    argv = ["simulate", "arm3", str(tmp_path / "ref.yaml"), "-o", str(tmp_path / "log.csv"),
            "--closed-loop", "--duration", "0.2", "--rate", "50", "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)  # stdout: the JSON only
    n = summary["n_samples"]
    assert summary["closed_loop"] and f"closed-loop simulation: {n}/{n} (100 %)" in captured.err
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_symbolic_base_passes_progress(capsys, monkeypatch):
    """`dynid base --symbolic` hands its progress lines to stderr, none with --quiet."""
    import types

    import dynid.model

    def fake(robot, base, *, progress=None, **options):
        if progress is not None:
            progress("symbolic regrouping: 1/1")
        return types.SimpleNamespace(strings=lambda: list(base.base_names), lengths={},
                                     numeric_terms=[])

    monkeypatch.setattr(dynid.model, "symbolic_regrouping", fake)
    payload = _json(capsys, ["base", "arm3", "--symbolic", "--json"])
    assert payload["rank"] == 24
    assert main(["base", "arm3", "--symbolic"]) == 0
    assert "symbolic regrouping: 1/1" in capsys.readouterr().err
    assert main(["base", "arm3", "--symbolic", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_ctrl_c_is_one_line_and_status_130(monkeypatch, capsys):
    import dynid.robot

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(dynid.robot, "builtin_robots", interrupted)
    assert main(["robots"]) == 130
    assert capsys.readouterr().err == "dynid: interrupted\n"


def test_joint_numbers_are_ascii_digits():
    """`int` reads '١' and '²' as digits: typed as a joint they are names, never numbers."""
    from dynid.cli._fit_options import known_gain
    from dynid.cli._robot_options import joint_keys

    assert known_gain("2=0.85") == (2, 0.85)
    assert known_gain("١=0.85") == ("١", 0.85)
    assert joint_keys(["3", "q²", "joint1"]) == [3, "q²", "joint1"]
