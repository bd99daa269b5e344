"""Bounds derived from a URDF that has none written: the description's own parameters inside,
CoM boxes from the link's geometry (boxes, cylinders, spheres, STL meshes) in dynid's link
frame (the URDF joint frame), the segment between joint origins without geometry, the
documented mass bands."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from conftest import assert_close, random_urdf

from dynid.model.consistency import check_consistency
from dynid.robot import derive_bounds, load_robot, load_urdf
from dynid.robot._geometry import mesh_bounds
from dynid.robot.derived_bounds import (
    GEOMETRY_MARGIN,
    LINK_MASS_BAND,
    MASSLESS_LINK_MASS,
    SEGMENT_MARGIN,
    TOTAL_MASS_BAND,
    LinkExtent,
)
from dynid.robot.inertia import to_com

_LIMIT = '<limit lower="-2" upper="2" effort="10" velocity="2"/>'


def _inertial(mass: float, x: float = 0.0, y: float = 0.0, z: float = 0.0) -> str:
    return (f'<inertial><origin xyz="{x} {y} {z}"/><mass value="{mass}"/>'
            '<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>')


def _binary_stl(path, triangles) -> None:
    """A binary STL of ``triangles`` (k, 3, 3)."""
    with open(path, "wb") as out:
        out.write(b"solid but binary".ljust(80, b" "))
        out.write(struct.pack("<I", len(triangles)))
        for triangle in triangles:
            out.write(struct.pack("<3f", 0, 0, 1))
            out.write(struct.pack("<9f", *np.ravel(triangle)))
            out.write(b"\0\0")


def test_mesh_bounds_binary_ascii_obj_and_refusals(tmp_path):
    triangles = np.array([[[0, 0, 0], [1, 0, 0], [0, 2, 0]], [[0, 0, -3], [1, 1, 1], [0, 0, 0]]])
    _binary_stl(tmp_path / "m.stl", triangles)
    assert_close(np.array(mesh_bounds(tmp_path / "m.stl")), [[0, 0, -3], [1, 2, 1]])
    ascii_stl = "solid x\n" + "".join(
        "facet normal 0 0 1\nouter loop\n" + "".join(f"vertex {a} {b} {c}\n" for a, b, c in t)
        + "endloop\nendfacet\n" for t in triangles) + "endsolid x\n"
    (tmp_path / "a.STL").write_text(ascii_stl)
    assert_close(np.array(mesh_bounds(tmp_path / "a.STL")), [[0, 0, -3], [1, 2, 1]])
    (tmp_path / "m.obj").write_text("# obj\nv 0 0 0\nv -1 2 0.5\nvn 0 0 1\nf 1 2 1\n")
    assert_close(np.array(mesh_bounds(tmp_path / "m.obj")), [[-1, 0, 0], [0, 2, 0.5]])
    (tmp_path / "cut.stl").write_bytes((tmp_path / "m.stl").read_bytes()[:-10])
    with pytest.raises(ValueError, match="neither a binary STL"):
        mesh_bounds(tmp_path / "cut.stl")
    (tmp_path / "m.dae").write_text("<COLLADA/>")
    with pytest.raises(ValueError, match=r"\.dae meshes are not read"):
        mesh_bounds(tmp_path / "m.dae")
    (tmp_path / "nan.obj").write_text("v nan 0 0\n")
    with pytest.raises(ValueError, match="non-finite"):
        mesh_bounds(tmp_path / "nan.obj")


def _geometry_arm(tmp_path) -> str:
    """Two links: link a (a box offset along x, turned by its joint's rpy) carrying a fixed
    link with a cylinder; link b with a mesh found through package:// and scaled."""
    package = tmp_path / "my_arm"
    (package / "meshes").mkdir(parents=True)
    (package / "urdf").mkdir()
    _binary_stl(package / "meshes" / "b.stl",
                np.array([[[0, -10, -10], [500, 10, 10], [0, 0, 10]]]))  # millimetres
    text = (
        '<robot name="geo"><link name="base"/>'
        f'<link name="a">{_inertial(2.0, x=0.1)}'
        '<collision><origin xyz="0.1 0 0"/><geometry><box size="0.2 0.1 0.05"/></geometry>'
        '</collision><visual><geometry><sphere radius="5"/></geometry></visual></link>'
        f'<link name="a_cover">{_inertial(0.5, z=0.3)}'
        '<collision><geometry><cylinder radius="0.02" length="0.1"/></geometry></collision>'
        '</link>'
        f'<link name="b">{_inertial(1.0, x=0.25)}'
        '<visual><geometry><mesh filename="package://my_arm/meshes/b.stl" '
        'scale="0.001 0.001 0.001"/></geometry></visual></link>'
        '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>'
        f'<origin xyz="0 0 0.5" rpy="0 0 1.5707963267948966"/><axis xyz="0 0 1"/>{_LIMIT}'
        '</joint>'
        '<joint name="cover" type="fixed"><parent link="a"/><child link="a_cover"/>'
        '<origin xyz="0 0 0.3"/></joint>'
        '<joint name="j2" type="revolute"><parent link="a"/><child link="b"/>'
        f'<origin xyz="0.2 0 0"/><axis xyz="0 1 0"/>{_LIMIT}</joint></robot>'
    )
    path = package / "urdf" / "geo.urdf"
    path.write_text(text)
    return path


def test_com_boxes_come_from_the_geometry_in_the_joint_frame(tmp_path):
    robot = load_urdf(_geometry_arm(tmp_path))
    bounds = robot.bounds
    assert bounds.derived and "geo.urdf" in bounds.source
    assert [link.basis for link in bounds.links] == ["collision", "visual"]
    # link a in its joint frame (the URDF child frame: rpy and the 0.5 m offset do not enter):
    # box x 0..0.2, y +-0.05, z +-0.025; the cover's cylinder at z 0.3 +- 0.05, r 0.02
    lower, upper = np.array([-0.02, -0.05, -0.025]), np.array([0.2, 0.05, 0.35])
    relative, absolute = GEOMETRY_MARGIN
    pad = relative * (upper - lower) + absolute
    assert_close(bounds.links[0].com_lower, lower - pad)
    assert_close(bounds.links[0].com_upper, upper + pad)
    # link b: the mesh in millimetres scaled to metres (the visual: no collision element)
    lower, upper = np.array([0.0, -0.01, -0.01]), np.array([0.5, 0.01, 0.01])
    pad = relative * (upper - lower) + absolute
    assert_close(bounds.links[1].com_lower, lower - pad, atol=1e-7)
    assert_close(bounds.links[1].com_upper, upper + pad, atol=1e-7)
    assert_close(np.array([b.mass for b in bounds.links]),
                 np.outer([2.5, 1.0], LINK_MASS_BAND))
    assert_close(bounds.total_mass, np.array(TOTAL_MASS_BAND) * 3.5)
    assert check_consistency(robot.parameters, bounds).within_bounds


def _contains(bounds, parameters) -> None:
    """The description's links (those with mass: a massless one has no CoM) lie in the
    bounds: mass, CoM box, ellipsoid, inertia ranges; the total mass in its range."""
    heavy = parameters[:, 0] > 0
    assert all(link.mass[0] <= m <= link.mass[1]
               for link, m in zip(bounds.links, parameters[:, 0], strict=True))
    report = check_consistency(parameters, bounds)
    assert report.total_mass_in_range
    assert all(np.array(report.com_in_box)[heavy]), report.to_json()
    assert all(ok is not False for ok in np.array(report.density_realizable)[heavy])
    mass, _, inertia = to_com(parameters[heavy])
    entries = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
    links = [link for link, keep in zip(bounds.links, heavy, strict=True) if keep]
    for link, m, tensor in zip(links, mass, inertia, strict=True):
        assert link.mass[0] <= m <= link.mass[1]
        values = np.array([tensor[a, b] for a, b in entries])
        assert (link.inertia_lower <= values).all() and (values <= link.inertia_upper).all()


@pytest.mark.parametrize("seed", range(4))
def test_random_urdfs_hold_their_own_parameters(tmp_path, seed):
    rng = np.random.default_rng(seed)
    path = tmp_path / "r.urdf"
    path.write_text(random_urdf(rng, 5))
    robot = load_urdf(path)
    assert robot.bounds.derived
    assert {link.basis for link in robot.bounds.links} == {"segment"}
    _contains(robot.bounds, robot.parameters)


def test_segment_without_geometry_and_a_massless_link(tmp_path):
    path = tmp_path / "seg.urdf"
    path.write_text(
        '<robot name="seg"><link name="base"/><link name="a"/>'
        f'<link name="b">{_inertial(4.0, z=0.2)}</link>'
        '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>'
        f'<axis xyz="0 0 1"/>{_LIMIT}</joint>'
        '<joint name="j2" type="revolute"><parent link="a"/><child link="b"/>'
        f'<origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>{_LIMIT}</joint></robot>')
    robot = load_urdf(path)
    virtual, last = robot.bounds.links
    assert virtual.mass == (0.0, MASSLESS_LINK_MASS)  # a massless link: a small absolute band
    relative, absolute = SEGMENT_MARGIN
    pad = relative * 0.4 + absolute  # the segment from j1 to j2: 0.4 m along z
    assert_close(virtual.com_lower, [-pad, -pad, -pad])
    assert_close(virtual.com_upper, [pad, pad, 0.4 + pad])
    assert virtual.ellipsoid_centre is None and virtual.basis == "segment"
    # the last link has no next joint: its segment is a point, the CoM (0.2 m up) is added
    assert last.com_lower[2] < 0.2 < last.com_upper[2]
    _contains(robot.bounds, robot.parameters)


def test_derive_bounds_of_a_table_robot_uses_segments():
    robot = load_robot("panda-cad")
    bounds = derive_bounds(robot, source="panda-cad")
    assert bounds.derived and bounds.n_links == 7
    assert {link.basis for link in bounds.links} == {"segment"}
    assert check_consistency(robot.parameters, bounds).within_bounds
    with pytest.raises(ValueError, match=r"`extents` must list 7 links, got 1"):
        derive_bounds(robot, [None])
    with pytest.raises(ValueError, match="`basis` must be"):
        LinkExtent(np.zeros(3), np.ones(3), "guess")
    with pytest.raises(ValueError, match="`lower` must be <= `upper`"):
        LinkExtent(np.ones(3), np.zeros(3), "segment")


def test_written_bounds_are_not_derived_and_derived_ones_write_out():
    from dynid.robot import ParameterBounds

    written = load_robot("panda").bounds
    assert not written.derived
    derived = derive_bounds(load_robot("panda-cad"))
    back = ParameterBounds.from_dict(derived.to_dict(), 7)
    assert not back.derived  # written out, they are the user's to edit
    assert_close(back.links[3].com_upper, derived.links[3].com_upper)


@pytest.mark.parametrize("name", ["jaco2", "arm3", "panda-cad"])
def test_builtins_without_written_bounds_get_derived_ones(name, tmp_path):
    """jaco2, arm3 and panda-cad write no bounds: they are derived as a URDF's are, hold the
    robot's own parameters, and a robot file saved from them derives them again."""
    from dynid.robot import load_robot_file, robot_to_dict, save_robot

    robot = load_robot(name)
    assert robot.bounds is not None and robot.bounds.derived
    assert f"from {name}.yaml" in robot.bounds.source
    expected = derive_bounds(robot, source=f"{name}.yaml")
    assert_close(robot.bounds.to_dict()["links"][1]["com"]["upper"],
                  expected.to_dict()["links"][1]["com"]["upper"], rtol=0, atol=0)
    assert check_consistency(robot.parameters, robot.bounds).within_bounds
    assert "bounds" not in robot_to_dict(robot)  # derived again on loading
    save_robot(robot, tmp_path / "copy.yaml")
    copy = load_robot_file(tmp_path / "copy.yaml")
    assert copy.bounds.derived
    assert_close(copy.bounds.links[2].com_lower, robot.bounds.links[2].com_lower)
    # written bounds win over derived ones
    assert not load_robot("panda").bounds.derived


def test_the_constrained_methods_accept_a_builtin_without_written_bounds():
    from dynid.identification.retrieval.retrieve import retrieve_sdp
    from dynid.model.base_parameters import robot_base_parameters

    robot = load_robot("arm3")  # "has no parameter bounds; give them" before issue 22
    base = robot_base_parameters(robot)
    result = retrieve_sdp(robot, base, base.base(robot.parameters.ravel()))
    assert result.success and result.consistency.within_bounds
