"""The digital twin: open-loop and closed-loop simulation of a robot with a sensor model
(``twin``); the closed loop's control periods compiled in one serial loop (``_closed_loop``).
"""

from dynid.simulate.twin import SensorModel as SensorModel
from dynid.simulate.twin import simulate_closed_loop as simulate_closed_loop
from dynid.simulate.twin import simulate_open_loop as simulate_open_loop

__all__ = [
    "SensorModel",
    "simulate_closed_loop",
    "simulate_open_loop",
]
