"""Generated C (``dynid.codegen``, ``dynid codegen``): compiled with the system C compiler and
called through ctypes, it computes what the model computes — inverse dynamics with friction,
M(q), g(q), c(q, dq), friction and the LuGre state — to 1e-12 relative on random states, for
the Panda (MDH), the Jaco2 (DH), a random URDF (prismatic joints, unaligned axes) and random
MDH/DH chains, with every friction model dynid has; its Coriolis matrix is the Christoffel one
(C dq = c, dM/dt - 2 C skew). Refusals and the command line are checked too."""

from __future__ import annotations

import ctypes
import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_close, random_table_robot, random_urdf

from dynid.cli import main
from dynid.codegen import GeneratedCode, generate
from dynid.dynamics import rnea
from dynid.friction.models import (
    Arctan,
    LuGre,
    NoFriction,
    Sigmoid,
    Stribeck,
    ViscousCoulomb,
)
from dynid.identification.linear.idim import linear_template
from dynid.model import save_model
from dynid.robot import load_robot, load_urdf

CC = shutil.which("cc")
CXX = shutil.which("c++")
pytestmark = pytest.mark.skipif(CC is None, reason="no system C compiler `cc` on PATH")
C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-shared", "-fPIC"]
CXX_FLAGS = ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-shared", "-fPIC"]
RTOL = 1e-12
LIBM = {"sin", "cos", "tanh", "exp", "atan", "pow"}


def _close(actual, expected, rtol: float = RTOL) -> None:
    """Relative to each quantity's scale: rtol elementwise, and rtol of the largest entry for
    entries that cancel to near zero."""
    expected = np.asarray(expected, dtype=float)
    assert_close(actual, expected, rtol=rtol, atol=rtol * max(np.abs(expected).max(), 1e-300))


def _positive(rng, n, low=0.1, high=1.0):
    return rng.uniform(low, high, n)


def _models(tmp: Path) -> dict:
    """name -> (model, generate's keyword arguments): every friction model once at least."""
    rng = np.random.default_rng(20261123)
    panda, jaco2 = load_robot("panda"), load_robot("jaco2")
    out = {}

    def identified(robot, friction, fitted=None, rotor=False):
        """Coefficients as an estimate would give them: the robot's own, 5 % off at random
        (far from zero, the equivalent masses stay positive: dynid's RNEA refuses negative
        ones), with random friction coefficients and rotor inertias."""
        template = linear_template(robot, friction, rotor_inertia=rotor)
        n_friction = template.base.n_parameters - template.n_rigid - template.n_rotor
        full = np.r_[robot.parameters.ravel(), rng.uniform(0.05, 0.5, template.n_rotor),
                     rng.standard_normal(n_friction)]
        coefficients = template.base.regrouping @ full
        coefficients *= 1 + 0.05 * rng.standard_normal(coefficients.size)
        return dataclasses.replace(template, coefficients=coefficients, fitted_friction=fitted,
                                   report={"method": "ols", "command": "dynid identify */x"})

    n = 7
    # MDH, linear viscous + Coulomb + offset, rotor inertias
    out["panda"] = (identified(panda, ViscousCoulomb.zeros(n), rotor=True), {})
    # DH, linear arctan columns and a fitted LuGre (the state), rotor inertias
    fc, fs = np.r_[0.0, _positive(rng, n - 1)], _positive(rng, n, 1, 2)
    fc[3] = fs[3]  # a flat Stribeck curve (fc = 0: one that decays to the floor)
    lugre = LuGre(_positive(rng, n, 500, 5000), _positive(rng, n, 0, 2), _positive(rng, n),
                  fc, fs, _positive(rng, n, 0.01, 0.2), rng.standard_normal(n) / 10)
    out["jaco2"] = (identified(jaco2, Arctan.template(n, k_v=50.0, delta=5.0), lugre,
                               rotor=True), {})
    # URDF (prismatic joints, unaligned axes, merged fixed links), a fitted Stribeck only
    path = tmp / "random.urdf"
    path.write_text(random_urdf(rng, 5))
    urdf = load_urdf(path)
    stribeck = Stribeck(_positive(rng, 5), np.r_[0.0, _positive(rng, 4)],
                        _positive(rng, 5, 0.01, 0.2), np.array([1.0, 2.0, 0.7, 1.5, 2.0]),
                        _positive(rng, 5), rng.standard_normal(5) / 10)
    out["urdf"] = (identified(urdf, NoFriction(5), stribeck), {})
    # random chains with prismatic joints: a fitted sigmoid, a fitted arctan
    mdh = random_table_robot(rng, "mdh", 5, prismatic=0.4)
    sigmoid = Sigmoid(np.r_[0.0, _positive(rng, 4)], _positive(rng, 5, 1, 20),
                      rng.standard_normal(5) / 10)
    gains = _positive(rng, 5, 0.05, 20)  # N m/A: a model from motor currents
    out["mdh"] = (dataclasses.replace(identified(mdh, ViscousCoulomb.zeros(5), sigmoid),
                                      drive_gains=gains, drive_gains_std=gains / 100), {})
    dh = random_table_robot(rng, "dh", 4, prismatic=0.4)
    arctan = Arctan(*rng.standard_normal((3, 4)), _positive(rng, 4, 10, 100),
                    _positive(rng, 4, 1, 10))
    out["dh"] = (identified(dh, NoFriction(4), arctan), {})
    # physical (retrieved) link parameters, a fitted viscous + Coulomb + offset on top
    with_rotor = identified(panda, ViscousCoulomb.zeros(n),
                            ViscousCoulomb(*rng.standard_normal((3, n))), rotor=True)
    physical = with_rotor.with_physical_parameters(panda.parameters, method="retrieval",
                                                   rotor_inertia=_positive(rng, n, 0.1, 0.5))
    out["physical"] = (physical, {"parameters": "physical"})
    # no friction at all, as identify-static's controller model or an OLS fit without friction
    # columns: code without friction terms
    out["nofriction"] = (identified(jaco2, NoFriction(n), rotor=True), {})
    return out


class Library:
    """A compiled model, called sample by sample through ctypes."""

    def __init__(self, path: Path, prefix: str, n: int, friction: bool = True) -> None:
        self.lib, self.prefix, self.n = ctypes.CDLL(str(path)), prefix, n
        self.has_friction = friction

    def _call(self, function: str, *arrays, outputs: int = 1, size: int | None = None,
              scalars=()):
        size = self.n if size is None else size
        rows = next(np.atleast_2d(a).shape[0] for a in arrays if a is not None)
        out = np.zeros((rows, size))
        fn = getattr(self.lib, f"{self.prefix}_{function}")
        fn.restype = None
        for k in range(rows):
            row = []
            for a in arrays:
                row.append(None if a is None else
                           np.ascontiguousarray(np.atleast_2d(a)[k], dtype=float).ctypes)
            target = out[k]
            fn(*[r if r is None else r.data_as(ctypes.c_void_p) for r in row],
               *[ctypes.c_double(s) for s in scalars],
               target.ctypes.data_as(ctypes.c_void_p))
        return out

    def inverse_dynamics(self, q, dq, ddq, z=None):
        if not self.has_friction:  # no state argument
            assert z is None
            return self._call("inverse_dynamics", q, dq, ddq)
        return self._call("inverse_dynamics", q, dq, ddq, z)

    def mass_matrix(self, q):
        return self._call("mass_matrix", q, size=self.n ** 2).reshape(-1, self.n, self.n)

    def gravity(self, q):
        return self._call("gravity", q)

    def coriolis(self, q, dq):
        return self._call("coriolis", q, dq)

    def coriolis_matrix(self, q, dq):
        return self._call("coriolis_matrix", q, dq, size=self.n ** 2).reshape(-1, self.n, self.n)

    def friction(self, dq, z=None):
        return self._call("friction", dq, z)

    def state_rate(self, dq, z):
        return self._call("friction_state_rate", dq, z)

    def states(self, t, dq):
        """z along a time series: steady state at the first sample, then one step a sample."""
        z = np.zeros(self.n)
        init = getattr(self.lib, f"{self.prefix}_friction_state_init")
        step = getattr(self.lib, f"{self.prefix}_friction_state_step")
        init.restype = step.restype = None
        out = np.empty_like(dq)
        dq = np.ascontiguousarray(dq)
        pointer = z.ctypes.data_as(ctypes.c_void_p)
        init(dq[0].ctypes.data_as(ctypes.c_void_p), pointer)
        out[0] = z
        for k in range(1, len(t)):
            step(dq[k - 1].ctypes.data_as(ctypes.c_void_p), dq[k].ctypes.data_as(ctypes.c_void_p),
                 ctypes.c_double(t[k] - t[k - 1]), pointer)
            out[k] = z
        return out


def _compile(command: list[str]) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every model generated and compiled (-O0 for the numbers, in parallel; the Jaco2's C —
    LuGre, arctan, rotor inertias — once more at -O2, where the compiler's flow analysis warns
    most; the C++ is the same text in a namespace)."""
    tmp = tmp_path_factory.mktemp("codegen")
    models = _models(tmp)
    jobs, out = [], {}
    for name, (model, options) in models.items():
        code = generate(model, tmp / f"{name}.h", **options)
        library = tmp / f"lib{name}.so"
        jobs.append((name, _compile([CC, "-O0", *C_FLAGS, str(tmp / f"{name}.c"), "-o",
                                     str(library), "-lm"])))
        out[name] = (model, code, library)
    checks = {"c -O2": _compile([CC, "-O2", *C_FLAGS, str(tmp / "jaco2.c"), "-o",
                                 str(tmp / "libjaco2_o2.so"), "-lm"])}
    cpp = None
    if CXX is not None:
        model = models["jaco2"][0]
        cpp = generate(model, tmp / "jaco2.hpp", prefix="arm")
        wrapper = "\n".join(
            ['#include "jaco2.hpp"']
            + [f'extern "C" void cpp_{f}({", ".join(f"{t} a{k}" for k, t in enumerate(args))})'
               f' {{ arm::{f}({", ".join(f"a{k}" for k in range(len(args)))}); }}'
               for f, args in _CPP_SIGNATURES.items()])
        (tmp / "wrapper.cpp").write_text(wrapper + "\n")
        jobs.append(("cpp", _compile([CXX, "-O0", *CXX_FLAGS, str(tmp / "wrapper.cpp"), "-o",
                                      str(tmp / "libcpp.so")])))
    for name, job in jobs:
        _, errors = job.communicate()
        assert job.returncode == 0, f"{name}: the generated code does not compile:\n{errors}"
    results = {}
    for name, job in checks.items():
        _, errors = job.communicate()
        results[name] = (job.returncode, errors)
    return {"models": out, "cpp": (cpp, tmp / "libcpp.so") if cpp else None,
            "checks": results, "tmp": tmp}


_VEC, _PTR = "const double*", "double*"
_CPP_SIGNATURES = {
    "inverse_dynamics": (_VEC, _VEC, _VEC, _VEC, _PTR), "mass_matrix": (_VEC, _PTR),
    "gravity": (_VEC, _PTR), "coriolis": (_VEC, _VEC, _PTR),
    "coriolis_matrix": (_VEC, _VEC, _PTR), "friction": (_VEC, _VEC, _PTR),
    "friction_state_rate": (_VEC, _VEC, _PTR), "friction_state_init": (_VEC, _PTR),
    "friction_state_step": (_VEC, _VEC, "double", _PTR),
}


def _library(built, name) -> tuple:
    model, code, path = built["models"][name]
    return model, code, Library(path, code.prefix, model.robot.n_joints, code.friction)


def _states(model, n_samples=12, seed=0):
    rng = np.random.default_rng(seed)
    n = model.robot.n_joints
    q = rng.uniform(-np.pi, np.pi, (n_samples, n))
    dq = rng.uniform(-2, 2, (n_samples, n))
    dq[0, 0] = 0.0  # sign(0) = 0, as numpy's
    return q, dq, rng.uniform(-10, 10, (n_samples, n))


NAMES = ["panda", "jaco2", "urdf", "mdh", "dh", "physical", "nofriction"]


@pytest.mark.parametrize("name", NAMES)
def test_generated_functions_are_the_models(built, name):
    model, code, lib = _library(built, name)
    q, dq, ddq = _states(model)
    _close(lib.inverse_dynamics(q, dq, ddq), model.inverse_dynamics(q, dq, ddq))
    _close(lib.mass_matrix(q), model.mass_matrix(q))
    _close(lib.gravity(q), model.gravity_torque(q))
    _close(lib.coriolis(q, dq), model.coriolis_torque(q, dq))
    if code.friction:
        _close(lib.friction(dq), model.friction_torque(dq))


def test_physical_parameters_are_the_robots_own(built):
    """Code from the retrieved link parameters is dynid's RNEA on the model's robot, with the
    rotor inertias and the friction (the equivalent vector gives the same torques)."""
    model, code, lib = _library(built, "physical")
    assert "identified physical link parameters" in code.files["physical.h"]
    q, dq, ddq = _states(model)
    expected = rnea(model.robot, q, dq, ddq) + model.friction_torque(dq)
    _close(lib.inverse_dynamics(q, dq, ddq), expected)


@pytest.mark.parametrize("name", ["panda", "urdf", "dh"])
def test_the_coriolis_matrix_is_the_christoffel_matrix(built, name):
    model, _, lib = _library(built, name)
    q, dq, _ = _states(model, n_samples=4, seed=1)
    n = model.robot.n_joints
    matrix = lib.coriolis_matrix(q, dq)
    _close(np.einsum("kij,kj->ki", matrix, dq), model.coriolis_torque(q, dq), rtol=1e-11)
    h = 1e-6
    for k in range(len(q)):
        # dM/dt along the motion, and the Christoffel symbols, by central differences of M
        ahead, behind = lib.mass_matrix(q[k] + h * dq[k]), lib.mass_matrix(q[k] - h * dq[k])
        m_dot = (ahead[0] - behind[0]) / (2 * h)
        skew = m_dot - 2 * matrix[k]
        scale = np.abs(m_dot).max()
        assert np.abs(skew + skew.T).max() <= 1e-7 * scale
        steps = np.eye(n) * h
        dm = np.array([(lib.mass_matrix(q[k] + s)[0] - lib.mass_matrix(q[k] - s)[0]) / (2 * h)
                       for s in steps])  # dm[c] = dM/dq_c
        christoffel = 0.5 * (np.einsum("cij,c->ij", dm, dq[k]) + np.einsum("jic,c->ij", dm, dq[k])
                             - np.einsum("ijc,c->ij", dm, dq[k]))
        assert np.abs(matrix[k] - christoffel).max() <= 1e-7 * np.abs(christoffel).max()


def test_lugre_state_goes_in_and_out(built):
    """The Jaco2's LuGre: the state stepped in C along a 1 kHz series is ``states_along``'s,
    the torque with it ``inverse_dynamics(..., t)``'s, the rate ``state_derivative``'s; a null
    state gives the steady-state torque."""
    model, code, lib = _library(built, "jaco2")
    assert "#define JACO2_N_STATES 7" in code.files["jaco2.h"]
    rng = np.random.default_rng(3)
    t = np.arange(400) / 1000.0
    phase = rng.uniform(0, np.pi, 7)
    dq = np.sin(2 * np.pi * 1.5 * t[:, None] + phase) * rng.uniform(0.05, 1.0, 7)
    q = np.cumsum(dq, axis=0) / 1000.0
    ddq = np.gradient(dq, t, axis=0)
    z = lib.states(t, dq)
    lugre = model.fitted_friction
    _close(z, lugre.states_along(t, dq))
    _close(lib.inverse_dynamics(q, dq, ddq, z), model.inverse_dynamics(q, dq, ddq, t))
    _close(lib.friction(dq, z), model.friction_torque(dq, t))
    _close(lib.state_rate(dq, z), lugre.state_derivative(dq, z))
    _close(lib.inverse_dynamics(q, dq, ddq), model.inverse_dynamics(q, dq, ddq))


def test_static_friction_has_no_state(built):
    model, code, lib = _library(built, "panda")
    assert "#define PANDA_N_STATES 0" in code.files["panda.h"]
    q, dq, ddq = _states(model, n_samples=3)
    garbage = np.full_like(dq, 1e300)  # never read
    _close(lib.inverse_dynamics(q, dq, ddq, garbage), model.inverse_dynamics(q, dq, ddq))


def test_cpp_header_is_the_same_code(built):
    if built["cpp"] is None:
        pytest.skip("no C++ compiler `c++` on PATH")
    code, path = built["cpp"]
    assert list(code.files) == ["jaco2.hpp"] and "namespace arm {" in code.files["jaco2.hpp"]
    model, _, lib = _library(built, "jaco2")
    cpp = Library(path, "cpp", 7)
    q, dq, ddq = _states(model)
    z = lib.states(np.arange(len(q)) / 1000.0, dq)
    for function, arguments in (("inverse_dynamics", (q, dq, ddq, z)), ("friction", (dq, z)),
                                ("gravity", (q,)), ("coriolis", (q, dq))):
        _close(getattr(cpp, function)(*arguments), getattr(lib, function)(*arguments))
    _close(cpp.mass_matrix(q), model.mass_matrix(q))
    _close(cpp.coriolis_matrix(q, dq), lib.coriolis_matrix(q, dq))


def test_generated_code_compiles_clean_with_optimisation(built):
    for name, (status, errors) in built["checks"].items():
        assert status == 0, f"{name}: warnings or errors with -Wall -Wextra -Werror:\n{errors}"


def test_the_code_needs_only_libm_sin_cos_tanh_exp_atan(built):
    """No allocation, no I/O; the only external symbols are libm's (pow only where a Stribeck
    shape exponent is neither 1 nor 2: the URDF model's)."""
    nm = shutil.which("nm")
    for name, (_, code, library) in built["models"].items():
        text = "\n".join(code.files.values())
        assert not re.search(r"\b(malloc|calloc|realloc|free|printf|static double [a-z])\b",
                             text.replace("static double dynid_", ""))
        called = set(re.findall(r"\b([a-z]+)\(", text)) & (LIBM | {"sqrt", "fabs", "log"})
        assert called <= (LIBM if name == "urdf" else LIBM - {"pow"}), (name, called)
        if nm is not None:
            undefined = subprocess.run([nm, "-D", "--undefined-only", str(library)],
                                       capture_output=True, text=True, check=True).stdout
            symbols = {line.split()[-1].split("@")[0] for line in undefined.splitlines()}
            symbols = {s for s in symbols if not s.startswith("_")}
            assert symbols <= LIBM, (name, symbols)


def test_header_names_robot_provenance_and_units(built):
    _, code, _ = _library(built, "panda")
    header = code.files["panda.h"]
    comment = header[:header.index("*/", header.index("Units")) + 2]
    for needed in ("robot 'panda'", "Gaz", "Model: ols estimate", "Made by: dynid identify",
                   "Units: SI", "N m", "Gravity (0.0, 0.0, -9.81)", "Math library: sin, cos"):
        assert needed in " ".join(comment.replace("\n *", "").split()), needed
    assert "*/x" not in comment  # the command's "*/" cannot end the comment early


def test_header_names_a_urdf_by_its_file_name_alone(rng, tmp_path):
    """A URDF robot's source is a file on the user's machine: the generated code names it and
    not the folders it lay in (the code is copied to a controller, a repository, a colleague)."""
    folder = tmp_path / "home" / "someone" / "arms"
    folder.mkdir(parents=True)
    (folder / "my_arm.urdf").write_text(random_urdf(rng, 3))
    robot = load_urdf(folder / "my_arm.urdf")
    model = linear_template(robot, ViscousCoulomb.zeros(3))
    n_rest = model.base.n_parameters - model.n_rigid
    model = dataclasses.replace(model, coefficients=model.base.regrouping @ np.r_[
        robot.parameters.ravel(), np.zeros(n_rest)])
    for text in generate(model, prefix="arm").files.values():
        assert "my_arm.urdf" in text and str(tmp_path) not in text and "someone" not in text


def test_exact_zeros_are_left_out(built):
    """The Panda's joint 1 turns about gravity: g(q) does not depend on q1, so the generated
    gravity never computes its sine or cosine; its M(q) none of q1 either."""
    _, code, _ = _library(built, "panda")
    source = code.files["panda.c"]
    for function in ("gravity", "mass_matrix"):
        body = source[source.index(f"void panda_{function}("):]
        body = body[:body.index("\n}\n")]
        assert "q[0]" not in body and "q[1]" in body


# --- refusals ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def panda_model():
    """A base-parameter estimate: the Panda's coefficients 1 % off (no physical set)."""
    panda = load_robot("panda")
    template = linear_template(panda, ViscousCoulomb.zeros(7))
    coefficients = template.base.regrouping @ np.r_[panda.parameters.ravel(), np.full(21, 0.1)]
    scale = 1 + 0.01 * np.random.default_rng(5).standard_normal(coefficients.size)
    model = dataclasses.replace(template, coefficients=coefficients * scale)
    assert model.physical_parameters is None
    return model


def test_nan_coefficients_are_refused_and_nothing_is_written(panda_model, tmp_path):
    bad = dataclasses.replace(panda_model)
    coefficients = np.array(bad.coefficients)
    coefficients[3] = np.nan
    object.__setattr__(bad, "coefficients", coefficients)  # what the constructor refuses
    (tmp_path / "arm.h").write_text("old")
    with pytest.raises(ValueError, match=r"`model`: NaN or inf in coefficients \(first at "
                                         r"flat index 3\)"):
        generate(bad, tmp_path / "arm.h")
    assert (tmp_path / "arm.h").read_text() == "old" and not (tmp_path / "arm.c").exists()


def test_nan_friction_is_refused(panda_model):
    sigmoid = Sigmoid(np.ones(7), np.ones(7), np.zeros(7))
    object.__setattr__(sigmoid, "phi2", np.r_[np.inf, np.ones(6)])
    model = dataclasses.replace(panda_model, fitted_friction=sigmoid)
    with pytest.raises(ValueError, match=r"NaN or inf in its fitted friction \(sigmoid\)"):
        generate(model)


def test_a_model_without_friction_gives_code_without_friction(built):
    """No friction in the model: no friction function, no state argument, and the header
    says so; M, c, g and the inverse dynamics are still the model's (checked above)."""
    _, code, lib = _library(built, "nofriction")
    assert not code.friction and not code.drive_gains
    header, source = code.files["nofriction.h"], code.files["nofriction.c"]
    assert "friction" not in " ".join(code.functions)
    assert "void jaco2_inverse_dynamics(const double q[7], const double dq[7], const double " \
        "ddq[7], double tau[7]);" in header
    assert "#define JACO2_HAS_FRICTION 0" in header and "#define JACO2_N_STATES 0" in header
    comment = " ".join(header[:header.index("*/")].replace("\n *", "").split())
    assert "Friction: NONE. The model has no friction" in comment
    assert "Drive gains: none" in comment and "takes and returns joint torques" in comment
    assert not re.search(r"jaco2_friction\w*\(", source) and "tanh" not in source
    with pytest.raises(AttributeError):
        lib.lib.jaco2_friction  # noqa: B018 (not in the library)
    # a model with friction keeps its friction functions and says which
    _, panda, _ = _library(built, "panda")
    assert panda.friction and "friction_state_step" in panda.functions
    assert "Friction: viscous-coulomb (linear, identified); 0 friction states." in \
        " ".join(panda.files["panda.h"].replace("\n *", "").split())


def test_drive_gains_convert_currents_and_torques(built):
    """A model from motor currents: torque_from_current is K i (as the model reads a current
    log, ``measured_torque``), current_from_torque its inverse, exactly; the header lists the
    gains."""
    model, code, lib = _library(built, "mdh")
    assert code.drive_gains
    assert {"torque_from_current", "current_from_torque"} <= set(code.functions)
    header = " ".join(code.files["mdh.h"].replace("\n *", "").split())
    assert "Drive gains: identified from motor currents, K = (" + \
        ", ".join(repr(float(k)) for k in model.drive_gains) in header
    assert f"#define {code.prefix.upper()}_HAS_DRIVE_GAINS 1" in code.files["mdh.h"]
    current = np.random.default_rng(9).uniform(-3, 3, (5, 5))
    torque = lib._call("torque_from_current", current)
    np.testing.assert_array_equal(torque, current * model.drive_gains)
    np.testing.assert_array_equal(lib._call("current_from_torque", torque),
                                  torque / model.drive_gains)
    _, panda, _ = _library(built, "panda")
    assert not panda.drive_gains and "current" not in " ".join(panda.functions)
    assert "#define PANDA_HAS_DRIVE_GAINS 0" in panda.files["panda.h"]


@pytest.mark.parametrize("kwargs, message", [
    ({"language": "fortran"}, r"`language` must be one of c, cpp, got 'fortran'"),
    ({"path": "arm.py"}, r"`path` for c must end in \.h or \.c, got 'arm\.py'"),
    ({"path": "arm.c", "language": "cpp"}, r"`path` for cpp must end in \.hpp or \.hh or \.h"),
    ({"prefix": "3arm"}, r"`prefix` must be a C identifier"),
    ({"prefix": "arm-1"}, r"`prefix` must be a C identifier"),
    ({"prefix": "x" * 300 + " y"}, r"`prefix` must be a C identifier"),
    ({"path": 'a"b.h'}, r"C cannot #include 'a\"b\.h'"),
    ({"path": "a\\b.c"}, r"C cannot #include 'a\\\\b\.h'"),
    ({"path": "a\nb.h"}, r"C cannot #include"),
    ({"prefix": "double"}, r"`prefix` must be a C identifier"),
    ({"parameters": "physical"}, r"`parameters`: 'physical' needs a model whose robot carries"),
    ({"parameters": "cad"}, r"`parameters` must be 'equivalent' or 'physical', got 'cad'"),
])
def test_bad_arguments_are_refused(panda_model, tmp_path, kwargs, message):
    if "path" in kwargs:
        kwargs = {**kwargs, "path": tmp_path / kwargs["path"]}
    with pytest.raises(ValueError, match=message):
        generate(panda_model, **kwargs)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("robot_name, prefix", [
    ("Panda", "panda"), ("3arm", "robot_3arm"), ("_arm", "robot_arm"), ("ü-arm", "robot__arm"),
    ("", "robot"), ("double", "double_model"), ("arm 2", "arm_2"),
])
def test_the_default_prefix_is_a_c_identifier_from_the_robots_name(panda_model, robot_name,
                                                                    prefix):
    model = dataclasses.replace(panda_model, robot=dataclasses.replace(panda_model.robot,
                                                                       name=robot_name))
    code = generate(model)
    assert code.prefix == prefix and f"void {prefix}_gravity(" in code.files[f"{prefix}.h"]


def test_not_a_model_is_a_type_error():
    with pytest.raises(TypeError, match="`model` must be an identified LinearModel"):
        generate(load_robot("panda"))


def test_generate_without_a_path_writes_nothing(panda_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = generate(panda_model, prefix="arm")
    assert isinstance(code, GeneratedCode) and code.paths == ()
    assert list(code.files) == ["arm.h", "arm.c"] and not list(tmp_path.iterdir())
    assert generate(panda_model, language="cpp").files.keys() == {"panda.hpp"}


# --- command line -----------------------------------------------------------------------------
def test_cli_writes_header_and_source(panda_model, tmp_path, capsys):
    model_file = tmp_path / "model.yaml"
    save_model(panda_model, model_file)
    assert main(["codegen", str(model_file), "-o", str(tmp_path / "arm.c")]) == 0
    out = capsys.readouterr().out
    assert f"C99 written to {tmp_path / 'arm.h'} and {tmp_path / 'arm.c'}" in out
    assert '#include "arm.h"' in (tmp_path / "arm.c").read_text()
    assert main(["codegen", str(model_file), "-o", str(tmp_path / "arm.hpp"), "--prefix",
                 "franka", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["language"] == "cpp" and result["files"] == [str(tmp_path / "arm.hpp")]
    assert "franka::inverse_dynamics" in result["functions"]


@pytest.mark.parametrize("arguments, message", [
    (["-o", "arm.txt"], "`-o` must end in .h, .c, .hpp or .hh, got 'arm.txt'"),
    (["-o", "arm.c", "--language", "cpp"], "`path` for cpp must end in .hpp or .hh or .h"),
    (["-o", 'arm"1.h'], """C cannot #include 'arm"1.h'"""),
    (["-o", "arm.h", "--prefix", "arm-1"], "`prefix` must be a C identifier"),
    (["-o", ""], "`-o` is empty"),
])
def test_cli_errors_are_one_line(panda_model, tmp_path, capsys, arguments, message):
    model_file = tmp_path / "model.yaml"
    save_model(panda_model, model_file)
    arguments = [str(tmp_path / a) if a.startswith("arm.") else a for a in arguments]
    assert main(["codegen", str(model_file), *arguments]) == 2
    error = capsys.readouterr().err
    assert error.startswith("dynid: error: ") and message in error
    assert error.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.yaml"]


def test_cli_generates_a_model_without_friction_and_says_so(panda_model, tmp_path, capsys):
    template = linear_template(panda_model.robot, NoFriction(7))
    model = dataclasses.replace(template, coefficients=template.base.regrouping
                                @ panda_model.robot.parameters.ravel())
    model_file = tmp_path / "static.yaml"
    save_model(model, model_file)
    assert main(["codegen", str(model_file), "-o", str(tmp_path / "arm.h")]) == 0
    captured = capsys.readouterr()
    assert "(7 joints, no friction, torques only, no drive gains;" in captured.out
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"dynid: note: {model_file}: the model has no friction")
    assert "Friction: NONE" in (tmp_path / "arm.h").read_text()
    assert main(["codegen", str(model_file), "-o", str(tmp_path / "arm.hpp"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["friction"] is False and result["drive_gains"] is False
    assert "panda::friction" not in result["functions"]
    assert "constexpr bool has_friction = false;" in (tmp_path / "arm.hpp").read_text()


def test_cli_never_writes_over_its_input(panda_model, tmp_path, capsys):
    """C writes a pair: each of the two files is checked against every input, and the file
    `-o` names is written under exactly that name (`-o ARM.H` once wrote ARM.h)."""
    model_file = tmp_path / "ARM.h"  # a model file with a header's name
    save_model(panda_model, model_file)
    before = model_file.read_bytes()
    assert main(["codegen", str(model_file), "-o", str(tmp_path / "ARM.c")]) == 2
    error = capsys.readouterr().err
    assert "`-o (its .h)`" in error and "is an input of this command" in error
    (tmp_path / "sub").mkdir()
    assert main(["codegen", str(model_file), "-o", str(tmp_path / "sub" / ".." / "ARM.h")]) == 2
    assert "is an input of this command" in capsys.readouterr().err
    assert model_file.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) \
        == ["ARM.h", "sub"]
    assert main(["codegen", str(model_file), "-o", str(tmp_path / "ARM.H")]) == 0
    assert model_file.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ARM.H", "ARM.c", "ARM.h", "sub"]
    assert '#include "ARM.H"' in (tmp_path / "ARM.c").read_text()


# --- bench ------------------------------------------------------------------------------------
def test_bench_times_the_generated_code_beside_pinocchio():
    """The bench runs and reports a time for each function; how fast they are is what `dynid
    bench` reports, never asserted here (it depends on the machine)."""
    import math

    from dynid.bench.codegen import run, summary

    result = run(calls=2000, repeat=1, pinocchio_calls=200)
    keys = [f"codegen_{f}_ns" for f in ("inverse_dynamics", "mass_matrix", "gravity", "coriolis",
                                        "coriolis_matrix", "inverse_dynamics_ctypes",
                                        "mass_matrix_ctypes")]
    for key in [*keys, "pinocchio_rnea_python_ns", "pinocchio_crba_python_ns"]:
        assert isinstance(result[key], float) and math.isfinite(result[key]), key
        assert result[key] > 0, key  # a measured loop, not a placeholder
    assert (result["calls"], result["pinocchio_calls"], result["repeat"]) == (2000, 200, 1)
    lines = summary(result)
    for key in keys[:2]:  # each figure reported as measured
        assert f"{result[key]:.1f}" in lines, key
    assert "pinocchio rnea from Python" in lines
    with pytest.raises(ValueError, match="`calls`"):
        run(calls=0)
