"""Payload identification with the arm frozen (Gilbert et al. 2024, eq. 22 and Table 5)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from conftest import reference_path

from dynid.cli import main
from dynid.data.io import write_dataset
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification.linear.idim import identify
from dynid.identification.payload import identify_payload, in_tool_frame
from dynid.model.linear_model import save_model
from dynid.robot import load_robot
from dynid.robot.inertia import from_com, transform_parameters
from dynid.simulate.twin import SensorModel, simulate_open_loop

SENSOR = SensorModel(torque_noise_std=0.1)


@pytest.fixture(scope="module")
def arm():
    """The Panda twin with linear friction, and its model identified from noisy data."""
    panda = load_robot("panda").with_friction(
        ViscousCoulomb(np.full(7, 0.1), np.full(7, 0.3), np.full(7, -0.05)))
    log = simulate_open_loop(panda, random_fourier(panda, seed=1), duration=20.0, rate=100.0,
                             sensor=SENSOR, seed=1)
    return panda, identify(panda, log)


def _with_payload(panda, tool_parameters):
    """The twin carrying a payload given in the tool (flange) frame, and a noisy log."""
    link = transform_parameters(tool_parameters, panda.tool[:3, :3], panda.tool[:3, 3])
    parameters = panda.parameters.copy()
    parameters[-1] += link
    loaded = panda.with_parameters(parameters)
    return simulate_open_loop(loaded, random_fourier(loaded, seed=2), duration=20.0,
                              rate=100.0, sensor=SENSOR, seed=2)


def test_one_kilogram_payload_within_2_percent_and_5_mm(arm):
    panda, model = arm
    size = np.array([0.08, 0.06, 0.04])  # a 1 kg box, CoM off the flange axis
    inertia = np.diag([size[1] ** 2 + size[2] ** 2, size[0] ** 2 + size[2] ** 2,
                       size[0] ** 2 + size[1] ** 2]) / 12
    com = np.array([0.01, -0.02, 0.05])
    data = _with_payload(panda, from_com(1.0, com, inertia))
    result = identify_payload(panda, model, data)
    assert result.mass == pytest.approx(1.0, rel=0.02)
    assert np.linalg.norm(result.com_tool - com) < 0.005
    assert result.consistency.consistent
    assert result.rmse_after.max() < 1.2 * 0.1 < result.rmse_before.min()
    assert np.allclose(in_tool_frame(panda, result.parameters), result.tool_parameters)


def test_gilbert2024_table5_franka_hand_as_the_payload(arm):
    """Gilbert weighed the Panda's hand as a payload (Table 5: link 7 went from 0.54 to 1.61
    kg). Here the hand of Franka's own description (hand + two fingers, 0.71 kg, mounted on
    the flange turned by -45 deg about z) rides on the twin and is recovered."""
    panda, model = arm
    path = reference_path("panda-franka-description", "franka_hand", "inertials.yaml")
    spec = yaml.safe_load(path.read_text())
    total = np.zeros(10)
    for name in ("hand", "leftfinger", "rightfinger"):
        body = spec[name]
        entries = body["inertia"]
        inertia = np.array([[entries["xx"], entries["xy"], entries["xz"]],
                            [entries["xy"], entries["yy"], entries["yz"]],
                            [entries["xz"], entries["yz"], entries["zz"]]])
        xyz = np.array([float(v) for v in body["origin"]["xyz"].split()])
        total += from_com(body["mass"], xyz, inertia)
    turn = np.array([[np.cos(-np.pi / 4), -np.sin(-np.pi / 4), 0],
                     [np.sin(-np.pi / 4), np.cos(-np.pi / 4), 0], [0, 0, 1]])
    hand = transform_parameters(total, turn, np.zeros(3))  # hand frame -> flange frame
    result = identify_payload(panda, model, _with_payload(panda, hand))
    assert result.mass == pytest.approx(total[0], rel=0.02)
    assert np.linalg.norm(result.com_tool - hand[1:4] / hand[0]) < 0.005


def test_payload_command(arm, capsys, tmp_path):
    panda, model = arm
    save_model(model, tmp_path / "arm.yaml")
    data = _with_payload(panda, from_com(0.5, np.array([0.0, 0.0, 0.03]), 1e-4 * np.eye(3)))
    write_dataset(tmp_path / "loaded.csv", data)
    assert main(["payload", "panda", str(tmp_path / "arm.yaml"), str(tmp_path / "loaded.csv"),
                 "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["mass"] == pytest.approx(0.5, rel=0.04) and payload["consistent"]
    assert main(["payload", "panda", str(tmp_path / "arm.yaml"),
                 str(tmp_path / "loaded.csv")]) == 0
    assert "CoM, tool frame [m]" in capsys.readouterr().out
    assert main(["payload", "panda", "arm3", str(tmp_path / "loaded.csv")]) == 2
    assert "`arm` has 3 joints, `robot` 7" in capsys.readouterr().err


def test_no_payload_and_bad_ranges_are_named(arm):
    panda, model = arm
    exact = simulate_open_loop(panda, random_fourier(panda, seed=3), duration=10.0,
                               rate=100.0, seed=3)
    with pytest.raises(ValueError, match="no payload to see"):
        identify_payload(panda, panda, exact)
    empty = simulate_open_loop(panda, random_fourier(panda, seed=3), duration=10.0,
                               rate=100.0, sensor=SENSOR, seed=3)
    with pytest.raises(ValueError, match="no payload mass"):
        identify_payload(panda, panda, empty)
    with pytest.raises(ValueError, match="`mass` must be a range"):
        identify_payload(panda, model, empty, mass=(2.0, 1.0))
