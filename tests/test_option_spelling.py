"""One spelling of every option across commands (issue 23): an earlier spelling is refused
with the new one, and a concept shared by commands has one spelling and one default."""

from __future__ import annotations

import argparse

import pytest

from dynid.cli import _parser, main
from dynid.cli._common import nls_friction
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
