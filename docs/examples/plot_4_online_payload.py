"""
A payload picked up mid-task, found online
==========================================

A Panda tracks a trajectory in closed loop; after two seconds it carries 2 kg at the flange
that its controller knows nothing about. An online estimator that knows the arm's own model
reads the log as it would arrive from the robot, a block of 10 samples (10 ms) at a time, and
tracks the payload's mass and centre of mass by recursive least squares with exponential
forgetting on ``tau - tau_arm = Y_payload phi`` (:class:`dynid.identification.OnlinePayload`).
The same object takes one sample per call in a 1 kHz loop.
"""

import matplotlib.pyplot as plt
import numpy as np

import dynid
from dynid.data.dataset import concatenate
from dynid.excitation import random_fourier
from dynid.identification import OnlinePayload
from dynid.simulate.twin import with_payload

robot = dynid.load_robot("panda")
reference = random_fourier(robot, harmonics=5, seed=0)
sensor = dynid.SensorModel(torque_noise_std=0.05)

# %%
# The twin has no event that changes its body mid-run, so the log joins two closed-loop runs
# on the same reference: the bare arm for 2 s, then the arm with the payload, from the
# reference state at 2 s. The controller's model stays the bare arm's.
before, after, mass, com_tool = 2.0, 3.0, 2.0, (0.0, 0.0, 0.05)
bare = dynid.simulate_closed_loop(robot, reference, duration=before, sensor=sensor, seed=0)
loaded = dynid.simulate_closed_loop(with_payload(robot, mass, com_tool), reference,
                                    duration=after, sensor=sensor, controller=robot,
                                    start=before, seed=1)
# the first run's last sample is at the instant of the change, the second's first too
log = concatenate([bare.select(slice(0, bare.n_samples - 1)), loaded])

# %%
# Feed it block by block, as a stream would arrive; keep the estimate after every block.
estimator = OnlinePayload(robot, forgetting=0.99)
block = 10
times, masses, coms = [], [], []
for start in range(0, log.n_samples, block):
    rows = slice(start, start + block)
    estimator.update(log.q[rows], log.dq[rows], log.ddq[rows], log.tau[rows])
    times.append(log.t[min(start + block, log.n_samples) - 1])
    masses.append(estimator.mass)
    coms.append(estimator.com_tool)
times, masses, coms = np.array(times), np.array(masses), np.array(coms)
coms[masses < 0.2] = np.nan  # no centre of mass without a mass to carry it
settled = times > before + 0.5
print(f"mass after the change: {masses[settled].mean():.3f} kg "
      f"(true {mass} kg, error {abs(masses[settled].mean() - mass) / mass:.2%})")
print(f"centre of mass (tool frame): {np.round(coms[settled].mean(axis=0), 4)} m "
      f"(true {com_tool})")

# %%
fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
top.plot(times, masses, label="estimate")
top.axhline(mass, color="k", lw=0.8, ls="--", label="payload")
top.axvline(before, color="grey", lw=0.8)
top.set_ylabel("mass [kg]")
top.legend(loc="upper left")
bottom.plot(times, coms * 100, label=["x", "y", "z"])
bottom.axvline(before, color="grey", lw=0.8)
bottom.set_ylim(-10, 15)
bottom.set_ylabel("CoM, tool frame [cm]")
bottom.set_xlabel("time [s]")
bottom.legend(loc="upper left")
fig.tight_layout()
