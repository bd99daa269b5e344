"""Every estimator by name, behind the one contract (``dynid.identification.estimate``).

``IDENTIFICATION_METHODS`` maps a name to its ``Method``:
``IDENTIFICATION_METHODS["cls3"].fit(Problem(robot, logs))`` gives an ``Estimate`` whatever
the family. Each family lists its own methods; this module gathers them in the order of the
families (``FAMILIES``).
"""

from __future__ import annotations

from dynid.identification.estimate import Estimate, Method, Problem

__all__ = ["IDENTIFICATION_METHODS", "find_method"]


def _linear_methods() -> tuple[Method, ...]:
    from dynid.identification.linear.estimators import WLS
    from dynid.identification.linear.idim import identify, identify_iv

    def ols(problem: Problem, **options) -> Estimate:
        model = identify(problem.robot, problem.logs, friction=problem.friction, **options)
        return Estimate("ols", model, 0.0, True, "closed form")

    def wls(problem: Problem, **options) -> Estimate:
        model = identify(problem.robot, problem.logs, friction=problem.friction,
                         estimator=WLS(), **options)
        return Estimate("wls", model, 0.0, True, "closed form")

    def iv(problem: Problem, **options) -> Estimate:
        model = identify_iv(problem.robot, problem.logs, list(problem.references),
                            controller=list(problem.controller), friction=problem.friction,
                            **options)
        converged = bool(model.report.get("converged", True))
        return Estimate("iv", model, 0.0, converged,
                        model.report.get("convergence", "converged" if converged
                                         else "iteration limit"),
                        iterations=int(model.report.get("iterations", 0)))

    return (
        Method("ols", "linear", False, frozenset({"ddq", "effort"}),
               "Gaz et al. 2019 eq. 5-8 (IDIM-OLS)", ols),
        Method("wls", "linear", False, frozenset({"ddq", "effort"}),
               "Szabó 2021 eq. 18-19 (IDIM-WLS)", wls),
        Method("iv", "linear", False, frozenset({"ddq", "effort", "reference", "controller"}),
               "Janot, Vandanjon & Gautier 2014, IEEE TCST 22(1) (IDIM-IV)", iv),
    )


def _constrained_methods() -> tuple[Method, ...]:
    from dynid.identification.constrained.cls import identify_constrained

    def fit(name: str):
        def run(problem: Problem, **options) -> Estimate:
            result = identify_constrained(problem.robot, problem.logs, method=name,
                                          friction=problem.friction, prior=problem.prior,
                                          **options)
            return Estimate(name, result.model, 0.0, result.success, result.status,
                            parameters=result.parameters, details=result.to_json())
        return run

    citation = "Jaco2 comparison paper, eq. 3-6 (LMI-SDP)"
    return (
        Method("cls1", "constrained", False, frozenset({"ddq", "effort"}), citation,
               fit("cls1")),
        Method("cls2", "constrained", False, frozenset({"ddq", "effort"}), citation,
               fit("cls2")),
        Method("cls3", "constrained", True, frozenset({"ddq", "effort"}), citation,
               fit("cls3")),
        Method("log-cholesky", "constrained", True, frozenset({"ddq", "effort"}),
               "Rucker & Wensing 2022 (log-Cholesky)", fit("log-cholesky")),
    )


def _nonlinear_methods() -> tuple[Method, ...]:
    from dynid.identification.nonlinear.nls import identify_nls

    def nls(problem: Problem, **options) -> Estimate:
        options.setdefault("friction", "stribeck")
        result = identify_nls(problem.robot, problem.logs, start=problem.start, **options)
        return Estimate("nls", result.model, 0.0, result.success, result.status,
                        iterations=result.iterations, parameters=result.parameters,
                        details=result.to_json())

    return (Method("nls", "nonlinear", True, frozenset({"ddq", "effort"}),
                   "Gilbert et al. 2024 eq. 16-22", nls),)


def _gather() -> dict[str, Method]:
    from dynid.identification import recursive
    from dynid.identification.constrained import robust as constrained_robust
    from dynid.identification.linear import regularised, robust
    from dynid.identification.simulation import didim, output_error

    methods = (*_linear_methods(), *robust.METHODS, *regularised.METHODS,
               *_constrained_methods(), *constrained_robust.METHODS, *_nonlinear_methods(),
               *didim.METHODS, *output_error.METHODS, *recursive.METHODS)
    return {m.name: m for m in methods}


IDENTIFICATION_METHODS: dict[str, Method] = _gather()


def find_method(name: str) -> Method:
    """The method called ``name``; a ValueError lists the names."""
    if name not in IDENTIFICATION_METHODS:
        raise ValueError(f"unknown method {name!r}: choose among "
                         f"{sorted(IDENTIFICATION_METHODS)}")
    return IDENTIFICATION_METHODS[name]
