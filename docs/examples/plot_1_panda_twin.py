"""
The Panda twin, end to end
==========================

The whole workflow on the built-in Panda, with the digital twin standing in for the arm: the
truth is ``panda`` (Gaz et al. 2019's feasible parameters and sigmoid friction), we excite it,
log it with realistic sensors, preprocess the logs, identify the base parameters (OLS) and a
physically consistent full set (CLS-3), and validate both on a second, held-out trajectory.
``dynid demo`` does the same at full length (20 s at 1 kHz, closed loop, an optimised
excitation).
"""

import matplotlib.pyplot as plt
import numpy as np

import dynid

robot = dynid.load_robot("panda")
print(robot)
print("base parameters:", dynid.robot_base_parameters(robot).rank)  # 43 (Gaz Table III)

# %%
# Excite and log
# --------------
# Two random Fourier trajectories inside the joint limits (5 harmonics of
# :math:`\omega_f = 0.15\pi` rad/s): one to identify from, one to validate on.
# ``dynid.optimize_excitation`` designs a better-conditioned one (see the URDF example); it
# takes longer on seven joints. The twin logs 10 s of each at 1 kHz, the way a real Panda would:
# 20-bit encoders, velocities from position differences, 0.1 N m torque noise, and no
# accelerations.

identification_trajectory = dynid.random_fourier(robot, seed=0)
validation_trajectory = dynid.random_fourier(robot, seed=1)
sensor = dynid.SensorModel(torque_noise_std=0.1, position_resolution=2 * np.pi / 2**20,
                           velocity_from_positions=True)
log = dynid.simulate_open_loop(robot, identification_trajectory, duration=10.0, rate=1000.0,
                               sensor=sensor, seed=0)
check_log = dynid.simulate_open_loop(robot, validation_trajectory, duration=10.0, rate=1000.0,
                                     sensor=sensor, seed=1)
print(log.t.shape, log.q.shape, "accelerations logged:", log.ddq is not None)

# %%
# Preprocess
# ----------
# Zero-phase low-pass filter, accelerations by differentiation, filter edges trimmed.

data = dynid.prepare(log)
check = dynid.prepare(check_log)
print(len(data.t), "samples ready:", "; ".join(data.metadata["preprocessing"]))

# %%
# Identify
# --------
# Ordinary least squares on the base parameters, with viscous + Coulomb + offset friction
# columns (Gaz eq. 24); then CLS-3 (the Jaco2 paper): the full link parameters, physically
# consistent, within the robot file's bounds, regularised towards Franka's CAD values.

ols = dynid.identify(robot, data)
print(f"OLS: rank {ols.report['rank']}, condition number {ols.report['condition_number']:.0f}, "
      f"relative error {ols.report['relative_error_percent']:.2f} %")
print("first base parameters: value, relative standard deviation, regrouping")
for row in ols.table()[:5]:
    print(f"  {row['value']:+9.4f}  {row['relative_std_percent']:5.1f} %  {row['expression']}")

cls3 = dynid.identify_constrained(robot, data, method="cls3",
                                  prior=dynid.load_robot("panda-cad").parameters)
print("CLS-3:", cls3.status, "| consistent:", cls3.consistency.consistent,
      f"| total mass {cls3.parameters[:, 0].sum():.2f} kg (truth {robot.total_mass:.2f} kg)")

# %%
# Validate on the held-out trajectory
# -----------------------------------

for name, model in (("OLS", ols), ("CLS-3", cls3.model)):
    report = dynid.validate_model(model, check, n_poses=200)
    print(f"--- {name}")
    print("\n".join(report.lines()))

# %%
# Measured and predicted torques on the validation log, joints 1, 2 and 4.

predicted = cls3.model.predict(check.q, check.dq, check.ddq)
fig, axes = plt.subplots(3, 1, sharex=True, figsize=(8, 6))
for ax, j in zip(axes, (0, 1, 3), strict=True):
    ax.plot(check.t, check.tau[:, j], lw=0.8, label="measured")
    ax.plot(check.t, predicted[:, j], lw=0.8, label="CLS-3")
    ax.set_ylabel(f"joint {j + 1} [N m]")
axes[0].legend(loc="upper right")
axes[-1].set_xlabel("t [s]")
fig.suptitle("Panda twin: validation torques")
fig.tight_layout()
