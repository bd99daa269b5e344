"""URDFs and robot files a new user may bring that broke dynid (issue 22): each is refused by
name or loads as proper text, never a traceback or a cryptic message."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.robot import (
    MAX_JOINTS,
    MAX_LENGTH,
    MAX_MASS,
    load_robot,
    load_robot_file,
    load_urdf,
    robot_to_dict,
    save_robot,
)
from dynid.robot._urdf_tree import MAX_XML_DEPTH


def _link(name: str, mass: float = 1.0, extra: str = "") -> str:
    return (f'<link name="{name}"><inertial><mass value="{mass}"/><origin xyz="0 0 0.1"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
            f"{extra}</link>")


def _joint(name: str, parent: str, child: str, xyz: str = "0 0 0.2") -> str:
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="0 0 1"/>'
            '<limit lower="-2" upper="2" effort="50" velocity="2"/></joint>')


def _chain(n: int, **link) -> str:
    return '<link name="base"/>' + "".join(
        _link(f"l{k}", **link) + _joint(f"j{k}", "base" if k == 0 else f"l{k - 1}", f"l{k}")
        for k in range(n))


def _write(tmp_path, body: str, name: str = "r.urdf", head: str = "", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes((head + f'<robot name="r">{body}</robot>').encode(encoding))
    return path


def test_a_urdf_without_links_is_not_called_a_loop(tmp_path):
    with pytest.raises(ValueError, match="it has no <link>") as error:
        load_urdf(_write(tmp_path, ""))
    assert "loop" not in str(error.value)


def test_deep_nesting_is_refused_without_recursion(tmp_path):
    deep = "<visual>" * 5000 + "</visual>" * 5000
    path = _write(tmp_path, _link("l0", extra=deep) + _joint("j0", "base", "l0")
                  + '<link name="base"/>')
    with pytest.raises(ValueError, match=f"nested more than {MAX_XML_DEPTH} deep"):
        load_urdf(path)
    # a URDF's own depth is far below the limit
    shallow = "<visual><geometry><box size='0.1 0.1 0.1'/></geometry></visual>"
    assert load_urdf(_write(tmp_path, _link("l0", extra=shallow) + _joint("j0", "base", "l0")
                            + '<link name="base"/>')).n_joints == 1


def test_a_huge_transmission_reduction_is_refused_by_name(tmp_path):
    def transmission(reduction: str) -> str:
        return ('<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>'
                '<joint name="j0"><hardwareInterface>E</hardwareInterface></joint>'
                '<actuator name="m1"><mechanicalReduction>' + reduction
                + '</mechanicalReduction><drake:rotor_inertia xmlns:drake="http://drake.mit.edu"'
                ' value="1e-4"/></actuator></transmission>')

    for reduction in ("1e200", "1e10"):  # overflows a float; beyond any drive
        with pytest.raises(ValueError, match="transmission 't1': the reflected rotor inertia"):
            load_urdf(_write(tmp_path, _chain(1) + transmission(reduction)))
    robot = load_urdf(_write(tmp_path, _chain(1) + transmission("100")))
    assert robot.rotor_inertia[0] == pytest.approx(1.0)


def test_a_far_origin_is_refused_by_name(tmp_path):
    far = "1e200 0 0"
    body = ('<link name="base"/>' + _link("l0") + _joint("j0", "base", "l0") + _link("l1")
            + _joint("j1", "l0", "l1", xyz=far))
    with pytest.raises(ValueError, match="joint 'j1' origin xyz must lie within") as error:
        load_urdf(_write(tmp_path, body))
    assert "NaN" not in str(error.value) and f"{MAX_LENGTH:g} m" in str(error.value)
    # a far visual origin feeds no dynamics: that geometry is not read, and the note says so
    visual = f'<visual><origin xyz="{far}"/><geometry><box size="1 1 1"/></geometry></visual>'
    robot = load_urdf(_write(tmp_path, '<link name="base"/>' + _link("l0", extra=visual)
                             + _joint("j0", "base", "l0")))
    assert "l0 visual: " in robot.source.notes and "origin xyz must lie within" in \
        robot.source.notes
    assert robot.bounds.links[0].basis == "segment"
    assert np.isfinite(robot.bounds.links[0].com_upper).all()


def test_values_whose_dynamics_overflow_are_refused_by_name(tmp_path, capsys):
    path = _write(tmp_path, _chain(2, mass=1e308), name="heavy.urdf")
    with pytest.raises(ValueError, match=r"heavy.urdf: `parameters`: link 1 \('l0'\) has mass "
                                         r"1e\+308 kg, beyond 1e\+06 kg"):
        load_urdf(path)
    assert main(["robot", "show", str(path)]) == 2
    assert "has mass 1e+308 kg" in capsys.readouterr().err
    # the same in a robot file, by its link
    spec = robot_to_dict(load_robot("arm3"))
    spec["inertia"]["links"][1]["mass"] = 1e308
    (tmp_path / "heavy.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ValueError, match=r"heavy.yaml: `parameters`: link 2 \('link2'\) has "
                                         r"mass 1e\+308 kg"):
        load_robot_file(tmp_path / "heavy.yaml")
    spec = robot_to_dict(load_robot("arm3"))
    spec["kinematics"]["joints"][1]["a"] = 1e200
    (tmp_path / "far.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ValueError, match=r"far.yaml: `joints`: joint 2 \('joint2'\) lies 1e\+200 "
                                         "m from the frame before it"):
        load_robot_file(tmp_path / "far.yaml")
    # at the limits the dynamics stay finite
    spec = robot_to_dict(load_robot("arm3"))
    spec["inertia"]["links"][1]["mass"] = MAX_MASS
    (tmp_path / "heavy.yaml").write_text(yaml.safe_dump(spec))
    from dynid.dynamics import rnea

    robot = load_robot_file(tmp_path / "heavy.yaml")
    assert np.isfinite(rnea(robot, np.ones((1, 3)), np.ones((1, 3)), np.ones((1, 3)))).all()


@pytest.mark.parametrize("encoding", ["ISO-8859-1", "UTF-16"])
def test_latin1_and_utf16_urdfs_load_as_proper_text(tmp_path, encoding):
    body = '<link name="base"/>' + _link("glied_ä") + _joint("gelenk_ö", "base", "glied_ä")
    path = _write(tmp_path, body.replace('name="r"', ""), name="arm.urdf",
                  head=f'<?xml version="1.0" encoding="{encoding}"?>', encoding=encoding)
    robot = load_urdf(path)
    assert robot.joint_names == ("gelenk_ö",) and robot.link_names == ("glied_ä",)
    for text in (*robot.joint_names, *robot.link_names, robot.name, robot.source.notes):
        assert isinstance(text, str) and text.encode("utf-8").decode("utf-8") == text
    save_robot(robot, tmp_path / "arm.yaml")
    back = load_robot_file(tmp_path / "arm.yaml")
    assert back.joint_names == robot.joint_names and back.link_names == robot.link_names


def test_chains_beyond_max_joints_are_refused_by_name_and_100_load(tmp_path):
    from dynid.excitation.limits import excitation_limits

    with pytest.raises(ValueError, match=f"has {MAX_JOINTS + 1} arm joints, more than "
                                         f"dynid's MAX_JOINTS = {MAX_JOINTS}"):
        load_urdf(_write(tmp_path, _chain(MAX_JOINTS + 1)))
    robot = load_urdf(_write(tmp_path, _chain(100)))
    assert robot.n_joints == 100 and robot.bounds.derived
    assert np.isfinite(excitation_limits(robot).robot.limits.acceleration).all()
    # a robot file: the table's rows, refused by the same name
    spec = robot_to_dict(load_robot("arm3"))
    rows, links = spec["kinematics"]["joints"], spec["inertia"]["links"]
    spec["kinematics"]["joints"] = [copy.deepcopy(dict(rows[k % 3], name=f"j{k}"))
                                    for k in range(400)]
    spec["inertia"]["links"] = [copy.deepcopy(dict(links[k % 3], name=f"l{k}"))
                                for k in range(400)]
    spec.pop("limits"), spec.pop("friction")
    (tmp_path / "long.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ValueError, match=r"long.yaml: `joints`: 'arm3' has 400 joints, more "
                                         "than dynid's MAX_JOINTS"):
        load_robot_file(tmp_path / "long.yaml")
