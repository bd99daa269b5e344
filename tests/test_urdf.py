"""URDF import: the Panda by hand equals the MDH model; fixed joints merged; trees rejected."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import assert_close, published_panda_cad, random_states, reference_path

from dynid.dynamics import mass_matrix, rnea, tool_pose
from dynid.robot import load_robot, load_urdf
from dynid.robot.inertia import to_com


def _panda_urdf(robot) -> str:
    """The Panda written by hand: Franka's joint origins (xyz/rpy), the robot's inertials at
    their CoM, the flange as a fixed joint to a massless link8."""
    spec = yaml.safe_load(reference_path("panda-franka-description", "fer",
                                         "kinematics.yaml").read_text())
    mass, com, inertia = to_com(robot.parameters)
    links, joints = ['<link name="panda_link0"/>'], []
    for i in range(7):
        k = spec[f"joint{i + 1}"]["kinematic"]
        c, m, inertia_i = com[i], mass[i], inertia[i]
        links.append(
            f'<link name="panda_link{i + 1}"><inertial>'
            f'<origin xyz="{c[0]:.17g} {c[1]:.17g} {c[2]:.17g}" rpy="0 0 0"/>'
            f'<mass value="{m:.17g}"/><inertia ixx="{inertia_i[0, 0]:.17g}" '
            f'ixy="{inertia_i[0, 1]:.17g}" ixz="{inertia_i[0, 2]:.17g}" '
            f'iyy="{inertia_i[1, 1]:.17g}" iyz="{inertia_i[1, 2]:.17g}" '
            f'izz="{inertia_i[2, 2]:.17g}"/></inertial></link>'
        )
        joints.append(
            f'<joint name="panda_joint{i + 1}" type="revolute">'
            f'<parent link="panda_link{i}"/><child link="panda_link{i + 1}"/>'
            f'<origin xyz="{k["x"]} {k["y"]} {k["z"]}" rpy="{k["roll"]} {k["pitch"]} {k["yaw"]}"/>'
            f'<axis xyz="0 0 1"/><limit lower="-2.9" upper="2.9" effort="87" velocity="2.175"/>'
            "</joint>"
        )
    flange = spec["joint8"]["kinematic"]
    links.append('<link name="panda_link8"/>')
    joints.append(f'<joint name="panda_joint8" type="fixed"><parent link="panda_link7"/>'
                  f'<child link="panda_link8"/><origin xyz="0 0 {flange["z"]}" rpy="0 0 0"/>'
                  "</joint>")
    return f'<robot name="panda">{"".join(links)}{"".join(joints)}</robot>'


def test_non_physical_urdf_links_warn_when_rounded_and_are_refused_when_gross(tmp_path):
    from dynid.robot import RoundedInertiaWarning

    path = tmp_path / "panda.urdf"
    cad = published_panda_cad()  # Franka's link 4 misses by -0.025 %: rounding
    path.write_text(_panda_urdf(cad))
    with pytest.warns(RoundedInertiaWarning, match="the link of joint panda_joint4` "):
        load_urdf(path)
    gross = cad.parameters.copy()
    gross[3, 1] += 0.5 * gross[3, 0]  # the CoM moved 0.5 m, the inertia about the origin kept
    path.write_text(_panda_urdf(cad.with_parameters(gross)))
    with pytest.raises(ValueError, match="the link of joint panda_joint4` is not a physical"):
        load_urdf(path)
    assert_close(load_urdf(path, physical=False).parameters[3], gross[3])


@pytest.mark.parametrize("name", ["panda", "panda-cad"])
def test_hand_written_panda_urdf_equals_mdh_model(rng, tmp_path, name):
    mdh = load_robot(name)
    path = tmp_path / "panda.urdf"
    path.write_text(_panda_urdf(mdh))
    urdf = load_urdf(path, tool_frame="panda_link8")
    assert urdf.n_joints == 7 and urdf.convention == "urdf"
    assert urdf.link_names[0] == "panda_link1"
    assert_close(urdf.parameters, mdh.parameters, rtol=1e-12, atol=1e-15)
    q, dq, ddq = random_states(rng, 200, 7)
    assert_close(rnea(urdf, q, dq, ddq), rnea(mdh, q, dq, ddq), rtol=1e-10, atol=1e-10)
    assert_close(mass_matrix(urdf, q), mass_matrix(mdh, q), rtol=1e-10, atol=1e-12)
    assert_close(tool_pose(urdf, q), tool_pose(mdh, q), atol=1e-12)


def _write(tmp_path, body: str, name: str = "r.urdf"):
    path = tmp_path / name
    path.write_text(f'<robot name="r">{body}</robot>')
    return path


_INERTIAL = ('<inertial><origin xyz="{x} 0 0"/><mass value="{m}"/>'
             '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')


def test_fixed_joints_are_merged_into_the_parent_link(tmp_path):
    merged = _write(tmp_path, (
        '<link name="base"/>'
        f'<link name="a">{_INERTIAL.format(x=0.0, m=1.0)}</link>'
        f'<link name="b">{_INERTIAL.format(x=0.0, m=2.0)}</link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        '<joint name="f" type="fixed"><parent link="a"/><child link="b"/>'
        '<origin xyz="0.5 0 0"/></joint>'
    ))
    robot = load_urdf(merged)
    assert robot.n_joints == 1
    mass, com, inertia = to_com(robot.parameters)
    assert_close(mass, [3.0])
    assert_close(com, [[1.0 / 3.0, 0.0, 0.0]])  # (1 * 0 + 2 * 0.5) / 3
    # about the merged CoM: two bodies of 0.01 on z, whose CoMs sit at -1/3 and +1/6 from it
    assert_close(inertia[0, 2, 2], 0.02 + 1.0 * (1 / 3) ** 2 + 2.0 * (1 / 6) ** 2)


def test_continuous_and_prismatic_joints(tmp_path):
    path = _write(tmp_path, (
        '<link name="base"/>'
        f'<link name="a">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        f'<link name="b">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        '<joint name="c" type="continuous"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0.6 0.8"/></joint>'
        '<joint name="p" type="prismatic"><parent link="a"/><child link="b"/>'
        '<axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="100" velocity="1"/></joint>'
    ))
    robot = load_urdf(path)
    assert [j.kind for j in robot.joints] == ["revolute", "prismatic"]
    assert_close(robot.joints[0].axis, [0.0, 0.6, 0.8])
    assert np.isinf(robot.limits.lower[0]) and robot.limits.lower[1] == -0.5
    assert robot.limits.torque[1] == 100.0


def test_tree_is_rejected(tmp_path):
    path = _write(tmp_path, (
        '<link name="base"/>'
        f'<link name="a">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        f'<link name="b">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        '<joint name="ja" type="revolute"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        '<joint name="jb" type="revolute"><parent link="base"/><child link="b"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
    ))
    with pytest.raises(ValueError, match=r"is a tree, not a serial chain.*'ja', 'jb'"):
        load_urdf(path)


def test_loop_is_rejected(tmp_path):
    path = _write(tmp_path, (
        '<link name="base"/>'
        f'<link name="a">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        f'<link name="b">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        '<joint name="j1" type="continuous"><parent link="base"/><child link="a"/></joint>'
        '<joint name="j2" type="continuous"><parent link="a"/><child link="b"/></joint>'
        '<joint name="j3" type="continuous"><parent link="b"/><child link="a"/></joint>'
    ))
    with pytest.raises(ValueError, match=r"cannot parse URDF.*no loops"):
        load_urdf(path)


def test_mimic_joint_is_rejected(tmp_path):
    path = _write(tmp_path, (
        '<link name="base"/>'
        f'<link name="a">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        f'<link name="b">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        '<joint name="j1" type="continuous"><parent link="base"/><child link="a"/></joint>'
        '<joint name="j2" type="continuous"><parent link="a"/><child link="b"/>'
        '<mimic joint="j1" multiplier="2"/></joint>'
    ))
    with pytest.raises(ValueError, match=r"joint 'j2' has unsupported type.*no mimic joints"):
        load_urdf(path)


def test_revolute_without_position_limits_is_unbounded(tmp_path):
    path = _write(tmp_path, (
        '<link name="base"/>'
        f'<link name="a">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0 1"/><limit effort="0" velocity="2"/></joint>'
    ))
    limits = load_urdf(path).limits
    assert (limits.lower[0], limits.upper[0]) == (-np.inf, np.inf)
    assert limits.torque[0] == np.inf and limits.velocity[0] == 2.0


def test_unsupported_joint_is_rejected(tmp_path):
    path = _write(tmp_path, (
        '<link name="base"/>'
        f'<link name="a">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        '<joint name="float" type="floating"><parent link="base"/><child link="a"/></joint>'
    ))
    with pytest.raises(ValueError, match="joint 'float' has unsupported type"):
        load_urdf(path)


def test_malformed_and_missing_files(tmp_path):
    with pytest.raises(ValueError, match=r"URDF .*absent\.urdf' does not exist"):
        load_urdf(tmp_path / "absent.urdf")
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='r'><link name='a'></robot>")
    with pytest.raises(ValueError, match="`path`: cannot parse URDF"):
        load_urdf(bad)
    unparsable = _write(tmp_path, (
        '<link name="base"/><link name="a"><inertial><origin xyz="0.1 zero 0"/>'
        '<mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
        '</inertial></link><joint name="j" type="continuous"><parent link="base"/>'
        '<child link="a"/></joint>'
    ), "unparsable.urdf")
    with pytest.raises(ValueError, match=r"`path`: cannot parse URDF .*unparsable\.urdf'"):
        load_urdf(unparsable)
    path = _write(tmp_path, '<link name="base"/>', "still.urdf")
    with pytest.raises(ValueError, match="has no moving joint"):
        load_urdf(path)


def test_tool_frame_must_exist(tmp_path):
    path = _write(tmp_path, (
        '<link name="base"/>'
        f'<link name="a">{_INERTIAL.format(x=0.1, m=1.0)}</link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
    ))
    with pytest.raises(ValueError, match="`tool_frame`: no frame 'flange'"):
        load_urdf(path, tool_frame="flange")


def test_a_urdf_robot_identifies_with_viscous_coulomb_offset_friction_by_default(tmp_path):
    from dynid.model import default_friction

    path = tmp_path / "panda.urdf"
    path.write_text(_panda_urdf(load_robot("panda")))
    urdf = load_urdf(path)
    assert default_friction(urdf).name == "viscous-coulomb"
    assert default_friction(load_robot("arm3")).name == load_robot("arm3").friction.name


def test_excite_derives_or_takes_acceleration_limits_for_a_urdf(tmp_path, capsys):
    from dynid.cli import main

    path = tmp_path / "panda.urdf"
    path.write_text(_panda_urdf(load_robot("panda")))
    out = tmp_path / "traj.csv"
    argv = ["excite", str(path), "-o", str(out), "--harmonics", "2", "--period", "4",
            "--rate", "50", "--grid-rate", "25", "--starts", "1", "--iterations", "2", "--quiet"]
    # a URDF has no acceleration limits: derived from its efforts and inertia, and said so
    assert main([arg for arg in argv if arg != "--quiet"]) == 0
    assert "acceleration limits derived" in capsys.readouterr().out and out.exists()
    assert main([*argv, "--acceleration-limit", "1", "2"]) == 2
    assert "one value or 7 (one per joint), got 2" in capsys.readouterr().err
    assert main([*argv, "--acceleration-limit", "10"]) == 0
    assert out.exists() and out.with_suffix(".yaml").exists()
