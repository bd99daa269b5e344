"""Robots by name from the optional example-robot-data (`pip install 'dynid[robots]'`): the
serial arms it ships load with derived bounds, built-in names keep priority, the constrained
methods run on them; without the package, a clear error names the extra.

example-robot-data ships URDFs and meshes only (no Python module to importorskip): the tests
that need it skip when its distribution is not installed.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest

import dynid.robot._example_robot_data as erd
from dynid.cli import main
from dynid.model.consistency import check_consistency
from dynid.robot import URDFWarning, builtin_robots, load_robot

needs_package = pytest.mark.skipif(
    erd.robots_folder() is None,
    reason=f"example-robot-data is not installed ({erd.INSTALL})")


@needs_package
def test_ur10_by_name_with_derived_bounds():
    robot = load_robot("ur10")
    assert robot.n_joints == 6 and robot.convention == "urdf"
    assert robot.total_mass == pytest.approx(28.7)
    assert "example-robot-data" in robot.source.citation
    assert robot.bounds.derived
    assert {link.basis for link in robot.bounds.links} == {"collision"}  # its STL meshes
    report = check_consistency(robot.parameters, robot.bounds)
    assert report.consistent and report.within_bounds
    assert "transmission reductions" in robot.source.notes


@needs_package
def test_every_catalog_arm_loads_and_holds_its_own_parameters():
    names = erd.example_robots(builtin_robots())
    assert {"ur3", "ur5", "ur10", "kinova", "example-robot-data:panda"} <= {n for n, _ in names}
    for name, entry in names:
        with warnings.catch_warnings():  # what they hold that dynid does not read (URDFWarning)
            warnings.simplefilter("ignore", URDFWarning)
            robot = load_robot(name)
        assert robot.n_joints == entry.n_joints, name
        report = check_consistency(robot.parameters, robot.bounds)
        assert report.consistent and report.within_bounds, name


@needs_package
def test_built_in_names_keep_priority_and_the_panda_stops_at_its_flange():
    assert load_robot("panda").convention == "mdh"  # dynid's own, from the paper
    panda = load_robot("example-robot-data:panda")
    assert panda.convention == "urdf" and panda.n_joints == 7
    assert "panda_finger_joint1 at 0" in panda.source.notes  # locked, never arm joints
    assert panda.link_names[-1] == "panda_link7"
    assert panda.tool[2, 3] == pytest.approx(0.107)  # the flange
    # the hand and its fingers ride on link 7
    assert panda.parameters[-1, 0] == pytest.approx(0.735522 + 0.73 + 2 * 0.015)
    with pytest.raises(ValueError, match="`tip` picks the arm's chain of a URDF robot"):
        load_robot("panda", tip="panda_hand")
    assert load_robot("example-robot-data:panda", tip="panda_hand").tool[2, 3] == \
        pytest.approx(0.107)


@needs_package
def test_cli_lists_and_shows_them(capsys):
    assert main(["robots", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    sources = {row["name"]: row["source"] for row in payload["robots"]}
    assert sources["panda"] == "dynid" and sources["ur10"] == "example-robot-data"
    assert payload["example_robot_data"]["installed"]
    assert main(["robots"]) == 0
    assert "[example-robot-data]" in capsys.readouterr().out
    assert main(["robot", "show", "ur10", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["bounds"]["derived"] and shown["bounds"]["basis"][0] == "collision"
    assert main(["robot", "show", "ur10"]) == 0
    assert "bounds (derived)" in capsys.readouterr().out


def test_without_the_package_the_error_names_the_extra(monkeypatch, capsys):
    monkeypatch.setattr(erd, "robots_folder", lambda: None)
    with pytest.raises(ValueError, match=r"'ur10' is a robot of example-robot-data, which is "
                                         r"not installed: pip install 'dynid\[robots\]'"):
        load_robot("ur10")
    with pytest.raises(ValueError, match=r"neither a built-in robot .*pip install "
                                         r"'dynid\[robots\]'"):
        load_robot("no-such-arm")
    assert main(["robots"]) == 0
    assert "pip install 'dynid[robots]'" in capsys.readouterr().out
    assert main(["robot", "show", "ur5"]) == 2
    assert "pip install 'dynid[robots]'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def ur5_log():
    from dynid.excitation.optimize import random_fourier
    from dynid.friction.models import ViscousCoulomb
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    if erd.robots_folder() is None:
        pytest.skip(f"example-robot-data is not installed ({erd.INSTALL})")
    robot = load_robot("ur5")
    limits = dataclasses.replace(robot.limits, acceleration=np.full(6, 8.0))
    truth = dataclasses.replace(robot, limits=limits).with_friction(
        ViscousCoulomb(np.full(6, 0.2), np.full(6, 0.5), np.zeros(6)))
    data = simulate_open_loop(truth, random_fourier(truth, seed=3), duration=6.0, rate=100.0,
                              sensor=SensorModel(torque_noise_std=0.1), seed=3)
    return robot, data


def test_cls3_nls_and_retrieval_run_on_an_example_robot(ur5_log):
    from dynid.identification import identify, retrieve_sdp
    from dynid.identification.constrained.cls import identify_constrained
    from dynid.identification.nonlinear.nls import identify_nls

    robot, data = ur5_log
    cls3 = identify_constrained(robot, data, method="cls3")
    assert cls3.success and cls3.consistency.consistent and cls3.consistency.within_bounds
    assert cls3.relative_error_percent < 2.0
    nls = identify_nls(robot, data, friction="none", max_samples=300, max_iterations=15)
    assert nls.consistency.consistent and all(nls.consistency.com_in_box)
    model = identify(robot, data)
    retrieved = retrieve_sdp(robot, model.base, model.coefficients)
    assert retrieved.success and retrieved.consistency.consistent
    assert all(retrieved.consistency.com_in_box) and retrieved.consistency.total_mass_in_range
