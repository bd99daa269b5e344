"""
The real Panda log of Gaz et al.
================================

A log recorded on a real Franka Emika Panda (Gaz et al. 2019, ``rbt_log_exciting_traj1``:
20,544 samples over 21 s, irregularly sampled, positions printed to about 1e-4 rad, link-side
torques, no accelerations). We identify the Panda's base parameters on the first 70 % of the
log and validate on the last 30 %, then find a physically consistent model (CLS-3) and a
feasible full parameter set behind the OLS coefficients (the SDP retrieval), both within the
search bounds of Gaz et al.'s Table VIII.

The log is not part of dynid: it is GPL-3.0 data from Gaz et al.'s repository
(github.com/marcocognetti/FrankaEmikaPandaDynModel, folder
``matlab/data/Exciting_Traj/Trajectory_1/rbt_log``). This example reads it from the folder
``shared/reference/panda-gaz2019/rbt_log_exciting_traj1`` beside the repository.
"""

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dynid

# shared/reference lies beside the repository; sphinx-gallery runs this in docs/examples
HERE = Path.cwd().resolve()
REFERENCE = next((p / "shared" / "reference" for p in (HERE, *HERE.parents)
                  if (p / "shared" / "reference").is_dir()), None)
LOG = REFERENCE / "panda-gaz2019" / "rbt_log_exciting_traj1" if REFERENCE else None
if LOG is None or not LOG.is_dir():
    raise FileNotFoundError(
        f"the real Panda log is not here: put Gaz et al.'s rbt_log folder (four "
        f"exciting_traj_*.txt files) at shared/reference/panda-gaz2019/rbt_log_exciting_traj1 "
        f"beside the repository ({LOG or 'no shared/reference folder at or above ' + str(HERE)})")

robot = dynid.load_robot("panda")  # MDH frames of Gaz Fig. 1
raw = dynid.read_dataset(LOG)      # the Panda log folder format
steps = np.diff(raw.t)
print(f"{len(raw.t)} samples over {raw.t[-1] - raw.t[0]:.1f} s; time step median "
      f"{1e3 * np.median(steps):.2f} ms, largest {1e3 * steps.max():.1f} ms")

# %%
# Preprocess and split
# --------------------
# Resampled to a uniform grid at the median rate (1 kHz), filtered without phase lag
# (4th-order Butterworth at 5 Hz), accelerations from the filtered velocities, ends trimmed;
# then the first 70 % identifies and the last 30 % validates.

data, check = dynid.split(dynid.prepare(raw), 0.7)
print("; ".join(data.metadata["preprocessing"]))
print(f"identification {len(data.t)} samples, validation {len(check.t)} samples")

# %%
# Ordinary least squares
# ----------------------
# 43 rigid-body base parameters and 21 friction coefficients (viscous, Coulomb and offset per
# joint, Gaz eq. 24).

ols = dynid.identify(robot, data)
print(f"rank {ols.report['rank']}, condition number {ols.report['condition_number']:.0f}")
ols_check = dynid.validate_model(ols, check, n_poses=200)
print("\n".join(ols_check.lines()))

# %%
# The held-out RMSE is about 0.1 N m per joint against RMS torques up to 19 N m — but the OLS
# coefficients are no real body: :math:`\hat M(q)` is not positive definite everywhere.
#
# Physically consistent: CLS-3
# ----------------------------
# The full link parameters under the pseudo-inertia LMI (triangle inequality), the CoM boxes
# and mass ranges of Table VIII and the 16-20 kg total mass, regularised towards Franka's CAD
# values.

cls3 = dynid.identify_constrained(robot, data, method="cls3",
                                  prior=dynid.load_robot("panda-cad").parameters)
cls3_check = dynid.validate_model(cls3.model, check, n_poses=200)
print("\n".join(cls3_check.lines()))

# %%
# A feasible set behind the OLS coefficients
# ------------------------------------------
# Gaz et al. retrieve link parameters from identified coefficients with a penalty algorithm
# (``dynid.retrieve_penalty``); the same problem is a semidefinite program with a global
# optimum, solved here in well under a second.

feasible = dynid.retrieve_sdp(robot, ols.base, ols.coefficients)
print(f"consistent: {feasible.consistent}; reproduces the coefficients to "
      f"{feasible.relative_error_percent:.2f} %; total mass {feasible.total_mass:.2f} kg")

# %%
# RMSE per joint on the held-out 30 %.

rms_torque = np.sqrt(np.mean(check.tau**2, axis=0))
joints = np.arange(1, robot.n_joints + 1)
fig, ax = plt.subplots(figsize=(8, 3.5))
ax.bar(joints - 0.2, dynid.rmse(check.tau, ols.predict(check.q, check.dq, check.ddq)),
       width=0.4, label="OLS (base parameters)")
ax.bar(joints + 0.2, dynid.rmse(check.tau, cls3.model.predict(check.q, check.dq, check.ddq)),
       width=0.4, label="CLS-3 (consistent)")
ax.set_xticks(joints, [f"{j}\n({r:.1f} N m)" for j, r in zip(joints, rms_torque, strict=True)])
ax.set_xlabel("joint (RMS torque)")
ax.set_ylabel("RMSE [N m]")
ax.set_title("Real Panda log: held-out torque errors")
ax.legend()
fig.tight_layout()
