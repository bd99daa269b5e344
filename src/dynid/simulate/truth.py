"""A twin whose truth differs from the description the user identifies with.

A real arm is never its URDF: the CAD's masses and inertias are off by some per cent, the motors
add reflected rotor inertia the URDF does not hold, the joints have dry and viscous friction.
``twin_truth`` builds such a truth from a description, so that a test (or a user, from their
own URDF) sees what identification does when the model given is not the one that moves:

- ``perturbed``: each link's mass, centre of mass and inertia about the CoM moved by a seeded
  random relative amount, the body kept physical (see its docstring);
- ``rotor_inertia``: the drives' reflected inertia per joint (``Robot.rotor_inertia``);
- ``viscous`` and ``coulomb``: a viscous-Coulomb friction truth.

The truth is written beside the log (``truth_path``: ``log.csv`` -> ``log.truth.yaml``) in a
``dynid-twin-truth/1`` file (``truth_to_dict``, read back by ``load_truth``): the truth's link
parameters, rotor inertias and friction, the robot file of the truth where the robot can be
written as one, and what the log's sensor did (torque channel delay, velocities left out).
A coupled transmission (motors driving several joints) is not part of the truth here: it
belongs to the robot (``Robot``'s transmission, where the robot holds one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._reading import check_keys, load_yaml
from dynid._validation import as_vector
from dynid.friction.models import (
    FrictionModel,
    ViscousCoulomb,
    friction_from_dict,
)
from dynid.robot import Robot, robot_from_dict, robot_to_dict
from dynid.robot.inertia import PARAMETER_NAMES, from_pseudo_inertia, pseudo_inertia

__all__ = ["MAX_PERTURBATION", "TRUTH_SCHEMA", "TwinTruth", "load_truth", "perturbed",
           "truth_path", "truth_to_dict", "twin_truth"]

TRUTH_SCHEMA = "dynid-twin-truth/1"

# the largest relative perturbation: a mass factor 1 - r must stay well above zero
MAX_PERTURBATION = 0.9


def perturbed(robot: Robot, relative: float, *, seed: int = 0) -> Robot:
    """``robot`` with every link's inertial parameters moved by up to ``relative`` (a fraction,
    0.1 for 10 %), drawn from ``seed``, each link still a physical body.

    Per link of mass m > 0, with the CoM c and the second moment of mass about it per unit
    mass ``S = (1/m) int (x - c)(x - c)^T dm`` (``pseudo_inertia``):

    - the mass becomes ``m (1 + r u)``;
    - the CoM moves by ``r rho v``, ``rho`` the link's size (the larger of ``|c|`` and its
      radius of gyration ``sqrt(tr S)``);
    - S becomes ``L S L^T`` with ``L = E + (r / 2) G``: the body deformed by a near-identity
      linear map, so the inertia about the CoM changes by about ``r`` relative;

    u, and the entries of v and G, uniform in [-1, 1]. The new pseudo-inertia
    ``m' [[L S L^T + c' c'^T, c'], [c'^T, 1]]`` is positive semi-definite whenever the old one
    is: the perturbed link is the old body stretched, sheared and moved, so it is a physical
    body by construction, never repaired afterwards. A massless link stays massless."""
    if isinstance(relative, bool) or not (isinstance(relative, (int, float, np.floating))
                                          and 0 <= relative <= MAX_PERTURBATION):
        raise ValueError(f"`relative` must be a fraction in [0, {MAX_PERTURBATION:g}] (0.1 for "
                         f"10 %), got {relative!r:.40}")
    rng = np.random.default_rng(seed)
    pseudo = pseudo_inertia(robot.parameters)
    out = np.array(robot.parameters, dtype=float)
    for k, j in enumerate(pseudo):
        u, v, g = rng.uniform(-1.0, 1.0, 1)[0], rng.uniform(-1.0, 1.0, 3), \
            rng.uniform(-1.0, 1.0, (3, 3))  # drawn for every link: link k's draw is fixed
        mass = j[3, 3]
        if not mass > 0:
            continue
        com = j[:3, 3] / mass
        second = j[:3, :3] / mass - np.outer(com, com)
        size = max(float(np.linalg.norm(com)), float(np.sqrt(max(np.trace(second), 0.0))))
        stretch = np.eye(3) + 0.5 * relative * g
        mass_new = mass * (1.0 + relative * u)
        com_new = com + relative * size * v
        block = np.empty((4, 4))
        block[:3, :3] = stretch @ second @ stretch.T + np.outer(com_new, com_new)
        block[:3, 3] = block[3, :3] = com_new
        block[3, 3] = 1.0
        out[k] = from_pseudo_inertia(mass_new * block)
    return robot.with_parameters(out)


def twin_truth(robot: Robot, *, perturb: float = 0.0, rotor_inertia: ArrayLike | None = None,
               viscous: ArrayLike | None = None, coulomb: ArrayLike | None = None,
               seed: int = 0) -> Robot:
    """The truth of a twin of ``robot`` (the description): its links ``perturbed`` by
    ``perturb`` (a fraction; 0 keeps them) from ``seed``, ``rotor_inertia`` [kg m^2] (one value
    for every joint or ``(n,)``; default the robot's own), and a viscous-Coulomb friction where
    ``viscous`` fv [N m s/rad] or ``coulomb`` fc [N m] is given (one value or ``(n,)``; the
    other coefficients the robot's own viscous-Coulomb ones, else zero)."""
    n = robot.n_joints
    truth = perturbed(robot, perturb, seed=seed) if perturb else robot
    if rotor_inertia is not None:
        truth = truth.with_rotor_inertia(_per_joint("rotor_inertia", rotor_inertia, n))
    if viscous is not None or coulomb is not None:
        own = robot.friction if isinstance(robot.friction, ViscousCoulomb) else \
            ViscousCoulomb.zeros(n)
        fv = own.fv if viscous is None else _per_joint("viscous", viscous, n)
        fc = own.fc if coulomb is None else _per_joint("coulomb", coulomb, n)
        if (fv < 0).any() or (fc < 0).any():
            raise ValueError(f"`viscous` and `coulomb` must be >= 0 (a friction dissipates), "
                             f"got fv {fv.tolist()}, fc {fc.tolist()}")
        truth = truth.with_friction(ViscousCoulomb(fv, fc, own.fo))
    return truth


def _per_joint(name: str, values: ArrayLike, n: int) -> NDArray:
    """One value for every joint, or one per joint, as ``(n,)``."""
    array = np.atleast_1d(np.asarray(values, dtype=float))
    if array.ndim == 1 and array.size == 1:
        array = np.full(n, array[0])
    return as_vector(name, array, n)


def truth_path(log: str | Path) -> Path:
    """Where the truth of the twin log ``log`` is written: ``log.csv`` -> ``log.truth.yaml``."""
    return Path(log).with_suffix(".truth.yaml")


def truth_to_dict(truth: Robot, *, description: Robot, log: dict,
                  perturbation: dict | None = None, folder: str | Path | None = None) -> dict:
    """The ``dynid-twin-truth/1`` mapping of ``truth`` (a twin of ``description``): its link
    parameters ``(n, 10)`` in ``PARAMETER_NAMES`` order (link frame, about its origin), rotor
    inertias and friction; ``robot``, the robot file of the truth (``robot_to_dict``, a URDF
    referenced from ``folder``), where the robot can be written as one (else ``robot_note``
    says why not); ``perturbation`` as drawn; ``log``: what the sensor did."""
    out: dict = {"schema": TRUTH_SCHEMA, "description": description.name,
                 "joints": list(truth.joint_names), "links": list(truth.link_names),
                 "parameter_names": list(PARAMETER_NAMES),
                 "parameters": np.asarray(truth.parameters, dtype=float).tolist(),
                 "rotor_inertia": np.asarray(truth.rotor_inertia, dtype=float).tolist(),
                 "friction": truth.friction.to_dict()}
    if perturbation:
        out["perturbation"] = dict(perturbation)
    try:
        out["robot"] = robot_to_dict(truth, folder=folder)
    except ValueError as error:  # a robot built in code: its parameters above say it all
        out["robot_note"] = f"no robot file: {error}"
    out["log"] = dict(log)
    return out


@dataclass(frozen=True)
class TwinTruth:
    """A twin log's truth, as ``load_truth`` reads it: ``parameters`` ``(n, 10)``,
    ``rotor_inertia`` ``(n,)``, ``friction``; ``robot`` (the truth as a Robot, None where the
    file holds no robot file); ``log`` (the sensor's settings: ``torque_delay_s``,
    ``velocities``, ...); ``perturbation`` (``relative``, ``seed``; empty when none)."""

    parameters: NDArray
    rotor_inertia: NDArray
    friction: FrictionModel
    robot: Robot | None
    log: dict
    perturbation: dict


_TRUTH_KEYS = ("schema", "description", "joints", "links", "parameter_names", "parameters",
               "rotor_inertia", "friction", "perturbation", "robot", "robot_note", "log")


def load_truth(path: str | Path) -> TwinTruth:
    """Read a ``dynid-twin-truth/1`` file (``truth_to_dict``)."""
    path = Path(path)
    spec = load_yaml(path, what="twin truth file")
    if not isinstance(spec, dict) or spec.get("schema") != TRUTH_SCHEMA:
        raise ValueError(f"`path`: {path.name} is not a twin truth file (schema "
                         f"{TRUTH_SCHEMA!r} expected)")
    check_keys(spec, _TRUTH_KEYS, "twin truth")
    parameters = np.asarray(spec["parameters"], dtype=float)
    n = parameters.shape[0]
    if parameters.shape != (n, len(PARAMETER_NAMES)) or n == 0:
        raise ValueError(f"`path`: {path.name}: `parameters` must be an (n, 10) table, got "
                         f"shape {parameters.shape}")
    robot = (robot_from_dict(spec["robot"], folder=path.parent, file_name=path.name)
             if spec.get("robot") is not None else None)
    return TwinTruth(parameters=parameters,
                     rotor_inertia=as_vector("rotor_inertia", spec["rotor_inertia"], n),
                     friction=friction_from_dict(spec["friction"], n), robot=robot,
                     log=dict(spec.get("log") or {}),
                     perturbation=dict(spec.get("perturbation") or {}))
