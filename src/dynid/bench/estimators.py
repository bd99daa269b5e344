"""The estimator families' targets in one suite (``dynid bench --suite estimators``):

- ``benchmark_seconds``: BIRDy's full protocol on the TX40 (25 draws x 6 profiles x every
  registered method, 2 workers), extrapolated from a measured run of ``draws`` draws on
  ``profiles`` (``benchmark.full_protocol_estimate``: each method's mean time per fit
  times the fits the full protocol needs); ``dynid bench --suite benchmark`` runs it whole;
- ``didim_fit_seconds``, ``didim_parameter_error_ratio`` (and PC-DIDIM's, CLOE's): the Panda
  twin, a 10 s 1 kHz closed-loop log at high torque noise (``didim``);
- ``online_payload_settle_seconds``, ``online_payload_mass_error``,
  ``online_samples_per_second``: a 2 kg payload picked up mid-task on the Panda twin
  (``online``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["run", "summary"]


def run(*, draws: int = 1,
        profiles: Sequence[str] = ("standardNoise", "highTorqueNoise"),
        progress: Callable[[str], None] | None = None) -> dict:
    """The suite's figures (see the module); ``draws`` and ``profiles``: the measured run the
    full protocol's time is extrapolated from."""
    from dynid.bench.benchmark import benchmark_seconds
    from dynid.bench.didim import didim_bench
    from dynid.bench.online import online_bench

    say = progress or (lambda line: None)
    say("estimators: DIDIM, PC-DIDIM and CLOE on the Panda twin")
    result = dict(didim_bench())
    say("estimators: the online payload on the Panda twin")
    result.update(online_bench())
    say(f"estimators: the TX40 protocol, {draws} draw(s) x {len(profiles)} profiles")
    measured = benchmark_seconds(draws=draws, profiles=profiles, progress=progress)
    estimate = measured["full_protocol_estimate"]
    result.update(benchmark_seconds=estimate["seconds"], benchmark_seconds_extrapolated=True,
                  benchmark_measured_seconds=measured["seconds"],
                  benchmark_measured=f"{draws} draw(s) x {len(profiles)} profiles x "
                                     f"{len(measured['methods'])} methods",
                  benchmark_fit_seconds={name: figures["fit_seconds"] / figures["fits"]
                                         for name, figures in measured["per_method"].items()
                                         if figures["fits"]})
    return result


def summary(result: dict) -> str:
    return "\n".join([
        f"DIDIM: {result['didim_fit_seconds']:.2f} s, parameter error "
        f"{result['didim_parameter_error_ratio']:.2f} x OLS's (PC-DIDIM "
        f"{result['pc_didim_parameter_error_ratio']:.2f} x, CLOE "
        f"{result['cloe_parameter_error_ratio']:.2f} x in {result['cloe_fit_seconds']:.2f} s)",
        f"online payload: settled in {result['online_payload_settle_seconds']:.2f} s, "
        f"mass error {100 * result['online_payload_mass_error']:.2f} %, "
        f"{result['online_samples_per_second']:.0f} samples/s one at a time",
        f"BIRDy's full protocol on the TX40 (extrapolated from "
        f"{result['benchmark_measured']}): {result['benchmark_seconds']:.0f} s",
    ])
