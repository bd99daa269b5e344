"""The model's structure chosen from the data: which optional linear terms each joint keeps.

A vendor's arm description says nothing about its motors' reflected inertia, and a twin or a
log says nothing about which friction terms a joint needs: a fixed structure either misses a
term (a Panda-class arm with armature sits 20x above its noise floor without rotor columns) or
carries terms the data do not support (noise fitted, variance spent). ``choose_structure``
decides per joint, by blocked cross-validation over time:

- **Candidates** are columns of the full linear model (``identify``'s template with rotor
  inertias on and the friction model's columns): per joint its rotor inertia ``Ia_j`` (where it
  is a base parameter of its own: a rotor inertia regrouped into a link's ``ZZ`` is carried by
  that link whatever is chosen), each friction coefficient (viscous, Coulomb, offset; the
  arctan model's stiction, Stribeck, viscous), and with several logs its per-log offset
  deviations. A term enters only its own joint's rows, while the rigid-body parameters are
  shared: each decision reads the held-out error of its joint's rows with the whole model
  refitted.
- **Held-out error from factors.** The logs are folded once into triangular factors per (log,
  time block, joint) (``dynid.identification._stream.fold_logs(..., blocks=B)``). Fitting on
  every block but b and scoring on block b is then a solve on ``(p + 1, p + 1)`` numbers: the
  regressor is never built again, and a candidate dropped is a column deleted from the
  training factor. The fit weighs each joint's rows by its noise level (WLS, the level from
  the full model's residuals), so that a quiet joint's terms are not drowned by a noisy one.
- **Parsimony.** Greedy backward elimination from the full model: a term is kept when
  removing it raises its joint's held-out mean square error — block by block, as the log of
  the ratio, averaged over the B blocks (scale-free: on a real log one block where the whole
  model extrapolates badly would otherwise decide) — by more than both one standard error of
  that rise over the blocks (the one-standard-error rule:
  a term that helps on one stretch of the log only is not supported) and ``MIN_GAIN`` (0.5 %)
  of the joint's held-out MSE, or ``CHANCE / N_block`` (5 over the block's samples) when
  larger. The relative floor is what keeps terms with zero truth out: with some 30
  candidates, one standard error alone (about a one-sided t test at 80 %) would let a few
  noise-fitted terms through. A term with zero truth, fitted with coefficient
  ``a ~ sigma / |w_train|``, moves a held-out block's MSE by ``2 a <r, w_block> / N_block``:
  a product of two unit normals times ``1 / N_block`` of the MSE, the second averaged over
  the blocks (a spread of about ``0.45 / N_block``; measured: under 0.05 % on a 30 s Panda
  twin at 200 Hz), so the floor sits some 10 of those spreads up; a real viscous term on a
  slow joint gains 1-5 %, a motor's inertia tens to hundreds. A term worth less than 0.5 %
  of the held-out MSE moves the RMSE by under 0.25 %: dropping it costs nothing a user would
  see. Each round drops, per joint, its least-supported term, and the model is refitted
  before the next decision (terms of one joint compete: Coulomb and an
  offset on a joint that moves mostly one way).

What is chosen goes to the identified model (``identify(..., structure=...)``: the dropped
terms are fixed at zero, std 0, in the same columns, so the model file and every reader are
unchanged) and to its report (``Structure.to_json``): per joint and term, kept or not, why
(the data, the caller's option, or regrouped), and the gain on held-out data.

New kinds of candidates (nonlinear friction shapes via NLS, coupling columns of a
transmission) join as ``Term``s over their own columns of the template: anything whose
columns enter one joint's rows (or a known set of joints: score on their rows) is decided by
the same rule, from the same factors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from dynid.data.dataset import Dataset
from dynid.friction.models import FrictionModel
from dynid.identification._logs import Offsets, deviation_names
from dynid.identification._stream import Factors, Layout, _Group, fold, fold_logs
from dynid.model.base_parameters import default_friction, robot_base_parameters
from dynid.model.linear_model import LinearModel, relative_std_percent
from dynid.robot import Robot

__all__ = [
    "CHANCE",
    "DEFAULT_BLOCKS",
    "MIN_GAIN",
    "STRUCTURES",
    "Structure",
    "Term",
    "TooShortError",
    "choose_structure",
]

#: ``identify``'s ``structure`` keywords: chosen from the data, or the options as given
STRUCTURES = ("auto", "fixed")
#: contiguous time blocks of every log in the cross-validation (the held-out folds)
DEFAULT_BLOCKS = 5
#: the smallest rise of a joint's held-out MSE, relative, that keeps a term (module
#: docstring), and on short blocks ``CHANCE / N_block`` if larger: a term with zero truth
#: moves the held-out MSE by about ``1 / N_block`` of it by chance
MIN_GAIN = 0.005
CHANCE = 5.0

#: the fewest samples of a time block of every log (shorter logs: no held-out choice)
MIN_BLOCK_SAMPLES = 10


class TooShortError(ValueError):
    """The logs are too short to hold out time blocks: the structure cannot be chosen."""


# a friction coefficient's name (without its joint number) in words
_KIND = {"fv": "viscous", "fc": "coulomb", "fo": "offset", "tau_s": "stiction",
         "tau_sc": "stribeck", "tau_v": "viscous"}


@dataclass(frozen=True)
class Term:
    """One optional term of one joint: ``kind`` (rotor, viscous, coulomb, offset, log
    offsets, ...), the model's unknowns it is made of (``names``: standard parameter names, or
    the per-log deviations ``d{l}_{j}``), whether the model keeps it, and ``source``: "data"
    (chosen by the held-out error), "option" (set by the caller: forced in or out) or
    "regrouped" (not a base parameter of its own: carried by another, kept) or
    "undetermined" (the data do not determine it: as the options and the robot have it).
    ``gain_percent``: how much its joint's held-out MSE rises without it (a kept term) or falls
    with it (a dropped one), in % of the chosen structure's (the geometric mean over the blocks
    of the ratio); ``gain_se_percent`` the standard error of its log over the blocks, in %
    (None where not measured)."""

    joint: int
    kind: str
    names: tuple[str, ...]
    kept: bool
    source: str
    gain_percent: float | None = None
    gain_se_percent: float | None = None

    def to_json(self) -> dict:
        return {"joint": self.joint + 1, "kind": self.kind, "names": list(self.names),
                "kept": self.kept, "source": self.source, "gain_percent": self.gain_percent,
                "gain_se_percent": self.gain_se_percent}


@dataclass(frozen=True)
class Structure:
    """A chosen model structure: the terms (``Term``) of every joint, the template's friction
    model and whether it has rotor columns (``rotor_inertia``: some joint keeps its own, or
    the caller asked), and how it was chosen (``blocks``, the chosen structure's held-out
    RMSE per joint ``held_out_rmse`` [N m], ``seconds``). ``dropped`` lists the unknowns fixed
    at zero: what ``identify`` leaves out of the fit (rotor inertias are none of them when no
    joint keeps one: the model then has no rotor columns)."""

    terms: tuple[Term, ...]
    friction: FrictionModel
    rotor_inertia: bool
    offsets: str
    blocks: int
    held_out_rmse: tuple[float, ...]
    seconds: float = 0.0

    @property
    def dropped(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(
            name for term in self.terms if not term.kept
            and (term.kind != "rotor" or self.rotor_inertia)  # else no rotor columns at all
            for name in term.names))

    def kept(self, joint: int, kind: str) -> bool | None:
        """Whether joint ``joint`` (0-based) keeps its ``kind`` term (None: no such term)."""
        for term in self.terms:
            if term.joint == joint and term.kind == kind:
                return term.kept
        return None

    def to_json(self) -> dict:
        return {"chosen_by": f"held-out error over {self.blocks} time blocks (WLS refit, "
                             f"one standard error and max({100 * MIN_GAIN:g} %, "
                             f"{CHANCE:g} / block samples) parsimony)",
                "blocks": self.blocks, "min_gain_percent": 100 * MIN_GAIN,
                "friction": self.friction.name, "rotor_inertia": self.rotor_inertia,
                "offsets": self.offsets,
                "dropped": list(self.dropped), "held_out_rmse": list(self.held_out_rmse),
                "seconds": self.seconds, "terms": [term.to_json() for term in self.terms]}

    @classmethod
    def from_json(cls, payload: dict, friction: FrictionModel | None) -> Structure:
        """The structure ``to_json`` wrote (a model's report), over the ``friction`` columns
        of that model: to refit with the same choice (a bootstrap's replicates); None: to
        read and show only (a method that applied the rotor choice alone, with friction of
        its own)."""
        if not isinstance(payload, dict) or (friction is not None
                                             and payload.get("friction") != friction.name):
            raise ValueError(f"`structure`: a chosen structure over "
                             f"{getattr(friction, 'name', 'any')!r} friction columns expected, "
                             f"got {str(payload)[:60]!r}")
        terms = tuple(Term(int(t["joint"]) - 1, str(t["kind"]), tuple(t["names"]),
                           bool(t["kept"]), str(t["source"]), t.get("gain_percent"),
                           t.get("gain_se_percent")) for t in payload["terms"])
        return cls(terms=terms, friction=friction, rotor_inertia=bool(payload["rotor_inertia"]),
                   offsets=str(payload.get("offsets", "per-log")),
                   blocks=int(payload["blocks"]),
                   held_out_rmse=tuple(float(v) for v in payload["held_out_rmse"]),
                   seconds=float(payload.get("seconds", 0.0)))

    def lines(self, joint_names: Sequence[str]) -> list[str]:
        """A compact table: one line per joint, one cell per term (kept +gain %, or out)."""
        kinds = list(dict.fromkeys(term.kind for term in self.terms))
        head = [f"  model structure chosen by held-out error over {self.blocks} time blocks "
                f"({self.seconds:.2f} s): a term is kept when it lowers",
                f"  its joint's held-out MSE by more than one standard error and "
                f"{100 * MIN_GAIN:g} % (or {CHANCE:g} / block samples; cells: kept/out, by how "
                "much it lowers it, %)"]
        width = max(8, *(len(name) for name in joint_names))
        out = [*head, "    " + f"{'joint':<{width}}  " + "  ".join(f"{k:<14}" for k in kinds)
               + "  held-out RMSE"]
        for j, name in enumerate(joint_names):
            cells = []
            for kind in kinds:
                term = next((t for t in self.terms if t.joint == j and t.kind == kind), None)
                cells.append(f"{_cell(term):<14}")
            out.append(f"    {name:<{width}}  " + "  ".join(cells)
                       + f"  {self.held_out_rmse[j]:.4g}")
        return out


def _cell(term: Term | None) -> str:
    if term is None:
        return "-"
    word = "kept" if term.kept else "out"
    if term.source == "regrouped":
        return "in link"
    if term.source == "option":
        return f"{'on' if term.kept else 'off'} (option)"
    if term.source == "undetermined":
        return f"{'on' if term.kept else 'off'} (no data)"
    if term.gain_percent is None:
        return word
    return f"{word} {term.gain_percent:+.3g}"


def choose_structure(robot: Robot, logs: Sequence[Dataset], *,
                     friction: FrictionModel | None = None, rotor_inertia: bool | None = None,
                     offsets: Offsets = "per-log", blocks: int = DEFAULT_BLOCKS,
                     method: str = "rref") -> Structure:
    """The structure the logs support (see the module): what the caller left open is chosen,
    per joint, by the held-out error over ``blocks`` contiguous time blocks of every log.

    ``rotor_inertia``: None: each joint's rotor inertia is a candidate; True: every joint keeps
    one; False: none. ``friction``: None: the columns of ``default_friction(robot)`` are
    candidates, per joint and coefficient; a linear model given: its columns are kept as
    given. ``offsets``: "per-log" (several logs): each joint's per-log offset deviations are a
    candidate (dropped: the logs share that joint's offset); "shared": none.
    """
    return choose_folded(robot, logs, friction=friction, rotor_inertia=rotor_inertia,
                         offsets=offsets, blocks=blocks, method=method)[0]


def choose_folded(robot: Robot, logs: Sequence[Dataset], *, friction: FrictionModel | None,
            rotor_inertia: bool | None, offsets: Offsets, blocks: int, method: str,
            progress=None, client=None, weights=None
            ) -> tuple[Structure, LinearModel, Factors, list[str]]:
    """``choose_structure``, with the candidate template, its factors (groups ``(log, block,
    joint)``) and its unknowns' names: the final fit reuses them. ``weights``: each row's
    weight (``fold_logs``'s), e.g. a robust fit's at convergence: the choice is then made on
    the rows as that fit weighs them (outliers out)."""
    import time

    began = time.perf_counter()
    if not (isinstance(blocks, int) and blocks >= 2):
        raise ValueError(f"`blocks` must be an integer >= 2 (time blocks to hold out), got "
                         f"{blocks!r}")
    chosen_friction = friction is None
    friction = default_friction(robot) if friction is None else friction
    if not friction.linear:
        raise ValueError(f"`friction` must be linear in its parameters, got {friction.name!r}")
    rotor = rotor_inertia is None or rotor_inertia
    template = _template(robot, friction, rotor, method)
    deviations = deviation_names(template, logs, offsets)
    names = [*template.base.base_names, *deviations]
    shortest = min(log.n_samples for log in logs)
    training = sum(log.n_samples for log in logs) * (blocks - 1) // blocks * robot.n_joints
    if shortest < MIN_BLOCK_SAMPLES * blocks or training <= 2 * len(names):
        raise TooShortError(
            f"logs of {shortest} samples and fewer cannot be cut into {blocks} time blocks "
            f"of {MIN_BLOCK_SAMPLES} samples or more whose training rows outnumber the "
            f"{len(names)} unknowns twice for the held-out choice of the structure "
            "(`--structure fixed` fits the options as given)")
    factors = fold_logs(template, logs, len(deviations), blocks=blocks, progress=progress,
                        client=client, weights=weights)
    terms = _candidates(template, names, chosen_friction=chosen_friction,
                        rotor=rotor_inertia)
    # small products, many of them: one BLAS thread runs them at full speed (as the fold)
    with threadpool_limits(limits=1, user_api="blas"):
        check = _CrossValidation(factors, robot.n_joints, blocks)
        # what the data leave undetermined is not theirs to choose: as the options have it
        # (the fit then names it, as with a fixed structure)
        stated = bool(robot.rotor_inertia.any())
        terms = [dataclasses.replace(t, source="undetermined",
                                     kept=t.kind != "rotor" or stated)
                 if t.source == "data" and _columns([t], names, kept=True) & check.undetermined
                 else t for t in terms]
        decided, final = _eliminate(check, terms, names)
        out = tuple(_measured(check, decided, names, term, final) for term in decided)
    rotor_kept = bool(rotor_inertia) or any(t.kind == "rotor" and t.kept and
                                            t.source != "regrouped" for t in out)
    if not rotor_kept:  # no rotor columns at all: a regrouped rotor inertia rides in its link
        out = tuple(dataclasses.replace(t, kept=False) if t.kind == "rotor" else t
                    for t in out)
    rmse = np.sqrt(final.mean(axis=0))
    structure = Structure(terms=out, friction=friction, rotor_inertia=rotor_kept,
                          offsets=offsets, blocks=blocks,
                          held_out_rmse=tuple(float(v) for v in rmse),
                          seconds=time.perf_counter() - began)
    return structure, template, factors, names


def _template(robot: Robot, friction: FrictionModel, rotor: bool, method: str) -> LinearModel:
    """``linear_template`` (a zero-coefficient model of these columns)."""
    base = robot_base_parameters(robot, friction=friction, method=method, rotor_inertia=rotor)
    return LinearModel(robot=robot, friction=friction, base=base,
                       coefficients=np.zeros(base.rank), std=np.zeros(base.rank),
                       rotor_inertia=rotor)


def _candidates(template: LinearModel, names: Sequence[str], *, chosen_friction: bool,
                rotor: bool | None) -> list[Term]:
    """Every optional term of every joint, undecided (kept), with its source."""
    n = template.robot.n_joints
    classes = template.base.classification()
    out = []
    if template.rotor_inertia:
        for j in range(n):
            name = f"Ia{j + 1}"
            if classes.get(name) != "alone":
                out.append(Term(j, "rotor", (), True, "regrouped"))
            else:
                out.append(Term(j, "rotor", (name,), True,
                                "data" if rotor is None else "option"))
    for name in template.friction.coefficient_names():
        prefix = name.rstrip("0123456789")
        j = int(name[len(prefix):]) - 1
        kind = _KIND.get(prefix, prefix)
        if classes.get(name) != "alone":
            out.append(Term(j, kind, (), True, "regrouped"))
            continue
        own = (name,)
        if kind == "offset":  # no offset: no per-log offsets either
            own += tuple(d for d in names[template.base.rank:] if d.endswith(f"_{j + 1}"))
        out.append(Term(j, kind, own, True, "data" if chosen_friction else "option"))
    for j in range(n):
        mine = tuple(d for d in names[template.base.rank:] if d.endswith(f"_{j + 1}"))
        if mine:
            out.append(Term(j, "log offsets", mine, True,
                            "data" if chosen_friction else "option"))
    return sorted(out, key=lambda t: t.joint)


def _columns(terms: Sequence[Term], names: Sequence[str], *, kept: bool) -> set[int]:
    """Positions in ``names`` of the unknowns of the ``terms`` kept (``kept``) or dropped."""
    index = {name: k for k, name in enumerate(names)}
    return {index[name] for t in terms if t.kept == kept for name in t.names}


class _CrossValidation:
    """Held-out errors from the factors of (log, block, joint) groups (see the module)."""

    def __init__(self, factors: Factors, n: int, blocks: int) -> None:
        p = factors.n_columns
        self.n, self.blocks, self.p = n, blocks, p
        scattered = {key: factors.scattered(key) for key in factors.keys()}
        rows = factors.rows
        self.rows = np.zeros((blocks, n))
        held = {}
        for (_, b, j), value in scattered.items():
            held.setdefault((b, j), []).append(value)
        for (_, b, j), count in rows.items():
            self.rows[b, j] += count
        # each held-out block's rows, per joint (unweighted): its error
        self.held = {key: fold(None, np.vstack(parts)) for key, parts in held.items()}
        # the joints' noise levels from the full model's residuals: the fit's weights
        whole = fold(None, np.vstack(list(scattered.values())))
        self.undetermined = _undetermined(whole[:p, :p], factors.n_rows)
        x = self._solve(whole, np.arange(p))
        squares = np.zeros(n)
        for (_, j), factor in self.held.items():
            squares[j] += np.sum((factor @ np.append(x, -1.0)) ** 2)
        counts = self.rows.sum(axis=0)
        sigma = np.sqrt(squares / np.maximum(counts - p / n, 1.0))
        positive = sigma[sigma > 0]
        floor = positive.min() * 1e-6 if positive.size else 1.0
        self.weight = 1.0 / np.maximum(sigma, floor)
        per_block = {}
        for (_, b, j), value in scattered.items():
            per_block.setdefault(b, []).append(value * self.weight[j])
        blocked = {b: fold(None, np.vstack(parts)) for b, parts in per_block.items()}
        # the training factor of each fold: every block but the held-out one
        self.training = {b: fold(None, np.vstack([blocked[c] for c in blocked if c != b]))
                         for b in range(blocks)}

    def min_gain(self, joint: int) -> float:
        """The relative rise of ``joint``'s held-out MSE below which a term is not kept:
        ``MIN_GAIN``, or ``CHANCE`` over its smallest block's rows when larger."""
        return max(MIN_GAIN, CHANCE / max(self.rows[:, joint].min(), 1.0))

    def errors(self, dropped: set[int]) -> NDArray:
        """``(blocks, n)``: the held-out mean square error of each joint on each block, the
        unknowns ``dropped`` fixed at zero."""
        mask = np.ones(self.p, dtype=bool)
        mask[list(dropped)] = False
        keep = np.flatnonzero(mask)
        out = np.zeros((self.blocks, self.n))
        for b in range(self.blocks):
            x = self._solve(self.training[b], keep)
            vector = np.append(x, -1.0)
            for j in range(self.n):
                factor = self.held.get((b, j))
                if factor is not None and self.rows[b, j]:
                    out[b, j] = np.sum((factor @ vector) ** 2) / self.rows[b, j]
        return out

    def _solve(self, augmented: NDArray, keep: NDArray) -> NDArray:
        """Least squares on the columns ``keep`` of a compressed triangular ``[W y]`` (minimum
        norm in the columns' scale where they do not determine every unknown), zero
        elsewhere. Deleting columns of a triangular factor leaves those before the first
        deleted one triangular: only the trailing block is factored again (the optional
        terms sit after the rigid body's columns, so that block is small)."""
        p = self.p
        columns = np.append(keep, p)
        gaps = np.flatnonzero(keep != np.arange(keep.size))
        first = int(gaps[0]) if gaps.size else keep.size  # where the first column deleted was
        if keep.size == p:
            factor = augmented[:, columns]
        else:
            factor = np.zeros((keep.size + 1, keep.size + 1))
            factor[:first] = augmented[:first, columns]
            tail = np.linalg.qr(augmented[first:, columns[first:]], mode="r")
            factor[first:first + tail.shape[0], first:] = tail
        k = keep.size
        r, z = factor[:k, :k], factor[:k, k]
        norms = np.linalg.norm(r, axis=0)
        norms = np.where(norms > 0, norms, 1.0)
        scaled = r / norms
        diagonal = np.abs(np.diag(scaled))
        if diagonal.size and diagonal.min() > 1e-10 * diagonal.max():
            solution = scipy.linalg.solve_triangular(scaled, z)
        else:
            solution = np.linalg.lstsq(scaled, z, rcond=None)[0]
        out = np.zeros(p)
        out[keep] = solution / norms
        return out


def _undetermined(r: NDArray, n_rows: int) -> set[int]:
    """The unknowns the rows of the triangular factor ``r`` leave undetermined (a component
    in its null space, the columns scaled to unit norm; the linear estimators' rank rule)."""
    norms = np.linalg.norm(r, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    _, singular, vt = np.linalg.svd(r / norms)
    if not singular.size or singular[0] == 0:
        return set(range(r.shape[1]))
    rank = int((singular > max(n_rows, r.shape[1]) * np.finfo(float).eps
                * singular[0]).sum())
    if rank == r.shape[1]:
        return set()
    return set(np.flatnonzero(np.abs(vt[rank:]).max(axis=0)
                              > np.sqrt(np.finfo(float).eps)).tolist())


def _gain(without: NDArray, base: NDArray, joint: int) -> tuple[float, float]:
    """The rise of ``joint``'s held-out MSE from ``base`` to ``without``, block by block as
    the logarithm of their ratio (scale-free: a block where the whole model extrapolates
    badly, its MSE several times the others', does not outweigh them): its mean over the
    blocks and the standard error of that mean."""
    tiny = np.finfo(float).tiny
    rise = np.log(np.maximum(without[:, joint], tiny) / np.maximum(base[:, joint], tiny))
    se = float(rise.std(ddof=1) / np.sqrt(rise.size)) if rise.size > 1 else 0.0
    return float(rise.mean()), se


def _eliminate(check: _CrossValidation, terms: list[Term], names: Sequence[str]
               ) -> tuple[list[Term], NDArray]:
    """Greedy backward elimination: each round, per joint, the least-supported of its data
    terms is dropped, until every data term left is supported. Returns the terms, each kept
    one with its gain measured in the last round (against the chosen structure), and the
    chosen structure's held-out errors ``(blocks, n)``."""
    terms = list(terms)
    while True:
        dropped = _columns(terms, names, kept=False)
        base = check.errors(dropped)
        worst: dict[int, tuple[float, int]] = {}
        for i, term in enumerate(terms):
            if term.source != "data" or not term.kept:
                continue
            own = _columns([term], names, kept=True)
            if not own:
                continue
            gain, se = _gain(check.errors(dropped | own), base, term.joint)
            terms[i] = _with_gain(term, gain, se)
            margin = max(se, np.log1p(check.min_gain(term.joint)))
            if gain <= margin:
                score = gain / margin if margin > 0 else -np.inf
                if term.joint not in worst or score < worst[term.joint][0]:
                    worst[term.joint] = (score, i)
        if not worst:
            return terms, base
        for _, i in worst.values():
            terms[i] = dataclasses.replace(terms[i], kept=False)
            if terms[i].kind == "offset":  # its log offsets go with it
                terms = [dataclasses.replace(t, kept=False)
                         if t.joint == terms[i].joint and t.kind == "log offsets" else t
                         for t in terms]


def _with_gain(term: Term, gain: float, se: float) -> Term:
    """``term`` with a held-out gain (``_gain``'s mean log ratio and its standard error), in
    % of its joint's held-out MSE."""
    return dataclasses.replace(term, gain_percent=float(100 * np.expm1(gain)),
                               gain_se_percent=float(100 * se))


def _measured(check: _CrossValidation, terms: list[Term], names: Sequence[str], term: Term,
              final: NDArray) -> Term:
    """A dropped data ``term`` with its held-out gain against the chosen structure
    ``final``: how much its joint's held-out MSE would fall with it (kept terms carry theirs
    from the last round of the elimination)."""
    if term.kept or term.source != "data" or not term.names:
        return term
    dropped = _columns(terms, names, kept=False)
    own = {k for k, name in enumerate(names) if name in term.names}
    return _with_gain(term, *_gain(final, check.errors(dropped - own), term.joint))


def restricted(factors: Factors, dropped: Sequence[int], *, merge_blocks: bool = False
               ) -> Factors:
    """The factors of the same rows without the unknowns ``dropped`` (positions; fixed at
    zero): each group's factor over the unknowns it touches and keeps, refactored;
    ``merge_blocks``: the time blocks of groups ``(log, block, joint)`` folded into one,
    ``(log, 0, joint)`` (a fit on all of them needs no blocks)."""
    dropped = np.unique(np.asarray(dropped, dtype=int))
    if not dropped.size and not merge_blocks:
        return factors
    keep = np.setdiff1d(np.arange(factors.n_columns), dropped)
    parts, rows = {}, {}
    for key in factors.keys():
        mine = (key[0], 0, key[-1]) if merge_blocks else key
        parts.setdefault(mine, []).append(
            factors.scattered(key)[:, [*keep, factors.n_columns]])
        rows[mine] = rows.get(mine, 0) + factors.rows[key]
    out = Factors(keep.size)
    with threadpool_limits(limits=1, user_api="blas"):
        for key, scattered in parts.items():
            stacked = np.vstack(scattered)
            touched = np.flatnonzero(np.any(stacked[:, :-1] != 0, axis=0))
            out.layouts[key] = Layout(touched, np.arange(touched.size))
            out.groups[key] = _Group(fold(None, stacked[:, [*touched, keep.size]]), rows[key])
    return out


def restricted_layout(layout: Layout, position: NDArray) -> Layout:
    """``layout`` (of the rows folded over every unknown) read against the kept unknowns:
    ``position[c]`` is unknown c's place among the kept ones, -1 for a dropped one (zero)."""
    regrouping = layout.regrouping
    if regrouping is None:
        regrouping = np.zeros((layout.independent.size, layout.columns.size))
        regrouping[np.arange(layout.independent.size), layout.independent] = 1.0
    mine = position[layout.columns]
    kept = mine >= 0
    return Layout(mine[kept], layout.independent, regrouping[:, kept])


def expand(estimator, dropped: Sequence[int], p: int) -> None:
    """A linear estimator fitted on the unknowns kept, read over all ``p``: the ``dropped``
    ones are zero with std 0 (fixed by the structure, not estimated), ``dropped_`` (its own
    coefficients dropped for their std) in the positions of all, ``rank_`` counting the
    dropped ones (``condition_number_``, ``factor_`` and ``singular_`` stay the kept
    columns')."""
    keep = np.setdiff1d(np.arange(p), dropped)
    coef, std = np.zeros(p), np.zeros(p)
    coef[keep], std[keep] = estimator.coef_, estimator.std_
    covariance = np.zeros((p, p))
    covariance[np.ix_(keep, keep)] = estimator.covariance_
    estimator.coef_, estimator.std_, estimator.covariance_ = coef, std, covariance
    estimator.relative_std_percent_ = relative_std_percent(coef, std)
    estimator.dropped_ = keep[np.asarray(estimator.dropped_, dtype=int)]
    # the unknowns fixed at zero are determined (by the structure): the rank counts them, so
    # that a full-rank fit's rank is its model's base parameters, as with a fixed structure
    estimator.rank_ = int(estimator.rank_) + len(dropped)
