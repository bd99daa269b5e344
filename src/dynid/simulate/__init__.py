"""The digital twin: open-loop and closed-loop simulation of a robot with a sensor model
(``twin``) under a control law (``controller``); the closed loop's control periods compiled in
one serial loop (``_closed_loop``), with as many RK4 steps per period as the truth's fastest
dynamics need (``_substeps``); external contacts on the arm (``contacts``); a truth that differs
from the robot file a user identifies with, written beside the log (``truth``); the arm
simulated by MuJoCo instead, an engine no one here wrote (``mujoco_twin``, mujoco imported
when a run starts).
"""

from dynid.simulate._substeps import ClosedLoopError as ClosedLoopError
from dynid.simulate.contacts import Contact as Contact
from dynid.simulate.contacts import external_torques as external_torques
from dynid.simulate.contacts import parse_contact as parse_contact
from dynid.simulate.controller import Controller as Controller
from dynid.simulate.mujoco_twin import simulate_mujoco as simulate_mujoco
from dynid.simulate.truth import TwinTruth as TwinTruth
from dynid.simulate.truth import load_truth as load_truth
from dynid.simulate.truth import perturbed as perturbed
from dynid.simulate.truth import twin_truth as twin_truth
from dynid.simulate.twin import SensorModel as SensorModel
from dynid.simulate.twin import closed_loop_pieces as closed_loop_pieces
from dynid.simulate.twin import simulate_closed_loop as simulate_closed_loop
from dynid.simulate.twin import simulate_open_loop as simulate_open_loop

__all__ = [
    "ClosedLoopError",
    "Contact",
    "Controller",
    "SensorModel",
    "TwinTruth",
    "closed_loop_pieces",
    "external_torques",
    "load_truth",
    "parse_contact",
    "perturbed",
    "simulate_closed_loop",
    "simulate_mujoco",
    "simulate_open_loop",
    "twin_truth",
]
