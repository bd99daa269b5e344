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
    from dynid.identification.constrained.cls import identify_constrained
    from dynid.identification.linear.idim import identify
    from dynid.model.linear_model import save_model
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


# --- names and encodings: what is written loads back, or nothing is written ------------------
def _renamed(robot, *, joints=None, links=None):
    import dataclasses

    out = robot
    if joints is not None:
        out = dataclasses.replace(out, joints=tuple(
            dataclasses.replace(joint, name=name) for joint, name in zip(out.joints, joints,
                                                                         strict=True)))
    if links is not None:
        out = dataclasses.replace(out, link_names=tuple(links))
    return out


@pytest.mark.parametrize("edits, message", [
    ({"name: joint2": "name: joint1"}, r"joints 1 and 2 of 'arm3' are both named 'joint1'"),
    ({"name: link3": "name: link1"}, r"links 1 and 3 of 'arm3' are both named 'link1'"),
    ({"name: joint2": "name: ''"}, r"joint 2 of 'arm3' has an empty name \(''\)"),
    ({"name: link3": "name: ' '"}, r"link 3 of 'arm3' has an empty name \(' '\)"),
    ({"name: joint2": 'name: "b\\x01"'}, r"joint 2 of 'arm3' is named 'b\\x01', with a "
                                          "character XML"),
])
@pytest.mark.parametrize("suffix", [".urdf", ".xml", ".yaml"])
def test_names_that_would_not_load_back_are_refused_before_writing(tmp_path, capsys, edits,
                                                                    message, suffix):
    """Repeated, empty and unprintable names (a hand-edited robot file): refused by name,
    nothing written, for every format."""
    import re

    from dynid.robot import save_robot

    source = tmp_path / "source.yaml"
    save_robot(load_robot("arm3"), source)
    text = source.read_text()
    for old, new in edits.items():
        assert old in text
        text = text.replace(old, new)
    source.write_text(text)
    with pytest.raises(ValueError, match=message):
        export_robot(load_robot(source), tmp_path / "direct.urdf")
    assert main(["export", str(source), "-o", str(tmp_path / f"out{suffix}")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and re.search(message, error)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source.yaml"]


def test_generated_names_step_aside_for_the_robots_own(tmp_path, rng):
    """A joint named tool_joint, links named base_link and tool: the URDF's own frames take
    other names, and the file loads back with the same dynamics."""
    robot = _renamed(load_robot("arm3"), joints=["j1", "j2", "tool_joint"],
                     links=["base_link", "tool", "tool_1"])
    text = to_urdf(robot)
    assert '<link name="base_link_1"/>' in text and '<link name="tool_2"/>' in text
    assert '<joint name="tool_2_joint" type="fixed">' in text
    path = tmp_path / "arm.urdf"
    export_robot(robot, path)
    back = load_urdf(path)
    assert list(back.joint_names) == ["j1", "j2", "tool_joint"]
    q, dq, ddq = rng.standard_normal((3, 10, 3))
    assert_close(rnea(back, q, dq, ddq), rnea(robot, q, dq, ddq), atol=1e-9)


@pytest.mark.parametrize("encoding", ["ISO-8859-1", "UTF-16"])
def test_a_urdf_in_another_encoding_exports_as_declared_utf8(tmp_path, encoding, rng):
    """Export writes UTF-8 and says so, whatever the source URDF declared."""
    text = to_urdf(_renamed(load_robot("arm3"), links=["bras", "lien", "poignée"]))
    text = text.replace('<?xml version="1.0" encoding="UTF-8"?>',
                        f'<?xml version="1.0" encoding="{encoding}"?>')
    source = tmp_path / "source.urdf"
    source.write_bytes(text.encode(encoding.lower().replace("iso-", "iso")))
    robot = load_urdf(source)
    assert robot.link_names[-1] == "poignée"
    for suffix in (".urdf", ".xml"):
        out = tmp_path / f"out{suffix}"
        assert main(["export", str(source), "-o", str(out)]) == 0
        raw = out.read_bytes()
        assert raw.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n')
        assert "poignée".encode() in raw
    back = load_urdf(tmp_path / "out.urdf")
    assert back.link_names[-1] == "poignée"
    q, dq, ddq = rng.standard_normal((3, 10, 3))
    assert_close(rnea(back, q, dq, ddq), rnea(robot, q, dq, ddq), atol=1e-9)


def test_export_never_writes_over_the_urdf_a_robot_file_stands_on(tmp_path, capsys):
    urdf, robot_file = tmp_path / "arm3.urdf", tmp_path / "r.yaml"
    assert main(["export", "arm3", "-o", str(urdf)]) == 0
    assert main(["export", str(urdf), "-o", str(robot_file)]) == 0
    capsys.readouterr()
    before = urdf.read_bytes()
    (tmp_path / "sub").mkdir()
    for spelling in (urdf, tmp_path / "sub" / ".." / "arm3.urdf"):
        assert main(["export", str(robot_file), "-o", str(spelling)]) == 2
        error = capsys.readouterr().err
        assert "is an input of this command ('arm3.urdf', which" in error
        assert error.count("\n") == 1
    assert urdf.read_bytes() == before
    assert main(["export", str(robot_file), "-o", str(tmp_path / "x.urdf"), "--name", ""]) == 2
    assert "`--name` is empty" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arm3.urdf", "r.yaml", "sub"]
