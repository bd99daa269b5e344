"""An engine no one here wrote: an arm exported to MJCF with armature (rotor inertia), damping
and friction loss, simulated by MuJoCo (dynid.simulate.mujoco_twin), identified by dynid and
scored held out against the noise floor (dynid.bench.armature)."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest

from dynid.bench.armature import floor_ratios, mujoco_logs, mujoco_truth
from dynid.cli import main
from dynid.robot import load_robot

NOISE = 0.1


@pytest.fixture(scope="module")
def arm3_in_mujoco():
    pytest.importorskip("mujoco", reason="the MuJoCo twin needs the `mujoco` package "
                                         "(pip install 'dynid[mujoco]')")
    description = load_robot("arm3")
    truth = mujoco_truth(description, armature=0.3)
    logs = mujoco_logs(truth, duration=8.0, noise=NOISE, seeds=(1, 2), rate=500.0)
    return description, truth, logs


def test_the_tracking_and_the_friction_mujoco_applied(arm3_in_mujoco):
    _, truth, (log, _) = arm3_in_mujoco
    assert log.metadata["source"].startswith("MuJoCo twin")
    assert max(log.metadata["tracking_rms"]) < 0.02  # rad: the computed torque tracks
    applied = log.metadata["mujoco_friction"]
    # above the fitting speed the friction loss saturates at fc, the damping is fv dq ...
    np.testing.assert_allclose(applied["fc"], truth.friction.fc, rtol=0.02)
    np.testing.assert_allclose(applied["fv"], truth.friction.fv, rtol=0.05)
    # ... and near zero speed MuJoCo's soft constraint is no sign(dq): a few per cent of fc
    assert 0 < max(applied["residual_rms"]) < 0.5 * truth.friction.fc[0]


def test_dynid_identifies_the_mujoco_arm_at_the_noise_floor_with_rotor_inertia(
        arm3_in_mujoco):
    description, _, (identification, held_out) = arm3_in_mujoco
    assert identification.ddq is not None  # MuJoCo's accelerations; dropped to identify
    ratios = floor_ratios(description, identification, held_out, NOISE)
    assert ratios["rotor_inertia"].max() <= 1.5, ratios
    # arm3 states no rotor inertia: `dynid identify`'s default path (the lag compensated, the
    # structure chosen from the data) reaches the floor too (1.19 against 1.17 with every
    # rotor column, measured), never better than the full model
    assert ratios["default"].max() <= 1.5, ratios
    assert ratios["default"].max() >= ratios["rotor_inertia"].max() - 0.01, ratios


def test_the_identify_command_with_rotor_inertia_reaches_the_floor(arm3_in_mujoco, tmp_path,
                                                                   capsys):
    """As a user would: the MuJoCo log written without accelerations, `dynid identify
    --rotor-inertia`, the model scored on the held-out log."""
    from dynid.bench.armature import held_out_ratio
    from dynid.data import write_dataset
    from dynid.model import load_model

    _, truth, (identification, held_out) = arm3_in_mujoco
    log = write_dataset(tmp_path / "ident.csv", dataclasses.replace(identification, ddq=None))
    assert main(["identify", "arm3", str(log), "--rotor-inertia", "-o",
                 str(tmp_path / "model.yaml"), "--quiet"]) == 0
    capsys.readouterr()
    model = load_model(tmp_path / "model.yaml")
    assert model.rotor_inertia
    assert held_out_ratio(model, held_out, NOISE).max() <= 1.5
    # the last joint's armature stands alone in its regressor column: identified within 10 %
    assert abs(model.rotor_parameters[-1] / truth.rotor_inertia[-1] - 1) < 0.1


def test_simulate_with_the_mujoco_engine(tmp_path, capsys):
    pytest.importorskip("mujoco", reason="the MuJoCo twin needs the `mujoco` package")
    import yaml

    from dynid.data import read_dataset
    from dynid.excitation import FourierTrajectory
    from dynid.simulate.truth import load_truth

    trajectory = tmp_path / "traj.yaml"
    trajectory.write_text(yaml.safe_dump(FourierTrajectory(
        a=0.3 * np.ones((3, 2)), b=0.2 * np.ones((3, 2)), q0=np.zeros(3),
        omega_f=2 * np.pi / 2).to_dict()))
    log = tmp_path / "log.csv"
    common = ["simulate", "arm3", str(trajectory), "-o", str(log), "--duration", "2",
              "--rate", "500", "--engine", "mujoco"]
    assert main([*common, "--rotor-inertia", "0.1", "--viscous", "0.2", "--coulomb", "0.5",
                 "--noise", "0.05", "--json"]) == 0
    summary = yaml.safe_load(capsys.readouterr().out)
    assert summary["engine"] == "mujoco" and max(summary["tracking_rms"]) < 0.02
    data = read_dataset(log)
    assert data.n_samples == 1001 and data.ddq is not None  # MuJoCo's accelerations
    truth = load_truth(tmp_path / "log.truth.yaml")
    assert truth.log["engine"] == "mujoco"
    np.testing.assert_allclose(truth.log["mujoco_friction"]["fc"], 0.5, rtol=0.02)
    np.testing.assert_allclose(truth.rotor_inertia, 0.1)
    # what MuJoCo cannot hold is refused, naming the options
    assert main(common) == 2  # arm3's arctan friction
    assert "give the truth's with --viscous and --coulomb" in capsys.readouterr().err
    assert main([*common, "--coulomb", "0", "--closed-loop", "--substeps", "2"]) == 2
    assert "`--closed-loop`, `--substeps` are for --engine dynid" in capsys.readouterr().err


def test_without_mujoco_the_error_names_the_extra(monkeypatch):
    from dynid.simulate import mujoco_twin

    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco raises
    with pytest.raises(ModuleNotFoundError, match=r"dynid\[mujoco\]"):
        mujoco_twin.load_mjcf("<mujoco/>")


def test_an_mjcf_that_is_no_fixed_base_arm_is_refused():
    pytest.importorskip("mujoco", reason="the MuJoCo twin needs the `mujoco` package")
    from dynid.simulate.mujoco_twin import load_mjcf

    free = ('<mujoco><worldbody><body><freejoint/><inertial pos="0 0 0" mass="1" '
            'diaginertia="1 1 1"/></body></worldbody></mujoco>')
    with pytest.raises(ValueError, match="fixed base"):
        load_mjcf(free)

