"""Vendor descriptions as they come (issue 31): a xacro read wherever a URDF is, its ROS
packages found by option, environment or the folders above it, its arguments given by name;
Franka's <dynamics> extension read as friction; hostile xacros refused by name, in a child
process that leaves the caller's xacro untouched."""

from __future__ import annotations

import struct
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import yaml
from conftest import assert_close, random_states

from dynid.cli import _parser, main
from dynid.dynamics import rnea
from dynid.friction.models import ViscousCoulomb
from dynid.robot import URDFWarning, load_robot, load_robot_file, load_urdf, save_robot
from dynid.robot import _xacro as xacro_module
from dynid.robot._packages import find_package

# the my_arm package: a vendor's layout in miniature (a top file that includes a macro file
# and loads its numbers from YAML through $(find), a package:// collision mesh)
TOP = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="my_arm">
  <xacro:arg name="arm_id" default="arm"/>
  <xacro:arg name="payload" default="0.0"/>
  <xacro:include filename="$(find my_arm)/urdf/macros.xacro"/>
  <xacro:property name="config" value="${xacro.load_yaml('$(find my_arm)/config/arm.yaml')}"/>
  <xacro:property name="prefix" value="$(arg arm_id)_"/>
  <link name="${prefix}base"/>
  <xacro:arm_link name="${prefix}l1" mass="${config['l1']['mass']}" com="0 0 0.1"
                  mesh="package://my_arm/meshes/l1.stl"/>
  <xacro:arm_link name="${prefix}l2" mass="${config['l2']['mass'] + $(arg payload)}"
                  com="0.15 0 0" mesh=""/>
  <xacro:arm_joint name="${prefix}j1" parent="${prefix}base" child="${prefix}l1"
                   xyz="0 0 0.1" rpy="0 0 0" config="${config['j1']}"/>
  <xacro:arm_joint name="${prefix}j2" parent="${prefix}l1" child="${prefix}l2"
                   xyz="0 0 0.3" rpy="${pi/2} 0 0" config="${config['j2']}"/>
</robot>
"""
MACROS = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="arm_link" params="name mass com mesh">
    <link name="${name}">
      <inertial><origin xyz="${com}"/><mass value="${mass}"/>
        <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.02"/></inertial>
      <xacro:if value="${mesh != ''}">
        <collision><geometry><mesh filename="${mesh}"/></geometry></collision>
      </xacro:if>
    </link>
  </xacro:macro>
  <xacro:macro name="arm_joint" params="name parent child xyz rpy config">
    <joint name="${name}" type="revolute">
      <parent link="${parent}"/><child link="${child}"/>
      <origin xyz="${xyz}" rpy="${rpy}"/><axis xyz="0 0 1"/>
      <limit lower="${config['lower']}" upper="${config['upper']}" effort="40" velocity="2"/>
      <dynamics D="1" K="7000" damping="${config['damping']}" friction="${config['friction']}"
                mu_coulomb="${config['mu_coulomb']}" mu_viscous="16"/>
    </joint>
  </xacro:macro>
</robot>
"""
CONFIG = {"l1": {"mass": 3.0}, "l2": {"mass": 2.0},
          "j1": {"lower": -2.5, "upper": 2.5, "damping": 0.4, "friction": 1.2, "mu_coulomb": 0},
          "j2": {"lower": -1.5, "upper": 1.5, "damping": 0.2, "friction": 0.7, "mu_coulomb": 0}}

# the same robot written out by hand
PLAIN = """<robot name="my_arm">
  <link name="arm_base"/>
  <link name="arm_l1"><inertial><origin xyz="0 0 0.1"/><mass value="3.0"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.02"/></inertial></link>
  <link name="arm_l2"><inertial><origin xyz="0.15 0 0"/><mass value="2.0"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.02"/></inertial></link>
  <joint name="arm_j1" type="revolute"><parent link="arm_base"/><child link="arm_l1"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" effort="40" velocity="2"/>
    <dynamics damping="0.4" friction="1.2"/></joint>
  <joint name="arm_j2" type="revolute"><parent link="arm_l1"/><child link="arm_l2"/>
    <origin xyz="0 0 0.3" rpy="1.5707963267948966 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1.5" upper="1.5" effort="40" velocity="2"/>
    <dynamics damping="0.2" friction="0.7"/></joint>
</robot>
"""


def _stl_box(half: float) -> bytes:
    """A binary STL of the 8 corners of a cube (12 triangles; only vertices are read)."""
    corners = [(x, y, z) for x in (-half, half) for y in (-half, half) for z in (-half, half)]
    triangles = [corners[i:i + 3] for i in range(0, 6)] * 2
    body = b"".join(struct.pack("<3f", 0, 0, 1) + b"".join(struct.pack("<3f", *v) for v in t)
                    + b"\0\0" for t in triangles)
    return b"\0" * 80 + struct.pack("<I", len(triangles)) + body


def _package(root, name: str = "my_arm", top: str = TOP, config: dict | None = None):
    """The my_arm package written under ``root/name``; its top file."""
    folder = root / name
    for sub in ("urdf", "config", "meshes"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "urdf" / "arm.urdf.xacro").write_text(top)
    (folder / "urdf" / "macros.xacro").write_text(MACROS)
    (folder / "config" / "arm.yaml").write_text(yaml.safe_dump(config or CONFIG))
    (folder / "meshes" / "l1.stl").write_bytes(_stl_box(0.05))
    return folder / "urdf" / "arm.urdf.xacro"


@pytest.fixture
def arm(tmp_path):
    """The package where its name finds it: in a workspace's src/, above the file."""
    return _package(tmp_path / "ws" / "src")


@pytest.fixture
def checkout(tmp_path):
    """The package in a folder of another name (a git checkout): found only when told."""
    top = _package(tmp_path, "arm_checkout")
    return top, tmp_path / "arm_checkout"


# --- the same robot ----------------------------------------------------------------------


def test_a_xacro_loads_as_the_robot_written_as_plain_urdf(arm, tmp_path, rng):
    plain = tmp_path / "plain.urdf"
    plain.write_text(PLAIN)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Franka's attributes are read or noted, not warned
        robot = load_robot(arm)
    reference = load_urdf(plain)
    assert robot.joint_names == reference.joint_names == ("arm_j1", "arm_j2")
    assert_close(robot.parameters, reference.parameters)
    for key in ("lower", "upper", "velocity", "torque"):
        assert_close(getattr(robot.limits, key), getattr(reference.limits, key))
    assert_close(robot.friction.fv, reference.friction.fv)
    assert_close(robot.friction.fc, reference.friction.fc)
    q, dq, ddq = random_states(rng, 20, robot.n_joints)
    assert_close(rnea(robot, q, dq, ddq), rnea(reference, q, dq, ddq))
    # its package:// mesh was found: link 1's bounds come from the collision geometry
    assert robot.bounds.links[0].basis == "collision"
    assert robot.source.url == str(arm) and robot.source.xacro_args == ()


def test_a_urdf_that_uses_xacro_elements_is_expanded(arm):
    renamed = arm.with_name("arm.urdf")
    renamed.write_text(arm.read_text())
    assert load_urdf(renamed).joint_names == ("arm_j1", "arm_j2")


def test_a_plain_urdf_takes_no_xacro_arguments(tmp_path):
    plain = tmp_path / "plain.urdf"
    plain.write_text(PLAIN)
    with pytest.raises(ValueError, match="is a URDF, not a xacro; it takes no arguments"):
        load_urdf(plain, xacro_args={"arm_id": "x"})
    with pytest.raises(ValueError, match="'panda' is a robot by name"):
        load_robot("panda", xacro_args={"arm_id": "x"})


# --- arguments ---------------------------------------------------------------------------


def test_xacro_arguments_change_the_robot_and_a_typo_is_refused(arm):
    robot = load_robot(arm, xacro_args={"arm_id": "left", "payload": 1.5})
    assert robot.joint_names == ("left_j1", "left_j2")
    assert robot.parameters[1, 0] == pytest.approx(3.5)
    assert dict(robot.source.xacro_args) == {"arm_id": "left", "payload": "1.5"}
    with pytest.raises(ValueError, match=r"'paylod' is not an argument of arm\.urdf\.xacro "
                                         r"\(its arguments: arm_id, payload\)"):
        load_robot(arm, xacro_args={"paylod": 1.5})


# --- packages ----------------------------------------------------------------------------


def test_a_package_is_found_by_option_environment_or_the_folders_above(checkout, arm,
                                                                        monkeypatch):
    top, folder = checkout
    assert load_robot(top, packages={"my_arm": folder}).n_joints == 2
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(arm.parents[2]))  # a folder holding my_arm
    assert load_robot(top).n_joints == 2
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    share = arm.parents[3] / "install" / "share"
    share.mkdir(parents=True)
    (share / "my_arm").symlink_to(arm.parents[1])
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(share.parent))
    assert find_package("my_arm", top.parent) == share / "my_arm"
    assert load_robot(top).n_joints == 2
    # the option first: even where another my_arm would be found
    assert find_package("my_arm", arm.parent, {"my_arm": folder}) == folder


def test_a_missing_package_is_named_with_the_option_that_gives_it(checkout, capsys):
    top, _ = checkout
    with pytest.raises(ValueError) as error:
        load_robot(top)
    message = str(error.value)
    assert "ROS package 'my_arm' ($(find my_arm)) is not found" in message
    assert "--package-path my_arm=DIR" in message and "ROS_PACKAGE_PATH" in message
    assert "(in arm.urdf.xacro)" in message and "\n" not in message
    assert main(["robot", "show", str(top)]) == 2
    assert "--package-path my_arm=DIR" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"`packages`: the folder of 'my_arm', '/nowhere', is "
                                         "not a folder"):
        load_robot(top, packages={"my_arm": "/nowhere"})


# --- Franka's <dynamics> -----------------------------------------------------------------


def test_franka_dynamics_read_as_friction_the_urdf_attributes_first(arm, tmp_path):
    robot = load_robot(arm)
    assert isinstance(robot.friction, ViscousCoulomb)
    assert_close(robot.friction.fv, [0.4, 0.2])  # damping, not Franka's mu_viscous 16
    assert_close(robot.friction.fc, [1.2, 0.7])
    notes = robot.source.notes
    assert "damping 0.4 read, not Franka's mu_viscous 16 (joint arm_j1" in notes
    assert "<dynamics> attributes D, K (all 2 arm joints) not read" in notes
    # a joint that gives Coulomb friction only as mu_coulomb: that one
    text = PLAIN.replace('<dynamics damping="0.2" friction="0.7"/>',
                         '<dynamics damping="0.2" mu_coulomb="0.9" stiction="3"/>')
    path = tmp_path / "franka_like.urdf"
    path.write_text(text)
    with pytest.warns(URDFWarning, match=r"<dynamics> attribute stiction \(joint arm_j2\)"):
        robot = load_urdf(path)
    assert_close(robot.friction.fc, [1.2, 0.9])
    assert "Franka's mu_coulomb as fc (joint arm_j2: no friction given)" in robot.source.notes


# --- what is written reads back alike ----------------------------------------------------


def test_a_robot_file_of_a_xacro_reads_it_again_with_its_arguments(checkout, tmp_path):
    top, folder = checkout
    robot = load_robot(top, packages={"my_arm": folder}, xacro_args={"arm_id": "right"})
    path = tmp_path / "right.yaml"
    save_robot(robot, path)
    spec = yaml.safe_load(path.read_text())
    assert spec["xacro_args"] == {"arm_id": "right"}
    assert spec["packages"] == {"my_arm": "arm_checkout"}  # relative to the robot file
    back = load_robot_file(path)
    assert back.joint_names == ("right_j1", "right_j2")
    assert_close(back.parameters, robot.parameters)
    # the caller's arguments over the file's, and beside them
    assert load_robot_file(path, xacro_args={"payload": 1}).parameters[1, 0] == pytest.approx(3)


def test_a_model_of_a_xacro_robot_loads_and_notices_an_edited_include(checkout, tmp_path, rng):
    from dynid.data import Dataset
    from dynid.identification import identify
    from dynid.model import load_model, save_model

    top, folder = checkout
    robot = load_robot(top, packages={"my_arm": folder}, xacro_args={"payload": 0.5})
    q, dq, ddq = random_states(rng, 200, robot.n_joints)
    data = Dataset(t=0.01 * np.arange(200), q=q, dq=dq, ddq=ddq, tau=rnea(robot, q, dq, ddq))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = identify(robot, data, friction=ViscousCoulomb.zeros(robot.n_joints))
    save_model(model, tmp_path / "model.yaml")
    loaded = load_model(tmp_path / "model.yaml")
    assert dict(loaded.robot.source.xacro_args) == {"payload": "0.5"}
    assert_close(loaded.predict(q, dq, ddq), model.predict(q, dq, ddq), atol=1e-9)
    (folder / "config" / "arm.yaml").write_text(
        yaml.safe_dump({**CONFIG, "l2": {"mass": 2.5}}))
    with pytest.raises(ValueError, match="changed since the model was saved"):
        load_model(tmp_path / "model.yaml")


# --- hostile xacros ----------------------------------------------------------------------

HEAD = '<?xml version="1.0"?>\n<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">\n'


def _hostile(tmp_path, body: str, name: str = "bad.urdf.xacro"):
    path = tmp_path / name
    path.write_text(HEAD + body + "\n</robot>\n")
    return path


@pytest.mark.parametrize(("body", "match"), [
    ('<xacro:include filename="bad.urdf.xacro"/>',
     r"bad\.urdf\.xacro includes itself \(bad\.urdf\.xacro -> bad\.urdf\.xacro\)"),
    ('<xacro:include filename="other.xacro"/>',
     r"bad\.urdf\.xacro includes itself \(bad\.urdf\.xacro -> other\.xacro -> "
     r"bad\.urdf\.xacro\)"),
    ('<xacro:include filename="missing.xacro"/>',
     r"No such file or directory: \S*/missing\.xacro \(in bad\.urdf\.xacro\)$"),
    ("<xacro:property name=\"y\" value=\"${xacro.load_yaml('/dev/zero')}\"/><link name=\"${y}\"/>",
     r"YAML file '/dev/zero' is not a regular file"),
    ('<xacro:macro name="m" params=""><xacro:m/></xacro:macro><xacro:m/>',
     r"the expansion recurses without end .*in macro m \(bad\.urdf\.xacro\)"),
    ('<link name="${undefined_name}"/>', r"name 'undefined_name' is not defined"),
    ('<link name="a"></robot>',
     r"bad\.urdf\.xacro:3:18: not well-formed XML \(mismatched tag\)"),
    ('<link name="${().__class__}"/>', r"invalid name"),
])
def test_hostile_xacros_are_refused_by_name_in_one_line(tmp_path, body, match):
    (tmp_path / "other.xacro").write_text(
        HEAD + '<xacro:include filename="bad.urdf.xacro"/>\n</robot>\n')
    path = _hostile(tmp_path, body)
    with pytest.raises(ValueError, match=match) as error:
        load_urdf(path)
    message = str(error.value)
    assert message.startswith(f"`path`: cannot expand xacro {str(path)!r}: ")
    assert "\n" not in message and "Traceback" not in message


def test_a_huge_file_and_a_doctype_are_refused_before_xacro_parses_them(tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(xacro_module, "MAX_TEXT_BYTES", 10_000)
    (tmp_path / "big.xacro").write_text(HEAD + "<!--" + "x" * 20_000 + "-->\n</robot>\n")
    path = _hostile(tmp_path, '<xacro:include filename="big.xacro"/>')
    with pytest.raises(ValueError, match=r"big\.xacro' is larger than 10000 bytes"):
        load_urdf(path)
    doctype = tmp_path / "doctype.urdf.xacro"
    doctype.write_text('<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY e "x">]>\n'
                       '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"/>\n')
    with pytest.raises(ValueError, match="holds a DOCTYPE declaration"):
        load_urdf(doctype)


def test_an_expression_without_end_is_stopped_by_the_time_and_memory_limits(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setattr(xacro_module, "XACRO_TIMEOUT", 3.0)
    slow = _hostile(tmp_path, '<link name="${9**9**9}"/>', "slow.urdf.xacro")
    with pytest.raises(ValueError, match=r"the expansion took longer than 3 s"):
        load_urdf(slow)
    monkeypatch.setattr(xacro_module, "XACRO_MEMORY", 512 * 2**20)
    big = _hostile(tmp_path, "<link name=\"${'x' * 10**10}\"/>", "big.urdf.xacro")
    with pytest.raises(ValueError, match=r"needs more than 536870912 bytes"):
        load_urdf(big)


def test_includes_beyond_the_file_count_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(xacro_module, "MAX_XACRO_FILES", 5)
    (tmp_path / "leaf.xacro").write_text(HEAD + "</robot>\n")
    body = '<xacro:include filename="leaf.xacro"/>' * 10
    with pytest.raises(ValueError, match="makes more than 5 files"):
        load_urdf(_hostile(tmp_path, body))


# --- the caller's process ----------------------------------------------------------------


def test_loads_from_threads_share_nothing_and_the_callers_xacro_is_untouched(arm):
    import xacro
    from xacro import substitution_args

    hooks = (xacro.parse, substitution_args._eval_find, xacro._global_symbols["xacro"]
             ["load_yaml"])
    names = [f"arm{k}" for k in range(4)]
    with ThreadPoolExecutor(4) as pool:
        robots = list(pool.map(lambda name: load_robot(arm, xacro_args={"arm_id": name}),
                               names))
    assert [r.joint_names[0] for r in robots] == [f"{name}_j1" for name in names]
    assert hooks == (xacro.parse, substitution_args._eval_find,
                     xacro._global_symbols["xacro"]["load_yaml"])


# --- the command line --------------------------------------------------------------------


def test_robot_show_reads_a_xacro_with_package_path_and_xacro_arg(checkout, capsys):
    top, folder = checkout
    assert main(["robot", "show", str(top), "--package-path", f"my_arm={folder}",
                 "--xacro-arg", "arm_id:=left", "--xacro-arg", "payload=1"]) == 0
    out = capsys.readouterr().out
    assert "left_j1" in out and "xacro arguments: arm_id:=left, payload:=1" in out
    assert main(["robot", "show", str(top), "--package-path", f"my_arm={folder}",
                 "--xacro-arg", "arm_id:=a", "--xacro-arg", "arm_id:=b"]) == 2
    assert "`--xacro-arg` gives arm_id more than once" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["robot", "show", str(top), "--package-path", "my_arm"])
    assert "expected NAME=DIR, got 'my_arm'" in capsys.readouterr().err


def _parsers(parser, name: str = "dynid"):
    """Every (sub)command's parser, by its command line."""
    import argparse

    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _parsers(child, f"{name} {sub}")


def test_every_command_that_reads_a_robot_takes_package_path_and_xacro_arg():
    """A robot argument (ROBOT, --robot, MODEL-or-robot) takes the options wherever a URDF is
    read; `dynid bench --robot` names the developer suites' robots, by name only."""
    checked = []
    for name, parser in _parsers(_parser()):
        dests = {action.dest for action in parser._actions}
        options = {o for action in parser._actions for o in action.option_strings}
        reads = "robot" in dests or "--tip" in options or name in ("dynid detect",
                                                                  "dynid export")
        if reads and name != "dynid bench":
            assert {"--package-path", "--xacro-arg"} <= options, name
            checked.append(name)
    assert {"dynid robot show", "dynid identify", "dynid calibrate fit", "dynid detect",
            "dynid data prepare", "dynid benchmark"} <= set(checked)
