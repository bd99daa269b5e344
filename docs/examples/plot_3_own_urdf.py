"""
Your own URDF
=============

A robot of your own goes through the same steps. Here it is a small three-joint arm written as
a URDF (a yawing shoulder, a pitching shoulder, an elbow), with inertials about each link's
centre of mass as URDF has them. We load it, look at its base parameters, design an exciting
trajectory for it, let the twin log it, identify, validate, and save the model.
"""

import dataclasses
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dynid

URDF = """<?xml version="1.0"?>
<robot name="three_link_arm">
  <link name="base"/>
  <link name="upper_arm">
    <inertial>
      <origin xyz="0 0 0.15"/> <mass value="2.0"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.004"/>
    </inertial>
  </link>
  <link name="forearm">
    <inertial>
      <origin xyz="0.15 0 0"/> <mass value="1.5"/>
      <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.015" iyz="0" izz="0.015"/>
    </inertial>
  </link>
  <link name="hand">
    <inertial>
      <origin xyz="0.05 0 0"/> <mass value="0.5"/>
      <inertia ixx="0.0005" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/>
    </inertial>
  </link>
  <joint name="shoulder_yaw" type="revolute">
    <parent link="base"/> <child link="upper_arm"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/> <axis xyz="0 0 1"/>
    <limit lower="-2.6" upper="2.6" velocity="2.0" effort="80"/>
  </joint>
  <joint name="shoulder_pitch" type="revolute">
    <parent link="upper_arm"/> <child link="forearm"/>
    <origin xyz="0 0 0.3" rpy="-1.5707963267948966 0 0"/> <axis xyz="0 0 1"/>
    <limit lower="-2.6" upper="2.6" velocity="2.0" effort="80"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="forearm"/> <child link="hand"/>
    <origin xyz="0.3 0 0" rpy="0 0 0"/> <axis xyz="0 0 1"/>
    <limit lower="-2.6" upper="2.6" velocity="2.0" effort="40"/>
  </joint>
</robot>
"""
folder = Path(tempfile.mkdtemp())
path = folder / "three_link_arm.urdf"
path.write_text(URDF)

robot = dynid.load_urdf(path)
print(robot)
print("joints:", robot.joint_names)
print("standard parameters (link frames, inertia about the origin):")
print(np.array2string(robot.parameters, precision=4, suppress_small=True))

# %%
# URDF has no acceleration limits; the excitation design needs them, so we add some
# (rad/s²). A robot file (``dynid.save_robot``) can carry them, and parameter bounds for the
# constrained methods.

limits = dataclasses.replace(robot.limits, acceleration=np.full(robot.n_joints, 10.0))
robot = dataclasses.replace(robot, limits=limits)

# %%
# Base parameters
# ---------------
# Of the 30 standard parameters, only these combinations can be identified from joint torques.

base = dynid.robot_base_parameters(robot)
print(base.rank, "base parameters")
for expression in base.expressions():
    print("  ", expression)

# %%
# Excitation
# ----------
# A Fourier trajectory (4 harmonics, 10 s period) optimised for the condition number of the
# base regressor, within the position, velocity and acceleration limits.

excitation = dynid.optimize_excitation(robot, harmonics=4, period=10.0, rate=20.0, starts=1,
                                       start_iterations=3, max_iterations=10, seed=0)
print(f"condition number of the base regressor: {excitation.condition_number:.1f}")

# %%
# Log, identify, validate
# -----------------------
# The twin logs the optimised trajectory (identification) and a random one (validation) with
# 0.01 N m of torque noise (the shoulder's yaw carries 0.1 N m on the random path: at 0.05 N m
# of noise, validation would call it unexcited); the URDF has no friction, so we identify the
# rigid body alone.

sensor = dynid.SensorModel(torque_noise_std=0.01)
data = dynid.prepare(dynid.simulate_open_loop(robot, excitation.trajectory, duration=10.0,
                                              sensor=sensor, seed=0))
check = dynid.prepare(dynid.simulate_open_loop(robot, dynid.random_fourier(robot, seed=3),
                                               duration=10.0, sensor=sensor, seed=1))
model = dynid.identify(robot, data, friction=dynid.NoFriction(robot.n_joints))
for row in model.table():
    print(f"  {row['expression']:<40} {row['value']:+.5f} ± {row['std']:.5f}")

truth = model.base.regrouping @ robot.parameters.ravel()
print("largest error against the URDF's own values:",
      f"{np.abs(model.coefficients - truth).max():.2e}")
print("\n".join(dynid.validate_model(model, check, n_poses=200).lines()))

# %%
# The identified model is a file you can load again (it refers to the URDF by path and hash).

saved = dynid.save_model(model, folder / "three_link_arm_model.yaml")
print(dynid.load_model(saved).report["method"], "model in", saved.name)

# %%
# Torques of the validation log and the model's prediction.

predicted = model.predict(check.q, check.dq, check.ddq)
fig, axes = plt.subplots(robot.n_joints, 1, sharex=True, figsize=(8, 5))
for j, ax in enumerate(axes):
    ax.plot(check.t, check.tau[:, j], lw=0.8, label="measured")
    ax.plot(check.t, predicted[:, j], lw=0.8, ls="--", label="identified")
    ax.set_ylabel(f"{robot.joint_names[j]}\n[N m]")
axes[0].legend(loc="upper right")
axes[-1].set_xlabel("t [s]")
fig.tight_layout()
