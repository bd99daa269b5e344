"""The model structure chosen from the data (``dynid.identification.structure``): a twin whose
truth has rotor inertias and friction terms the user's description does not (or does) have."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_close

from dynid.bench.choice import engine_torques
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification._stream import from_arrays
from dynid.identification.linear.estimators import OLS
from dynid.identification.linear.idim import identify
from dynid.identification.structure import Structure, choose_structure, restricted
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop

N = 7
NOISE = 0.1  # N m, every joint
# the truth's drives: a rotor inertia on joints 1 (regrouped into its link), 4 and 6; no
# viscous friction on joints 3 and 6; no torque offset anywhere
ROTOR = np.array([0.3, 0.0, 0.0, 0.6, 0.0, 0.5, 0.0])
FV = np.array([0.1, 0.1, 0.0, 0.1, 0.1, 0.0, 0.1])


def _log(robot, seed: int, duration: float = 20.0):
    return simulate_open_loop(robot, random_fourier(robot, seed=seed), duration=duration,
                              rate=200.0, sensor=SensorModel(torque_noise_std=NOISE),
                              seed=seed)


@pytest.fixture(scope="module")
def description():
    """The user's Panda: no rotor inertias (a vendor URDF states none)."""
    return load_robot("panda").with_rotor_inertia(None)


@pytest.fixture(scope="module")
def armature_twin(description):
    truth = description.with_friction(ViscousCoulomb(fv=FV, fc=np.full(N, 0.2),
                                                     fo=np.zeros(N))).with_rotor_inertia(ROTOR)
    return _log(truth, 1), _log(truth, 2, duration=10.0)


def _floor_ratio(model, check) -> np.ndarray:
    error = model.predict(check.q, check.dq, check.ddq) - check.tau
    return np.sqrt((error**2).mean(axis=0)) / NOISE


def test_auto_keeps_the_rotor_inertias_the_description_lacks(description, armature_twin):
    log, check = armature_twin
    model = identify(description, log, structure="auto")
    chosen = Structure.from_json(model.report["structure"], model.friction)
    kept = {kind: [chosen.kept(j, kind) for j in range(N)]
            for kind in ("rotor", "viscous", "coulomb", "offset")}
    # joints 1 and 2: their rotor inertia rides in their link's Izz (regrouped), kept there
    assert kept["rotor"][2:] == [False, True, False, True, False]
    assert kept["viscous"] == [bool(v) for v in FV]
    assert kept["coulomb"] == [True] * N
    assert kept["offset"] == [False] * N  # zero truth: left out
    assert model.rotor_inertia
    assert_close(model.rotor_parameters[[3, 5]], ROTOR[[3, 5]], rtol=0.15)
    assert set(chosen.dropped) == {"Ia3", "Ia5", "Ia7", "fv3", "fv6",
                                   *(f"fo{j + 1}" for j in range(N))}
    for name in chosen.dropped:  # fixed at zero, not estimated
        row = model.base.base_names.index(name)
        assert model.coefficients[row] == 0 and model.std[row] == 0
    ratio = _floor_ratio(model, check)
    assert ratio.max() <= 1.5, ratio
    # the same log with the description's structure as given: far above the floor
    fixed = _floor_ratio(identify(description, log), check)
    assert fixed[3] > 2, fixed
    rotor = next(t for t in chosen.terms if t.joint == 3 and t.kind == "rotor")
    assert rotor.source == "data" and rotor.gain_percent > 100


def test_a_truth_equal_to_the_description_gets_nothing_left_out_or_added(description):
    truth = description.with_friction(ViscousCoulomb(fv=np.full(N, 0.1), fc=np.full(N, 0.2),
                                                     fo=np.full(N, -0.05)))
    model = identify(truth, _log(truth, 3), structure="auto")
    chosen = model.report["structure"]
    assert chosen["dropped"] == []
    assert not model.rotor_inertia  # no rotor column kept: none in the model
    assert not any(term["kept"] for term in chosen["terms"] if term["kind"] == "rotor")
    assert all(term["kept"] for term in chosen["terms"] if term["kind"] != "rotor")


def test_per_log_offsets_stay_where_the_logs_differ(description):
    """Two logs: joint 3's sensor offset differs between them, joint 6's is the same in both,
    the others have none."""
    truth = description.with_friction(ViscousCoulomb(fv=np.full(N, 0.1), fc=np.full(N, 0.2),
                                                     fo=np.zeros(N)))
    offsets = np.zeros((2, N))
    offsets[:, 2], offsets[:, 5] = (0.3, -0.1), 0.2
    logs = [simulate_open_loop(truth, random_fourier(truth, seed=k), duration=12.0, rate=200.0,
                               sensor=SensorModel(torque_noise_std=NOISE,
                                                  torque_bias=offsets[k]), seed=k)
            for k in range(2)]
    model = identify(description, logs, structure="auto")
    chosen = Structure.from_json(model.report["structure"], model.friction)
    assert [chosen.kept(j, "offset") for j in range(N)] == [j in (2, 5) for j in range(N)]
    assert [chosen.kept(j, "log offsets") for j in range(N)] == [j == 2 for j in range(N)]
    found = np.array([entry["offsets"] for entry in model.report["log_offsets"]])
    assert_close(found, offsets, rtol=0, atol=0.02)


def test_options_given_are_kept_as_given(description, armature_twin):
    log, _ = armature_twin
    off = choose_structure(description, [log], rotor_inertia=False,
                           friction=ViscousCoulomb.zeros(N))
    assert not off.rotor_inertia and off.dropped == ()
    assert {t.source for t in off.terms} == {"option"}
    fixed = identify(description, log)
    assert "structure" not in fixed.report and not fixed.rotor_inertia
    with pytest.raises(ValueError, match="`structure` must be one of"):
        identify(description, log, structure="chosen")
    with pytest.raises(ValueError, match=r"`rotor_inertia`.*chosen structure"):
        chosen = identify(description, log, structure="auto")
        identify(description, log, structure=Structure.from_json(
            chosen.report["structure"], chosen.friction), rotor_inertia=False)


def test_restricted_factors_fit_as_the_columns_left_out():
    rng = np.random.default_rng(0)
    w, y = rng.standard_normal((400, 3, 6)), rng.standard_normal((400, 3))
    dropped = [1, 4]
    keep = np.setdiff1d(np.arange(6), dropped)
    fit = OLS().fit_factors(restricted(from_arrays(w, y), dropped))
    direct = np.linalg.lstsq(w[..., keep].reshape(-1, keep.size), y.ravel(), rcond=None)[0]
    assert_close(fit.coef_, direct, rtol=1e-10, atol=1e-12)


def test_the_command_line_chooses_by_default_and_says_what(capsys, tmp_path, description,
                                                          armature_twin):
    from dynid.cli import main
    from dynid.data.io import write_dataset

    def cli(*argv: str) -> str:
        assert main(list(argv)) == 0
        return capsys.readouterr().out

    log, _ = armature_twin
    path = write_dataset(tmp_path / "log.npz", log)
    out = tmp_path / "model.yaml"
    text = cli("identify", "panda", str(path), "--as-is", "-o", str(out))
    assert "model structure chosen by held-out error" in text
    assert "kept +" in text and "out " in text
    payload = json.loads(cli("identify", "panda", str(path), "--as-is", "--json"))
    assert "Ia4" not in payload["structure"]["dropped"]
    assert "structure" in out.read_text()
    fixed = json.loads(cli("identify", "panda", str(path), "--as-is", "--json",
                           "--structure", "fixed", "--no-rotor-inertia"))
    assert "structure" not in fixed


def test_an_arm_simulated_by_mujoco_with_armature_is_at_its_noise_floor(tmp_path, description):
    """MuJoCo's inverse dynamics (an engine no one here wrote) of the arm with armature on
    joints 2, 4, 6 and joint damping; the user's description has neither."""
    import dataclasses

    mujoco = pytest.importorskip("mujoco", reason="mujoco is not installed")
    from dynid.export import export_robot

    user = description.with_friction(ViscousCoulomb.zeros(N))
    truth = user.with_friction(ViscousCoulomb(fv=np.full(N, 0.1), fc=np.zeros(N),
                                              fo=np.zeros(N))) \
        .with_rotor_inertia(np.where(np.arange(N) % 2 == 1, 0.5, 0.0))
    engine = mujoco.MjModel.from_xml_path(str(export_robot(truth, tmp_path / "arm.xml")))
    engine.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT  # joint limits
    state = mujoco.MjData(engine)

    def log(seed: int):
        path = simulate_open_loop(user, random_fourier(user, seed=seed), duration=12.0,
                                  rate=200.0)
        tau = engine_torques(engine, state, path)
        noise = np.random.default_rng(seed).normal(0.0, NOISE, tau.shape)
        return dataclasses.replace(path, tau=tau + noise)

    fit, check = log(1), log(2)
    model = identify(user, fit, structure="auto")
    chosen = Structure.from_json(model.report["structure"], model.friction)
    assert [chosen.kept(j, "rotor") for j in range(2, N)] == [False, True, False, True, False]
    assert not any(chosen.kept(j, "coulomb") for j in range(N))  # none in the engine
    assert _floor_ratio(model, check).max() <= 1.5
    assert _floor_ratio(identify(user, fit), check).max() > 2
