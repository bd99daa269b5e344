"""The residual moving-block bootstrap (dynid.identification.bootstrap): coverage under
coloured noise on the twin where the white-noise formula fails, every kind of method through it
(OLS solved jointly, refits, CLS, NLS), executors, bad arguments, the model file and the CLI."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
from conftest import assert_close
from scipy.signal import butter, lfilter

from dynid.cli import main
from dynid.data import write_dataset
from dynid.excitation import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification import (
    Bootstrap,
    BootstrapWarning,
    bootstrap,
    compare_methods,
    identify,
    identify_constrained,
    identify_nls,
)
from dynid.model import bootstrap_table, load_model, save_model
from dynid.robot import LinkBounds, ParameterBounds, load_robot
from dynid.robot.inertia import to_com
from dynid.simulate import SensorModel, simulate_open_loop

NOISE = np.array([0.05, 0.1, 0.05])  # torque noise std per joint [N m] before the filter


@pytest.fixture(scope="module")
def arm():
    """The 3-DoF arm with linear friction (known truth)."""
    friction = ViscousCoulomb(fv=np.full(3, 0.1), fc=np.full(3, 0.2), fo=np.full(3, -0.05))
    return load_robot("arm3").with_friction(friction)


@pytest.fixture(scope="module")
def clean(arm):
    """30 s of an exciting trajectory at 100 Hz, noise free (open loop)."""
    return simulate_open_loop(arm, random_fourier(arm, seed=1), duration=30.0, rate=100.0)


@pytest.fixture(scope="module")
def short(arm):
    """6 s at 100 Hz with white torque noise: the refitting methods' data."""
    return simulate_open_loop(arm, random_fourier(arm, seed=2), duration=6.0, rate=100.0,
                              sensor=SensorModel(torque_noise_std=0.05), seed=3)


@pytest.fixture(scope="module")
def bounds(arm):
    """Mass within 50 % and CoM within 10 cm of the truth, per link; total mass within 50 %."""
    mass, com, _ = to_com(arm.parameters)
    return ParameterBounds(
        tuple(LinkBounds((0.5 * m, 1.5 * m), c - 0.1, c + 0.1)
              for m, c in zip(mass, com, strict=True)),
        total_mass=(0.5 * mass.sum(), 1.5 * mass.sum()))


def _coloured(clean, seed: int):
    """The log with low-pass coloured torque noise: white noise through a 2nd-order
    Butterworth at a tenth of the Nyquist frequency (5 Hz), like a filtered torque sensor."""
    b, a = butter(2, 0.1)
    white = np.random.default_rng(seed).standard_normal(clean.tau.shape) * NOISE
    return dataclasses.replace(clean, tau=clean.tau + lfilter(b, a, white, axis=0))


def _truth(model, robot) -> np.ndarray:
    return model.base.base(np.concatenate([robot.parameters.ravel(),
                                           robot.friction.coefficients]))


def test_coverage_under_coloured_noise_where_the_ols_formula_fails(arm, clean):
    """50 seeds of coloured noise: the bootstrap's 95 % percentile intervals hold the true base
    parameters for >= 90 % of (coefficient, seed) pairs; the white-noise formula
    sigma^2 (W^T W)^-1 covers far less (about half: it believes every sample independent)."""
    bootstrap_inside, formula_inside, lengths = [], [], []
    truth = None
    for seed in range(50):
        data = _coloured(clean, seed)
        model = identify(arm, data)
        truth = _truth(model, arm) if truth is None else truth
        spread = bootstrap(arm, data, model=model, replicates=200, seed=seed)
        lower, upper = spread.interval(0.95)
        bootstrap_inside.append((lower <= truth) & (truth <= upper))
        formula_inside.append(np.abs(model.coefficients - truth) <= 1.96 * model.std)
        lengths.append(spread.block_length)
    coverage, formula = np.mean(bootstrap_inside), np.mean(formula_inside)
    assert coverage >= 0.90, (coverage, formula, np.mean(lengths))
    assert formula < 0.75, (coverage, formula)
    # the residual autocorrelation sets the blocks: the noise remembers about 10 samples
    assert 10 <= np.median(lengths) <= 150, lengths


def test_auto_block_length_follows_the_residual_colour(arm, clean):
    """White residuals: blocks of one or two samples (the ordinary residual bootstrap);
    coloured ones: long blocks, and the bootstrap std well above the white-noise formula's."""
    white = dataclasses.replace(clean, tau=clean.tau + np.random.default_rng(0).standard_normal(
        clean.tau.shape) * NOISE)
    model = identify(arm, white)
    spread = bootstrap(arm, white, model=model, replicates=100, seed=0)
    assert spread.block_length <= 3
    assert spread.block_rule.startswith("auto")
    assert_close(np.median(spread.std / model.std), 1.0, rtol=0.2, atol=0)
    coloured = _coloured(clean, 0)
    model = identify(arm, coloured)
    spread = bootstrap(arm, coloured, model=model, replicates=100, seed=0)
    assert spread.block_length >= 10
    assert np.median(spread.std / model.std) > 1.8
    given = bootstrap(arm, coloured, model=model, replicates=10, seed=0, block_length=25)
    assert given.block_length == 25 and given.block_rule == "given"


def _ols_refit(robot, data, **options):
    """OLS as a user's own function: refitted replicate by replicate."""
    return identify(robot, data, **options)


def test_joint_ols_solves_equal_refits_and_executors_equal_serial(arm, clean):
    """The OLS replicates solved together from the point fit's factor are the refits' numbers;
    a thread pool and a (spawned) process pool give the serial results with the same seed; the
    seed reproduces them, another seed does not."""
    data = _coloured(clean, 7).select(slice(0, 800))
    model = identify(arm, data)
    joint = bootstrap(arm, data, model=model, replicates=6, seed=11)
    refits = bootstrap(arm, data, method=_ols_refit, model=model, replicates=6, seed=11)
    assert joint.coefficients.shape == (6, model.base.rank)
    assert_close(joint.coefficients, refits.coefficients, rtol=1e-8, atol=1e-10)
    with ThreadPoolExecutor(2) as pool:
        pooled = bootstrap(arm, data, model=model, replicates=6, seed=11, executor=pool)
        pooled_refits = bootstrap(arm, data, method=_ols_refit, model=model, replicates=6,
                                  seed=11, executor=pool)
    assert_close(pooled.coefficients, joint.coefficients, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(pooled_refits.coefficients, refits.coefficients)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        processes = bootstrap(arm, data, method="wls", replicates=3, seed=11, executor=pool)
    here = bootstrap(arm, data, method="wls", model=processes.model, replicates=3, seed=11)
    assert_close(processes.coefficients, here.coefficients, rtol=1e-10, atol=1e-14)
    again = bootstrap(arm, data, model=model, replicates=6, seed=11)
    np.testing.assert_array_equal(again.coefficients, joint.coefficients)
    other = bootstrap(arm, data, model=model, replicates=6, seed=12)
    assert not np.allclose(other.coefficients, joint.coefficients)


def test_several_logs_each_with_its_offsets(arm, clean):
    """Two logs whose torque sensors differ by 0.3 N m (a per-log offset column each): the
    blocks are drawn log after log from each replicate's stream, and the joint OLS solve with
    the offset columns equals the refits."""
    first = _coloured(clean, 1).select(slice(0, 600))
    second = _coloured(clean, 2).select(slice(600, 1200))
    second = dataclasses.replace(second, tau=second.tau + 0.3)
    model = identify(arm, [first, second])
    joint = bootstrap(arm, [first, second], model=model, replicates=5, seed=1)
    refits = bootstrap(arm, [first, second], method=_ols_refit, model=model, replicates=5,
                       seed=1)
    assert_close(joint.coefficients, refits.coefficients, rtol=1e-8, atol=1e-10)


def test_predicted_torque_spread_is_the_coefficients_spread(arm, clean, tmp_path):
    """For a linear model the predicted torques' std is sqrt(y^T C y) with C the replicates'
    coefficient covariance (an independent computation); the interval brackets the point
    prediction; the model file keeps the bootstrap (save_model / load_model)."""
    data = _coloured(clean, 3).select(slice(0, 1500))
    spread = bootstrap(arm, data, replicates=50, seed=5)  # the point estimate fitted here
    assert isinstance(spread, Bootstrap) and spread.method == "ols"
    check = _coloured(clean, 4).select(slice(1500, 1700))
    y = spread.model.base_regressor(check.q, check.dq, check.ddq)
    covariance = np.cov(spread.coefficients, rowvar=False)
    expected = np.sqrt(np.einsum("cnr,rs,cns->cn", y, covariance, y))
    assert_close(spread.torque_std(check), expected, rtol=1e-8, atol=1e-12)
    lower, upper = spread.torque_interval(check, level=0.9)
    point = spread.model.predict(check.q, check.dq, check.ddq)
    assert (lower <= upper).all() and np.mean((lower <= point) & (point <= upper)) > 0.9
    annotated = spread.annotate(level=0.9)
    path = save_model(annotated, tmp_path / "model.yaml")
    rows = bootstrap_table(load_model(path))
    low, high = spread.interval(0.9)
    assert [row["name"] for row in rows] == list(spread.names)
    assert_close([row["std"] for row in rows], spread.std)
    assert_close([row["lower"] for row in rows], low)
    assert_close([row["upper"] for row in rows], high)
    assert load_model(path).report["bootstrap"]["block_length"] == spread.block_length
    assert bootstrap_table(spread.model) is None  # no bootstrap: no table
    broken = dataclasses.replace(annotated, report={
        **annotated.report, "bootstrap": {**annotated.report["bootstrap"], "std": [1.0]}})
    with pytest.raises(ValueError, match=r"report\.bootstrap\.std"):
        bootstrap_table(broken)


def test_constrained_method_through_the_bootstrap(arm, short, bounds):
    """CLS-3 refitted on every replicate: finite, positive spreads, the point estimate inside
    the intervals, and a spread of the same order as OLS's on the same data."""
    fit = identify_constrained(arm, short, method="cls3", bounds=bounds)
    spread = bootstrap(arm, short, method="cls3", model=fit.model, replicates=8, seed=2,
                       bounds=bounds)
    assert spread.method == "cls3" and spread.unsuccessful == 0
    assert np.isfinite(spread.std).all() and (spread.std > 0).all()
    lower, upper = spread.interval()
    inside = (lower <= spread.estimate) & (spread.estimate <= upper)
    assert inside.mean() >= 0.9, inside
    ols = bootstrap(arm, short, replicates=8, seed=2)
    ratio = np.median(spread.std / ols.std)
    assert 0.2 < ratio < 2.0, ratio


def test_nls_through_the_bootstrap(arm, short, bounds):
    """NLS (physical parameters and viscous + Coulomb friction) refitted on every replicate:
    its fitted friction per replicate is kept, and the predicted torques' spread is finite and
    far below the noise (the model's uncertainty, not the measurement's)."""
    options = {"friction": "viscous-coulomb", "bounds": bounds, "max_iterations": 30,
               "max_samples": 300}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BootstrapWarning)  # the small budget stops early
        fit = identify_nls(arm, short, **options)
        spread = bootstrap(arm, short, method="nls", model=fit.model, replicates=4, seed=1,
                           **options)
    assert spread.friction.shape == (4, 3, 3)  # (B, n, fields of viscous-coulomb)
    assert not np.allclose(spread.friction[0], spread.friction[1])  # the refits ran
    assert np.isfinite(spread.std).all() and (spread.std > 0).all()
    torque_std = spread.torque_std(short)
    assert np.isfinite(torque_std).all() and 0 < torque_std.mean() < 0.05


def test_bad_arguments_name_themselves(arm, short):
    model = identify(arm, short)
    for value in (1, 0, -5, 10**9, 2.5, True, "200"):
        with pytest.raises(ValueError, match="`replicates`"):
            bootstrap(arm, short, model=model, replicates=value)
    for value in (0, short.n_samples + 1, 2.5, "long", True):
        with pytest.raises(ValueError, match="`block_length`"):
            bootstrap(arm, short, model=model, replicates=5, block_length=value)
    for value in (-1, 1.5):
        with pytest.raises(ValueError, match="`seed`"):
            bootstrap(arm, short, model=model, replicates=5, seed=value)
    with pytest.raises(ValueError, match="`method`"):
        bootstrap(arm, short, method="lasso", replicates=5)
    with pytest.raises(TypeError, match="`executor`"):
        bootstrap(arm, short, model=model, replicates=5, executor=4)
    with pytest.raises(ValueError, match="`client`"):
        bootstrap(arm, short, model=model, replicates=5, client=object())
    with pytest.raises(ValueError, match="`data`"):
        bootstrap(load_robot("panda"), short, replicates=5)
    spread = bootstrap(arm, short, model=model, replicates=5, seed=0)
    for level in (0.0, 1.0, 95, "0.95"):
        with pytest.raises(ValueError, match="`level`"):
            spread.interval(level)


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_identify_and_compare_with_bootstrap(capsys, tmp_path):
    robot = load_robot("arm3")
    sensor = SensorModel(torque_noise_std=[0.05, 0.1, 0.05])
    logs = []
    for k in (1, 2):
        data = simulate_open_loop(robot, random_fourier(robot, seed=k), duration=6.0,
                                  rate=100.0, sensor=sensor, seed=k)
        logs.append(str(write_dataset(tmp_path / f"log{k}.npz", data)))
    out = tmp_path / "model.yaml"
    payload = _json(capsys, ["identify", "arm3", logs[0], "--bootstrap", "30", "--seed", "4",
                             "--json", "--quiet", "-o", str(out)])
    entry = payload["bootstrap"]
    assert entry["replicates"] == 30 and entry["seed"] == 4 and entry["level"] == 0.95
    row = payload["coefficients"][0]
    assert row["bootstrap"]["lower"] <= row["value"] <= row["bootstrap"]["upper"]
    assert len(payload["bootstrap_torque_band"]["mean_half_width"]) == 3
    assert bootstrap_table(load_model(out))[0]["std"] == pytest.approx(row["bootstrap"]["std"])
    assert main(["identify", "arm3", logs[0], "--bootstrap", "30", "--seed", "4",
                 "--block-length", "20", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "boot std" in text and "95% interval" in text and "block length 20 (given)" in text
    assert main(["identify", "arm3", logs[0], "--seed", "4"]) == 2
    assert "`--seed` is for --bootstrap" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: B in [2, 100000]
        main(["identify", "arm3", logs[0], "--bootstrap", "1"])
    assert "--bootstrap" in capsys.readouterr().err
    assert main(["identify", "arm3", logs[0], "--bootstrap", "5", "--block-length",
                 "100000"]) == 2
    assert "`--block-length`" in capsys.readouterr().err
    table = _json(capsys, ["compare", "arm3", *logs, "--methods", "cad", "ols",
                           "--bootstrap", "20", "--seed", "1", "--json", "--quiet"])
    assert table["bootstrap"]["replicates"] == 20 and table["bootstrap"]["seed"] == 1
    assert [fit["method"] for fit in table["bootstrap"]["fits"]] == ["ols", "ols"]
    for row in table["rows"]:
        assert row["w_r_std"]["cad"] is None and row["w_r_std"]["ols"] > 0
        low, high = row["w_r_interval"]["ols"]
        assert low <= row["w_r"]["ols"] * 1.5 and low <= high


def test_compare_methods_with_bootstrap(arm, clean):
    """Every fit but cad bootstrapped in its task: on its own data no OLS replicate fits
    better than the point estimate (least squares), on the other log the point's w_r lies in
    (or at the low end of) its replicates' range; the same seed gives the same replicates
    whatever the options; the models carry their bootstrap; the terminal table shows it."""
    logs = [_coloured(clean, seed).select(slice(1000 * k, 1000 * (k + 1)))
            for k, seed in enumerate((21, 22))]
    with ThreadPoolExecutor(2) as pool:
        table = compare_methods(arm, logs, methods=["cad", "ols", "wls"], bootstrap=20,
                                seed=3, executor=pool)
        again = compare_methods(arm, logs, methods=["cad", "ols", "wls"], bootstrap=20,
                                seed=3, executor=pool, reestimate_offsets=True)
    assert np.isnan(table.w_r_std[..., 0]).all() and (table.w_r_std[..., 1:] > 0).all()
    low, high = table.w_r_interval[..., 1:, 0], table.w_r_interval[..., 1:, 1]
    assert (low <= high).all()
    own = np.arange(2)
    assert (table.w_r[own, own, 1] <= low[own, own, 0] * (1 + 1e-9)).all()  # ols, own data
    other = ([0, 1], [1, 0])
    assert (table.w_r[other][:, 1:] >= 0.95 * low[other]).all()
    assert (table.w_r[other][:, 1:] <= high[other]).all()
    assert set(table.bootstraps) == {("ols", 0), ("ols", 1), ("wls", 0), ("wls", 1)}
    np.testing.assert_array_equal(again.bootstraps[("wls", 1)].coefficients,
                                  table.bootstraps[("wls", 1)].coefficients)
    assert bootstrap_table(table.models[("ols", 0)]) is not None
    assert bootstrap_table(table.models[("cad", 0)]) is None
    text = "\n".join(table.lines())
    assert "w_r interval" in text and "bootstrap: 20 replicates" in text
    with pytest.raises(ValueError, match="`bootstrap`"):
        compare_methods(arm, logs, methods=["ols"], bootstrap=1)
