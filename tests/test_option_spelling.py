"""One spelling of every option across commands (issue 23): an earlier spelling is refused
with the new one, and a concept shared by commands has one spelling and one default."""

from __future__ import annotations

import argparse

import pytest

from dynid.cli import _parser, main
from dynid.cli._fit_options import nls_friction
from dynid.robot import load_robot


@pytest.mark.parametrize(("argv", "old", "new"), [
    (["compare", "panda", "a.csv", "b.csv", "--nls-friction", "lugre"], "--nls-friction",
     "--friction lugre"),
    (["compare", "panda", "a.csv", "b.csv", "--references", "t.yaml"], "--references",
     "--reference t.yaml"),
    (["identify", "panda", "a.csv", "--method", "wls", "--noise-std", "0.1", "0.2"],
     "--noise-std", "--noise 0.1 0.2"),
    (["detect", "panda", "a.csv", "--gain", "30"], "--gain", "--observer-gain 30"),
    (["identify", "panda", "a.csv", "--method", "nls", "--max-evaluations", "50"],
     "--max-evaluations", "--max-iterations 50"),
])
def test_old_spellings_are_refused_with_the_new_one(argv, old, new, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert f"`{old}` is spelt `{new.split()[0]}` now" in error and new in error


def _options() -> dict[str, dict[str, str]]:
    """Every visible long option: {option: {command: its help}}."""
    commands = next(a for a in _parser()._actions
                    if isinstance(a, argparse._SubParsersAction)).choices
    out: dict[str, dict[str, str]] = {}
    for name, parser in commands.items():
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for option in action.option_strings:
                if option.startswith("--"):
                    out.setdefault(option, {})[name] = action.help or ""
    return out


def test_the_torque_noise_and_the_reference_have_one_spelling():
    """The torque noise std is --noise wherever it is given (simulate, demo, identify's WLS),
    the tracked trajectory --reference (identify's and compare's IV), a known drive gain
    --gain (identify, compare) and no command spells the observer's gain the same way; a
    payload is --payload-mass and --payload-com wherever it is given."""
    options = _options()
    assert {"simulate", "demo", "identify"} <= set(options["--noise"])
    assert "--noise-std" not in options and "--references" not in options
    assert {"identify", "compare"} <= set(options["--reference"])
    assert set(options["--gain"]) == {"identify", "compare"}
    assert "detect" in options["--observer-gain"]
    # a payload's mass and CoM: attached by simulate, known to identify's and compare's fits
    for option in ("--payload-mass", "--payload-com"):
        assert {"simulate", "identify", "compare"} <= set(options[option])
    assert "--payload" not in options
    assert "--nls-friction" not in options


def test_identify_and_compare_default_to_the_same_nls_friction():
    """The robot file's own model (NLS fits every friction model a robot file states), and
    --friction over it."""
    panda, arm3 = load_robot("panda"), load_robot("arm3")
    assert nls_friction(panda, None) == "sigmoid"
    assert nls_friction(arm3, None) == "arctan"
    assert nls_friction(arm3, "lugre") == "lugre"


# -- library keywords in the errors that reach a command (issue 31) ------------------------------

@pytest.fixture(scope="module")
def arm3_at_100_hz(tmp_path_factory) -> dict[str, str]:
    """An arm3 log at 100 Hz (its arctan friction needs ~2800 RK4 steps per 10 ms period, more
    than the 1000 a loop takes by itself), its reference, and an OLS model of it."""
    import numpy as np
    import yaml

    from dynid.data import write_dataset
    from dynid.excitation import FourierTrajectory
    from dynid.identification import identify
    from dynid.model import save_model
    from dynid.simulate import simulate_open_loop

    folder = tmp_path_factory.mktemp("arm3-100hz")
    robot = load_robot("arm3")
    trajectory = FourierTrajectory(a=0.3 * np.ones((3, 3)), b=0.2 * np.ones((3, 3)),
                                   q0=np.zeros(3), omega_f=2 * np.pi / 5)
    (folder / "traj.yaml").write_text(yaml.safe_dump(trajectory.to_dict()))
    data = simulate_open_loop(robot, trajectory, duration=5.0, rate=100.0)
    write_dataset(folder / "log.csv", data)
    save_model(identify(robot, data), folder / "model.yaml")
    return {"traj": str(folder / "traj.yaml"), "log": str(folder / "log.csv"),
            "model": str(folder / "model.yaml")}


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dynid: error:") and err.count("\n") == 1, err
    return err


def test_identify_iv_names_the_control_rate_not_substeps(arm3_at_100_hz, capsys):
    """IV's closed loop needs more RK4 substeps than a loop takes by itself: identify has no
    `substeps`; the rate the controller ran at (--control-rate) is what the user can give."""
    paths = arm3_at_100_hz
    err = _error(capsys, ["identify", "arm3", paths["log"], "--method", "iv",
                          "--reference", paths["traj"]])
    assert "`--control-rate`" in err and "`substeps`" not in err
    assert err.count("RK4 steps per control period") == 1  # OLS's and the nominal's: once


def test_simulate_names_its_substeps_option(arm3_at_100_hz, tmp_path, capsys):
    err = _error(capsys, ["simulate", "arm3", arm3_at_100_hz["traj"], "-o",
                          str(tmp_path / "out.csv"), "--closed-loop", "--rate", "100",
                          "--duration", "1"])
    assert "give `--substeps`" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("argv", "option"), [
    (["identify", "nosuch", "{log}"], "`robot`"),
    (["benchmark", "nosuch", "--out", "{tmp}/b"], "`robot`"),
    (["identify", "arm3", "{log}", "--method", "cls3", "--prior", "nosuch"], "`--prior`"),
    (["identify", "arm3", "{log}", "--method", "iv", "--reference", "{traj}",
      "--controller", "nosuch"], "`--controller`"),
    (["validate", "{model}", "{log}", "--joints", "joint9"], "`--joints`"),
    (["robot", "show", "arm3", "--xacro-arg", "a:=b"], "`--xacro-arg`"),
    (["robot", "show", "panda", "--tip", "panda_link5"], "`--tip`"),
    (["bench", "--robot", "nosuch", "--sizes", "10", "--repeat", "1"], "`--robot`"),
])
def test_a_robot_or_joint_that_is_not_there_names_the_option(arm3_at_100_hz, tmp_path,
                                                             capsys, argv, option):
    paths = {**arm3_at_100_hz, "tmp": str(tmp_path)}
    err = _error(capsys, [a.format(**paths) for a in argv])
    assert option in err, err
    assert "`name_or_path`" not in err and "`joints`" not in err
    assert "`xacro_args`" not in err and "`tip`" not in err
    assert list(tmp_path.iterdir()) == []


def test_library_keywords_are_spelt_as_the_commands_options():
    from dynid.cli._parsing import spelt
    from dynid.cli.identify import LIBRARY_KEYWORDS

    diverged = ("the closed loop diverged at t = 1.000 s: lower the gains "
                "(`natural_frequency`, or `stiffness` and `damping`) or raise `rate` / "
                "`substeps`")
    assert spelt(diverged, LIBRARY_KEYWORDS) == (
        "the closed loop diverged at t = 1.000 s: lower the gains (`--natural-frequency`, or "
        "`--stiffness` and `--damping`) or raise `--control-rate`")
    assert spelt("`logs[1]` must be sampled once per control period; `references[0]`: x",
                 LIBRARY_KEYWORDS) == ("`data` #2 must be sampled once per control period; "
                                       "`--reference` #1: x")
    assert spelt("`--method iv` needs `unknown`", LIBRARY_KEYWORDS) == \
        "`--method iv` needs `unknown`"
    # a keyword with no option here: the advice to give it goes
    assert spelt("need 1411 RK4 steps (at most 1000 are taken automatically): give "
                 "`substeps`, or check the robot's friction", {"substeps": None}) == \
        ("need 1411 RK4 steps (at most 1000 are taken automatically): check the robot's "
         "friction")
