"""Base parameters by pivoted QR with a relative tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, random_table_robot

from dynid.model.base_parameters import (
    base_parameters,
    robot_base_parameters,
    structural_regressor,
)


@pytest.mark.parametrize("method", ["rref", "qr"])
def test_full_rank_regressor_keeps_every_parameter(rng, method):
    """FIGAROH returns zero base parameters for a full-rank regressor; we keep all of them."""
    w = rng.standard_normal((50, 6)) * np.logspace(-3, 3, 6)
    base = base_parameters(w, method=method)
    assert base.rank == 6
    assert_close(base.regrouping, np.eye(6), atol=1e-12)
    assert set(base.classification().values()) == {"alone"}


def test_known_structure_is_recovered(rng):
    """Columns: a, b, zero, a + 2b, c  ->  rank 3, p3 unidentifiable, p4 regrouped."""
    a, b, c = rng.standard_normal((3, 40))
    w = np.stack([a, b, np.zeros(40), a + 2 * b, c], axis=1)
    base = base_parameters(w, names=["p1", "p2", "p3", "p4", "p5"])
    assert base.rank == 3
    classes = base.classification()
    assert classes["p3"] == "unidentifiable"
    assert classes["p5"] == "alone"
    assert {classes["p1"], classes["p2"], classes["p4"]} == {"combination"}
    pi = rng.standard_normal(5)
    assert_close(base.reduce(w) @ base.base(pi), w @ pi, atol=1e-12)


def test_tolerance_is_relative_to_the_data(rng):
    robot = random_table_robot(rng, "mdh", 5)
    w = structural_regressor(robot)
    ranks = {base_parameters(w * scale).rank for scale in (1e-6, 1.0, 1e6)}
    assert len(ranks) == 1


def test_base_regressor_reproduces_torques_on_random_robots(rng):
    for convention in ("mdh", "dh"):
        robot = random_table_robot(rng, convention, 6, prismatic=0.3)
        base = robot_base_parameters(robot)
        w = structural_regressor(robot, seed=5)
        pi = robot.parameters.ravel()
        assert_close(base.reduce(w) @ base.base(pi), w @ pi, rtol=1e-9, atol=1e-9)
        assert np.linalg.matrix_rank(base.reduce(w)) == base.rank


def test_bad_inputs():
    with pytest.raises(ValueError, match="at least as many rows as parameters"):
        base_parameters(np.ones((2, 5)))
    with pytest.raises(ValueError, match="all zeros"):
        base_parameters(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="`rtol` must be in"):
        base_parameters(np.eye(3), rtol=2.0)
    with pytest.raises(ValueError, match="`names` must have 3 entries"):
        base_parameters(np.eye(3), names=["a"])


# --- physical quantities: determined, partly, held (dynid.model.identifiability) ----------


@pytest.fixture(scope="module")
def panda_rotor():
    """The Panda's torque regressor with rotor inertias and viscous + Coulomb + offset
    friction: its base parameters, the structural regressor and the classification."""
    from dynid.model import default_friction, model_columns
    from dynid.model.identifiability import physical_identifiability
    from dynid.robot import load_robot

    robot = load_robot("panda")
    friction = default_friction(robot)
    base = robot_base_parameters(robot, friction=friction, rotor_inertia=True)
    random = np.random.default_rng(3)
    q, dq, ddq = random.uniform(-1.5, 1.5, (3, 200, robot.n_joints))
    columns = model_columns(robot, q, dq, ddq, friction=friction, rotor_inertia=True)
    found = physical_identifiability(base, robot.n_joints, rotor_inertia=True,
                                     link_names=robot.link_names,
                                     joint_names=robot.joint_names,
                                     std=np.full(base.rank, 0.01))
    return base, columns.reshape(-1, base.n_parameters), found


def test_the_null_space_is_held(panda_rotor):
    """Link 1 turns about the vertical base axis: its mass and CoM move nothing (their
    columns of the regressor are zero: the torques do not change whatever they are), so
    the prior holds them; link 2's mass (joint 2 on joint 1's origin) too."""
    base, columns, found = panda_rotor
    names = list(base.names)
    for kind, owner, parameters in (("mass", "link1", ["m1"]),
                                    ("com", "link1", ["mx1", "my1", "mz1"]),
                                    ("mass", "link2", ["m2"])):
        quantity = found.find(kind, owner)
        assert quantity.status == "held" and quantity.source == "prior", quantity
        assert quantity.words() == "held by the prior"
        index = [names.index(name) for name in parameters]
        assert np.abs(columns[:, index]).max() == 0.0  # the torques never see them


def test_rotor_inertia_of_joint_1_only_with_its_link(panda_rotor):
    """Joint 1's rotor turns with link 1 about one axis: only Ia1 + Izz1 (+ Iyy2) moves the
    arm, so each is partly determined, with the other named."""
    base, columns, found = panda_rotor
    rotor = found.find("rotor inertia", "joint1")
    assert rotor.status == "partly" and "Izz1" in rotor.partners
    inertia = found.find("inertia", "link1")
    assert (inertia.status, inertia.determined, inertia.held) == ("partly", 0, 5)
    assert "Ia1" in inertia.partners
    names = list(base.names)
    assert_close(columns[:, names.index("Ia1")], columns[:, names.index("Izz1")], atol=1e-12)
    assert "only with Izz1" in rotor.words()


def test_identifiable_quantities_are_determined(panda_rotor):
    """Friction and the distal rotor inertias move the torques alone: determined, with the
    std of their base parameter; link 7's products of inertia too (5 of its 6 entries)."""
    found = panda_rotor[2]
    for kind, owner in (("friction", "fv1"), ("friction", "fc7"),
                        ("rotor inertia", "joint7")):
        quantity = found.find(kind, owner)
        assert quantity.status == "determined" and quantity.std == pytest.approx(0.01)
    assert found.find("inertia", "link7").determined == 5


def test_single_parameters_agree_with_the_regrouping(panda_rotor):
    """A scalar quantity is determined exactly when its parameter is a base parameter alone,
    held when it is unidentifiable (the regrouping's own classification), partly otherwise."""
    base, _, found = panda_rotor
    expected = {"alone": "determined", "combination": "partly", "unidentifiable": "held"}
    classes = base.classification()
    scalars = [q for q in found.quantities if len(q.parameters) == 1]
    assert len(scalars) == 7 + 7 + 21  # masses, rotor inertias, friction coefficients
    for quantity in scalars:
        assert quantity.status == expected[classes[quantity.parameters[0]]], quantity


def test_a_solution_on_its_bounds_is_held_by_them():
    """A mass at its upper bound, a CoM on a face of its box, a rotor inertia at 0: the bound
    sets them; said so, in the text and the JSON round trip."""
    from dynid.model.identifiability import (
        Identifiability,
        bounds_at,
        physical_identifiability,
    )
    from dynid.robot import load_robot
    from dynid.robot.inertia import from_com, to_com

    robot = load_robot("panda")
    mass, com, inertia = (np.array(part) for part in to_com(robot.parameters))
    link = robot.bounds.links[0]
    mass[0] = link.mass[1]
    com[1, 0] = robot.bounds.links[1].com_upper[0]
    parameters = from_com(mass, com, inertia)
    rotor = np.array([0.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    at, notes = bounds_at(parameters, robot.bounds, link_names=robot.link_names,
                          rotor=rotor, joint_names=robot.joint_names)
    assert at[("mass", "link1")] == "upper 10 kg"
    assert at[("com", "link2")] == "x upper"
    assert at[("rotor inertia", "joint1")] == "lower 0"
    assert ("mass", "link3") not in at
    base = robot_base_parameters(robot, rotor_inertia=True)
    found = physical_identifiability(base, 7, rotor_inertia=True, link_names=robot.link_names,
                                     joint_names=robot.joint_names, bounds=at, notes=notes)
    assert found.find("mass", "link1").words() == "held by its bound (upper 10 kg)"
    assert found.find("mass", "link1").source == "bound"
    assert "on its bound (x upper)" in found.find("com", "link2").words()
    again = Identifiability.from_json(found.to_json())
    assert again == found
    assert any("link1: mass held by its bound" in line for line in found.lines())
    with pytest.raises(ValueError, match="not an identifiability table"):
        Identifiability.from_json({"quantities": [{"kind": "mass"}]})


def test_identifiability_bad_inputs():
    from dynid.model.identifiability import physical_identifiability

    base = base_parameters(np.eye(12))
    with pytest.raises(ValueError, match="fewer than the 20 of 2 links"):
        physical_identifiability(base, 2)
    with pytest.raises(ValueError, match="`link_names` must have 1 entries, got 2"):
        physical_identifiability(base, 1, link_names=["a", "b"])
    with pytest.raises(ValueError, match=r"`std` must have shape \(12,\)"):
        physical_identifiability(base, 1, std=np.ones(3))
