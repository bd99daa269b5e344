"""The digital twin: open-loop and closed-loop simulation of a robot with a sensor model
(``twin``) under a control law (``controller``); the closed loop's control periods compiled in
one serial loop (``_closed_loop``), with as many RK4 steps per period as the truth's fastest
dynamics need (``_substeps``); external contacts on the arm (``contacts``).
"""

from dynid.simulate._substeps import ClosedLoopError as ClosedLoopError
from dynid.simulate.contacts import Contact as Contact
from dynid.simulate.contacts import external_torques as external_torques
from dynid.simulate.contacts import parse_contact as parse_contact
from dynid.simulate.controller import Controller as Controller
from dynid.simulate.twin import SensorModel as SensorModel
from dynid.simulate.twin import closed_loop_pieces as closed_loop_pieces
from dynid.simulate.twin import simulate_closed_loop as simulate_closed_loop
from dynid.simulate.twin import simulate_open_loop as simulate_open_loop

__all__ = [
    "ClosedLoopError",
    "Contact",
    "Controller",
    "SensorModel",
    "closed_loop_pieces",
    "external_torques",
    "parse_contact",
    "simulate_closed_loop",
    "simulate_open_loop",
]
