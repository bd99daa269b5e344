"""Export: URDF and MJCF reproduce dynid's torques and tool frame (MDH and DH robots), the
dynid robot file loads back, and a base-parameter estimate is refused with a way out."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.cli import main
from dynid.dynamics import rnea, tool_pose
from dynid.export.writers import export_robot, identified_robot, to_urdf
from dynid.friction.models import Sigmoid, ViscousCoulomb
from dynid.robot import load_robot, load_urdf

ROBOTS = ["panda", "arm3", "jaco2"]  # MDH; DH (link frames on the next joint)


@pytest.mark.parametrize("name", ROBOTS)
def test_urdf_round_trip_through_pinocchio(name, tmp_path, rng):
    robot = load_robot(name)
    path = export_robot(robot, tmp_path / f"{name}.urdf")
    back = load_urdf(path, tool_frame="tool")
    q, dq, ddq = rng.standard_normal((3, 40, robot.n_joints))
    assert_close(rnea(back, q, dq, ddq), rnea(robot, q, dq, ddq), atol=1e-9)
    assert_close(tool_pose(back, q), tool_pose(robot, q), atol=1e-12)
    assert_close(back.limits.lower, robot.limits.lower)


@pytest.mark.parametrize("name", ROBOTS)
def test_mjcf_round_trip_through_mujoco(name, tmp_path, rng):
    mujoco = pytest.importorskip("mujoco", reason="mujoco is not installed")
    robot = load_robot(name)
    model = mujoco.MjModel.from_xml_path(str(export_robot(robot, tmp_path / f"{name}.xml")))
    flags = mujoco.mjtDisableBit
    model.opt.disableflags |= (flags.mjDSBL_DAMPER | flags.mjDSBL_FRICTIONLOSS
                               | flags.mjDSBL_CONSTRAINT)  # rigid body only
    data = mujoco.MjData(model)
    q, dq, ddq = rng.standard_normal((3, 20, robot.n_joints))
    expected = rnea(robot, q, dq, ddq)
    for k in range(20):
        data.qpos[:], data.qvel[:], data.qacc[:] = q[k], dq[k], ddq[k]
        mujoco.mj_inverse(model, data)
        assert_close(data.qfrc_inverse, expected[k], atol=1e-9)


def test_friction_where_urdf_allows_it():
    panda = load_robot("panda")
    linear = to_urdf(panda.with_friction(ViscousCoulomb(np.full(7, 0.1), np.full(7, 0.3),
                                                        np.full(7, 0.02))))
    assert linear.count('<dynamics damping="0.10000000000000001" friction="0.29999999999999999"'
                        ) == 7
    assert "the offsets fo have no URDF/MJCF counterpart" in linear
    sigmoid = to_urdf(panda.with_friction(Sigmoid(np.ones(7), np.ones(7), np.zeros(7))))
    assert "<dynamics" not in sigmoid and "sigmoid friction has no URDF/MJCF" in sigmoid


def test_export_command_from_a_model(tmp_path, capsys):
    from dynid.excitation.optimize import random_fourier
    from dynid.identification.constrained import identify_constrained
    from dynid.identification.linear import identify
    from dynid.identification.model import save_model
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    panda = load_robot("panda")
    log = simulate_open_loop(panda, random_fourier(panda, seed=1), duration=14.0, rate=100.0,
                             sensor=SensorModel(torque_noise_std=0.1), seed=1)
    cls3 = identify_constrained(panda, log, method="cls3").model
    save_model(cls3, tmp_path / "cls3.yaml")
    for suffix in ("urdf", "xml", "yaml"):
        assert main(["export", str(tmp_path / "cls3.yaml"), "-o",
                     str(tmp_path / f"out.{suffix}")]) == 0
    capsys.readouterr()
    exported = load_robot(tmp_path / "out.yaml")  # loadable back by every command
    assert_close(exported.parameters, cls3.physical_parameters)
    assert exported.friction.name == "viscous-coulomb"
    assert_close(rnea(load_urdf(tmp_path / "out.urdf"), log.q[:50], log.dq[:50],
                      log.ddq[:50]), cls3.rigid_torque(log.q[:50], log.dq[:50], log.ddq[:50]),
                 atol=1e-9)
    assert_close(identified_robot(cls3).parameters, cls3.physical_parameters)
    save_model(identify(panda, log), tmp_path / "ols.yaml")
    assert main(["export", str(tmp_path / "ols.yaml"), "-o", str(tmp_path / "x.urdf")]) == 2
    assert "`dynid retrieve` finds a feasible set" in capsys.readouterr().err
    assert not (tmp_path / "x.urdf").exists()
    assert main(["export", "panda", "-o", str(tmp_path / "panda.stl")]) == 2
    assert "`-o` must end in .urdf, .xml, .mjcf, .yaml or .yml" in capsys.readouterr().err
