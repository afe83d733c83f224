"""Export of the models to ``.lp``, ``.mps``, ``.nl`` and ``.gms`` files, and the ``formulations/`` library.

    from tpm_models.export import export, write
    export(16, X, y, c=0, nu=0.3, alpha=1.0, path="eq16.lp")        # build (16) and write it
    write(model, "model.nl.gz")                                      # any built model; .gz compresses

Formats (Pyomo's writers, names with ``symbolic_solver_labels``):

======  ==============================  ============================  ===================================
format  Pyomo writer                    holds                         names (``w[1]``, ``margin[17]``)
======  ==============================  ============================  ===================================
lp      ``lp`` (CPLEX LP, v2 writer)    linear + quadratic terms      ``w(1)``, ``c_l_margin(17)_``
mps     ``mps`` (free MPS, QUADOBJ,     linear + quadratic terms      ``w(1)``, ``c_l_margin(17)_``
        QCMATRIX)
nl      ``nl`` (AMPL, v2 writer)        everything                    comments ``#w[1]``, ``#margin[17]``
gms     ``gams``                        everything                    ``w_1_``, ``margin_17__lo``
======  ==============================  ============================  ===================================

What is written is the model as built, with these documented departures in *form* only
(the same function and feasible set):

* an objective that is a polynomial of degree <= 2 is written **collected**: one coefficient
  per variable and per pair of variables, in the model's variable order. The ``.lp`` and
  ``.mps`` writers do this themselves; without it the ``.nl`` and ``.gms`` files of the duals
  repeat every Gram product (``K[i,k] lam[i] lam[k]`` and ``K[k,i] lam[k] lam[i]``) and expand
  ``nu/m sum_i (x_i'w + theta)`` point by point, which made them 2-10 times larger;
* ``.nl`` and ``.gms`` carry a start point: every variable at
  :data:`tpm_models.ipopt.COLD_START` (0.01) clipped to its bounds, the cold start of the
  project's Ipopt: the ``sqrt`` of (23) at p = 2 has no derivative at ``w = 0``;
* ``.nl`` is written without Pyomo's linear presolve (which would eliminate variables);
  ``.mps`` gets two repairs of Pyomo's writer (:func:`_mps_fixed`): a one-token NAME, and a
  ``COLUMNS`` entry for a variable that appears only in quadratic terms (``t`` of (26), (27),
  (29)), without which Gurobi refuses the file.

A file that cannot hold a model is refused with a ``ValueError`` before anything is written:
``.lp``/``.mps`` hold no ``sqrt`` or fractional power (the norms of (23) at p = 2 and of (23),
(26) at a general p), and (22) is not a finite program at all. Same model, same bytes: the
writers run with ordered file determinism, and gzip files are written with no name and time.

The library (:func:`generate_library`, ``tpm-models export-library``) is described in
``docs/formulations.md``.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.numeric_expr import LinearExpression, PowExpression, UnaryFunctionExpression
from pyomo.opt import WriterFactory
from pyomo.repn.plugins.lp_writer import LPWriter
from pyomo.repn.plugins.nl_writer import NLWriter
from pyomo.repn.quadratic import QuadraticRepnVisitor
from pyomo.repn.util import OrderedVarRecorder

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.ipopt import COLD_START
from tpm_models.kernels import KERNELS, Kernel
from tpm_models.registry import build, model_info
from tpm_models.robust_checks import obj_residual, objective_scale
from tpm_models.solvers import (
    FEASIBILITY_TOL,
    NoOptimalSolutionError,
    SolverUnavailableError,
    is_licence_limit,
    max_violation,
    model_class,
    solve,
    title,
)

FORMATS = ("lp", "mps", "nl", "gms")
"""The formats :func:`write` knows, in the order the library lists them."""

QUADRATIC_ONLY = frozenset({"lp", "mps"})
"""Formats that hold only linear and quadratic terms."""

NOT_FINITE_22 = (
    "(22) is the semi-infinite robust model: one constraint for every point of every uncertainty "
    "set (21), not a finite program that a file can hold. Export a finite counterpart with the same "
    "optimum (Theorem 1, Corollary 1) instead: (23) (any p; .nl/.gms for p not in {1, inf}), "
    "(26) (any p), or the SOCPs (27) (p=1), (28) (p=2), (29) (p=inf)"
)


# --------------------------------------------------------------------------- format checks


def _format_of(path: str | os.PathLike, fmt: str | None) -> str:
    """The format named by ``fmt``, or else by the extension of ``path`` (``.gz`` stripped)."""
    name = Path(path).name
    stem = name[:-3] if name.endswith(".gz") else name
    ext = stem.rsplit(".", 1)[-1].lower() if "." in stem else ""
    if fmt is None:
        if ext not in FORMATS:
            raise ValueError(f"cannot tell the format of {name!r}: give one of {FORMATS} (or a file ending in it)")
        return ext
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; formats: {FORMATS}")
    if ext in FORMATS and ext != fmt:
        raise ValueError(f"{name!r} ends in .{ext} but the format asked for is {fmt}: rename the file or omit it")
    return fmt


def _nonpolynomial(expr) -> list[str]:
    """Names of the functions of ``expr`` that are not linear or quadratic (``sqrt``, ``power 1.5``...)."""
    found: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if not hasattr(node, "is_expression_type") or not node.is_expression_type():
            continue
        if isinstance(node, UnaryFunctionExpression):
            found.add(node.getname())
        elif isinstance(node, PowExpression):
            power = node.args[1]
            if hasattr(power, "is_potentially_variable") and power.is_potentially_variable():
                found.add("variable power")
            elif float(pyo.value(power)) not in (0.0, 1.0, 2.0):
                found.add(f"power {float(pyo.value(power)):g}")
        stack.extend(node.args)
    return sorted(found)


@dataclass
class _Repn:
    """An expression as constant + linear + quadratic terms (model variable order), or nonlinear."""

    constant: float
    linear: list[tuple]
    quadratic: list[tuple]
    nonlinear: bool


def _repn(expr, position: dict[int, int]) -> _Repn:
    """Pyomo's quadratic walker (the one the ``.lp`` writer uses): one term per variable and per pair."""
    visitor = QuadraticRepnVisitor({}, var_recorder=OrderedVarRecorder({}, {}, None))
    r = visitor.walk_expression(expr)
    if r.nonlinear is not None:
        return _Repn(0.0, [], [], True)
    var = visitor.var_map
    mult = float(r.multiplier)
    linear = sorted(((position[i], var[i], mult * float(c)) for i, c in r.linear.items()), key=lambda t: t[0])
    quadratic = []
    for (i, k), coef in (r.quadratic or {}).items():
        a, b = sorted(((position[i], var[i]), (position[k], var[k])), key=lambda t: t[0])
        quadratic.append((a[0], b[0], a[1], b[1], mult * float(coef)))
    quadratic.sort(key=lambda t: (t[0], t[1]))
    return _Repn(mult * float(r.constant), [(v, c) for _, v, c in linear],
                 [(u, v, c) for _, _, u, v, c in quadratic], False)


@dataclass
class _Analysis:
    """What the writers need to know about a model, computed once for all formats."""

    not_quadratic: list[tuple[str, list[str]]]
    """``(component name, offending functions)`` of every row or objective of degree > 2."""
    objective: object
    """The active objective."""
    collected: object
    """Its collected polynomial form, or ``None`` when it is not of degree <= 2."""


def _analyse(model: pyo.ConcreteModel) -> _Analysis:
    with PauseGC():  # a large model is millions of live objects: no collection passes over them
        return _analyse_paused(model)


def _analyse_paused(model: pyo.ConcreteModel) -> _Analysis:
    _refuse_semi_infinite(model)
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objectives) != 1:
        raise ValueError(f"{title(model)!r} has {len(objectives)} active objectives; a file holds exactly one")
    position = {id(v): k for k, v in enumerate(model.component_data_objects(pyo.Var, descend_into=True))}
    bad, collected = [], None
    repn = _repn(objectives[0].expr, position)
    if repn.nonlinear:
        bad.append((objectives[0].name, _nonpolynomial(objectives[0].expr)))
    else:
        terms = [c * v for v, c in repn.linear if c != 0.0]
        terms += [c * u * v for u, v, c in repn.quadratic if c != 0.0]
        if repn.constant != 0.0 or not terms:
            terms.insert(0, repn.constant)
        collected = sum(terms[1:], terms[0])
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        if con.body.__class__ is LinearExpression:
            continue  # degree <= 1 by construction (constants, monomials, variables): no walk of a large model
        degree = con.body.polynomial_degree()
        if degree is None or degree > 2:
            bad.append((con.name, _nonpolynomial(con.body)))
    return _Analysis(bad, objectives[0], collected)


def _refuse_semi_infinite(model: pyo.ConcreteModel) -> None:
    if hasattr(model, "uncertainty_set"):
        raise ValueError(
            f"{title(model)!r} has uncertain parameters (PyROS form): its file would fix them at their "
            f"nominal values and be a different model. {NOT_FINITE_22}"
        )


def _formats(analysis: _Analysis) -> tuple[str, ...]:
    return tuple(f for f in FORMATS if not (analysis.not_quadratic and f in QUADRATIC_ONLY))


def formats_for(model: pyo.ConcreteModel) -> tuple[str, ...]:
    """The formats of :data:`FORMATS` that can hold ``model`` exactly."""
    return _formats(_analyse(model))


def _check(model: pyo.ConcreteModel, analysis: _Analysis, fmt: str) -> None:
    if fmt in QUADRATIC_ONLY and analysis.not_quadratic:
        bad = analysis.not_quadratic
        where = "; ".join(f"{name}: {', '.join(kinds) or 'nonlinear'}" for name, kinds in bad[:3])
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise ValueError(
            f".{fmt} holds only linear and quadratic terms, and {title(model)!r} has others ({where}{more}). "
            "Export it to .nl or .gms, which hold any function; for p = 1, 2, inf the SOCPs (26), (27), (28), "
            "(29) have the same optimum and fit .lp/.mps"
        )


def check_format(model: pyo.ConcreteModel, fmt: str) -> None:
    """Raise ``ValueError`` (saying what to do) unless format ``fmt`` can hold ``model`` exactly."""
    _check(model, _analyse(model), _format_of("x", fmt))


# --------------------------------------------------------------------------- writing


@contextmanager
def _prepared(model: pyo.ConcreteModel, analysis: _Analysis, fmt: str) -> Iterator[None]:
    """Temporarily: the collected objective and (.nl, .gms) the cold start."""
    objective = analysis.objective
    original_expr = objective.expr
    saved_values: list[tuple] = []
    try:
        if analysis.collected is not None:
            objective.set_value(analysis.collected)
        if fmt in ("nl", "gms"):
            for v in model.component_data_objects(pyo.Var, descend_into=True):
                if v.fixed:
                    continue
                saved_values.append((v, v.value))
                start = COLD_START
                if v.lb is not None:
                    start = max(start, float(pyo.value(v.lb)))
                if v.ub is not None:
                    start = min(start, float(pyo.value(v.ub)))
                v.set_value(start, skip_validation=True)
        yield
    finally:
        objective.set_value(original_expr)
        for v, value in saved_values:
            v.set_value(value, skip_validation=True)


_LP_OPTIONS = {"symbolic_solver_labels": True, "file_determinism": 20}  # 20: sort indices
_NL_OPTIONS = {"symbolic_solver_labels": True, "file_determinism": 20, "linear_presolve": False,
               "scale_model": False}


def _nl(model: pyo.ConcreteModel) -> tuple[str, list]:
    """The ``.nl`` text (names as comments) and the variables in the order of its columns."""
    out, rows, cols = io.StringIO(), io.StringIO(), io.StringIO()
    info = NLWriter().write(model, out, rows, cols, **_NL_OPTIONS)
    return out.getvalue(), list(info.variables)


def _text(model: pyo.ConcreteModel, analysis: _Analysis, fmt: str) -> bytes:
    _check(model, analysis, fmt)
    with PauseGC(), _prepared(model, analysis, fmt):
        if fmt == "lp":
            out = io.StringIO()
            LPWriter().write(model, out, **_LP_OPTIONS)
            text = out.getvalue()
        elif fmt == "nl":
            text = _nl(model)[0]
        else:
            with tempfile.TemporaryDirectory(prefix="tpm-export-") as tmp:
                path = os.path.join(tmp, f"model.{fmt}")
                writer = WriterFactory("mps" if fmt == "mps" else "gams")
                writer(model, path, lambda _: True, {"symbolic_solver_labels": True, "file_determinism": 1})
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
            if fmt == "mps":
                text = _mps_fixed(text, "_".join(title(model).split()))
    return text.encode("utf-8")


def _mps_fixed(text: str, name: str) -> str:
    """Two repairs of Pyomo's MPS writer: a one-token NAME (Pyomo quotes a title with blanks, and
    readers take its first word), and a COLUMNS entry (objective coefficient 0) for every variable
    that appears only in quadratic terms (``t`` of (26), (27), (29)): Pyomo leaves it out of COLUMNS,
    and readers then refuse its QCMATRIX / QUADOBJ entries (Gurobi: "MPS read error")."""
    lines = text.split("\n")
    lines = [f"NAME {name}" if line.startswith("NAME ") else line for line in lines]
    section, objective_row = "", None
    declared: set[str] = set()
    quadratic: list[str] = []
    end_of_columns = None
    for k, line in enumerate(lines):
        if line and not line[0].isspace():
            if section == "COLUMNS" and end_of_columns is None:
                end_of_columns = k
            section = line.split()[0]
            continue
        fields = line.split()
        if not fields:
            continue
        if section == "ROWS" and fields[0] == "N" and objective_row is None:
            objective_row = fields[1]
        elif section == "COLUMNS":
            declared.add(fields[0])
        elif section in ("QUADOBJ", "QMATRIX", "QCMATRIX"):
            for var in fields[:2]:
                if var not in quadratic:
                    quadratic.append(var)
    missing = [v for v in quadratic if v not in declared]
    if missing and end_of_columns is not None and objective_row is not None:
        lines[end_of_columns:end_of_columns] = [f"     {v} {objective_row} 0" for v in missing]
    return "\n".join(lines)


def model_texts(model: pyo.ConcreteModel, formats: Sequence[str] | None = None) -> dict[str, bytes]:
    """The content of ``model``'s file in each format (default: every format that holds it).

    Raises ``ValueError`` (saying what to do) if a named format cannot hold the model.
    """
    analysis = _analyse(model)
    formats = _formats(analysis) if formats is None else [_format_of("x", f) for f in formats]
    return {fmt: _text(model, analysis, fmt) for fmt in formats}


def model_text(model: pyo.ConcreteModel, fmt: str) -> bytes:
    """The content of ``model``'s file in format ``fmt`` (``ValueError`` if the format cannot hold it)."""
    return model_texts(model, [fmt])[_format_of("x", fmt)]


def gzip_bytes(data: bytes) -> bytes:
    """Deterministic gzip: no file name, time 0, level 9."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buf, mtime=0) as fh:
        fh.write(data)
    return buf.getvalue()


def read_text(path: str | os.PathLike) -> bytes:
    """A file's content, decompressed if it ends in ``.gz``."""
    data = Path(path).read_bytes()
    return gzip.decompress(data) if str(path).endswith(".gz") else data


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write(model: pyo.ConcreteModel, path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Write ``model`` to ``path`` in format ``fmt`` (default: from the extension); ``.gz`` compresses.

    Raises ``ValueError`` (and writes nothing) when the format cannot hold the model.
    """
    path = Path(path)
    fmt = _format_of(path, fmt)
    data = model_text(model, fmt)
    _atomic_write(path, gzip_bytes(data) if path.name.endswith(".gz") else data)
    return path


def export(
    eq: int,
    X: np.ndarray,
    y: np.ndarray,
    c: object,
    nu: float,
    alpha: float,
    path: str | os.PathLike,
    fmt: str | None = None,
    kernel: Kernel | None = None,
    p: float | str | None = None,
    eps: float | np.ndarray | None = None,
) -> Path:
    """Build model ``(eq)`` (as :func:`tpm_models.registry.build`) and :func:`write` it to ``path``."""
    if model_info(eq).eq == 22:
        raise ValueError(NOT_FINITE_22)
    return write(build(eq, X, y, c, nu, alpha, kernel=kernel, p=p, eps=eps), path, fmt)


# --------------------------------------------------------------------------- ripopt (.nl solver process)

RIPOPT_OPTIONS = {"print_level": 0, "tol": 1e-10, "constr_viol_tol": 1e-10, "compl_inf_tol": 1e-13, "mu_min": 1e-15,
                  "bound_relax_factor": 0}
"""Options given to ripopt (Ipopt's names). ``bound_relax_factor=0``: at ripopt's default 1e-8 its
objectives were ~1e-8 off (absolute). With ``compl_inf_tol`` 1e-10, (3) for Iris class 1 (objective
-3.5e-7, terms 2.9e-4) was 3.3e-6 off relative to its terms; 1e-13 with ``mu_min`` 1e-15 gives 3.5e-7.
A ``tol`` below 1e-10 (the project's Ipopt runs at 1e-12) ends most instances with ``StopAtTinyStep``."""


RIPOPT_SOLVED = ("Optimal", "Acceptable")
"""ripopt statuses taken as solved; the objective must still agree with another solver. At the
options above ripopt 0.8.2 ends 1 of the library's 180 ``.nl`` files with ``Acceptable`` (Wine,
(23) at p = 2), 1.6e-9 from the reference."""


def ripopt_executable() -> str | None:
    """The ``ripopt`` binary of the ``pyomo-ripopt`` wheel, else one on the PATH, else ``None``."""
    spec = importlib.util.find_spec("pyomo_ripopt")
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "bin" / "ripopt"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    return shutil.which("ripopt")


@dataclass
class RipoptResult:
    """What ripopt wrote to its JSON report for one ``.nl`` file."""

    status: str
    objective: float
    """As ripopt reports it: the *minimised* objective, so ``-f`` for a maximisation."""
    x: np.ndarray
    """Variable values in the ``.nl`` column order."""
    seconds: float
    report: dict = field(repr=False, default_factory=dict)


def run_ripopt(nl_path: str | os.PathLike, timeout: float = 300.0) -> RipoptResult:
    """Solve a ``.nl`` file (``.nl.gz`` is decompressed first) with the ripopt executable.

    Raises ``RuntimeError`` if ripopt is not installed (``pip install pyomo-ripopt``) or fails.
    """
    exe = ripopt_executable()
    if exe is None:
        raise RuntimeError("ripopt is not installed: pip install pyomo-ripopt (the test extra has it)")
    with tempfile.TemporaryDirectory(prefix="tpm-ripopt-") as tmp:
        nl = Path(tmp) / "model.nl"
        nl.write_bytes(read_text(nl_path))
        report = Path(tmp) / "model.json"
        cmd = [exe, str(nl), "-o", str(report), *(f"{k}={v}" for k, v in RIPOPT_OPTIONS.items())]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - start
        if not report.is_file():
            raise RuntimeError(f"ripopt wrote no report (exit {proc.returncode}): {proc.stderr[-500:]}")
        data = json.loads(report.read_text())
    return RipoptResult(str(data["status"]), float(data["objective"]),
                        np.asarray(data["solution"]["x"], dtype=float), seconds, data)


def _solve_ripopt(model: pyo.ConcreteModel) -> tuple[float | None, str]:
    """ripopt on ``model``'s ``.nl``: its point loaded into ``model``; ``(objective or None, message)``."""
    with tempfile.TemporaryDirectory(prefix="tpm-ripopt-") as tmp:
        with _prepared(model, _analyse(model), "nl"):
            text, variables = _nl(model)
        path = Path(tmp) / "model.nl"
        path.write_text(text)
        result = run_ripopt(path)
    if result.status not in RIPOPT_SOLVED:
        return None, f"ripopt: {result.status}"
    for v, value in zip(variables, result.x):
        v.set_value(float(value), skip_validation=True)
    violation = max_violation(model)
    if violation > FEASIBILITY_TOL:
        return None, f"ripopt: point infeasible by {violation:.2g}"
    objective = float(pyo.value(next(model.component_data_objects(pyo.Objective, active=True))))
    return objective, ""


# --------------------------------------------------------------------------- the instance library

LIBRARY_DATASETS = ("iris", "wine")
LIBRARY_NU, LIBRARY_ALPHA = 0.3, 1.0
"""The one (nu, alpha) point of the library: nu/alpha = 0.3, where free support vectors exist."""
LIBRARY_EPS = 0.02
"""Radius of every uncertainty set (21) in the robust instances."""
LIBRARY_P = (1.0, 2.0, math.inf, 3.0)
"""Norms of (21) for (23) and (26): the three of (27)-(29) and one general p."""
LIBRARY_KERNELS = (
    Kernel("hom-poly", degree=2),
    Kernel("inhom-poly", degree=2, gamma=1.0),
    Kernel("gaussian", sigma=1.0),
)
"""Kernels of (12), (13), (19); (10), (11) take the polynomial ones (exact finite feature maps)."""

AGREEMENT_TOL = 1e-6
"""Largest disagreement between two verifying solvers, :func:`tpm_models.robust_checks.obj_residual`
(relative to the objective's terms, as every robust tie)."""

VERIFIERS = {
    "QP": ("piqp", "daqp", "gurobi", "cplex", "highs"),
    "SOCP": ("ipopt", "gurobi", "cplex", "scip"),
    "NLP": ("ipopt", "scip", "ripopt"),
}
"""Solvers tried, in order, until two agree. ``ripopt`` solves the instance's own ``.nl`` file."""

SCIP_VERIFY_TIME_LIMIT = 30.0
"""Seconds SCIP may take to verify an NLP (a limit is noted, and ripopt is tried). With (23)'s norm
written as ``(sum_j (w_j^2)^(p'/2))^(1/p')``, SCIP left a gap of 5e-4 on Wine at p = 3 after 60 s;
with the epigraph form of :func:`tpm_models.robust.build_robust_23` it verifies every NLP here."""

OBJECTIVE_DIGITS = 10
MANIFEST = "manifest.csv"
MANIFEST_COLUMNS = (
    "file", "format", "model", "dataset", "class", "label", "nu", "alpha", "kernel", "p", "eps",
    "model_class", "n_variables", "n_constraints", "sense", "objective", "objective_scale",
    "verified_by", "max_rel_disagreement", "note",
)
STRUCTURAL_COLUMNS = MANIFEST_COLUMNS[: MANIFEST_COLUMNS.index("objective")]
"""Columns that do not depend on a solve."""


def _p_text(p: float | None) -> str:
    return "" if p is None else ("inf" if math.isinf(p) else f"{p:g}")


def _kernel_tag(k: Kernel) -> str:
    short = {"degree": "d", "gamma": "g", "sigma": "s", "a": "a", "b": "b"}
    return k.name + "".join(f"-{short[n]}{getattr(k, n):g}" for n in short if getattr(k, n) is not None)


@dataclass(frozen=True)
class Instance:
    """One canonical instance: model ``eq`` on a shipped data set, class ``c``, fixed parameters."""

    eq: int
    dataset: str
    c: int
    kernel: Kernel | None = None
    p: float | None = None
    nu: float = LIBRARY_NU
    alpha: float = LIBRARY_ALPHA
    eps: float | None = None

    @property
    def stem(self) -> str:
        """Path of its files below the library root, without the extension."""
        variant = _kernel_tag(self.kernel) if self.kernel else ("p" + _p_text(self.p) if self.p else "")
        return f"{self.dataset}/eq{self.eq:02d}{'_' + variant if variant else ''}_c{self.c}"

    def build(self, X: np.ndarray, y: np.ndarray) -> pyo.ConcreteModel:
        return build(self.eq, X, y, self.c, self.nu, self.alpha, kernel=self.kernel, p=self.p, eps=self.eps)


def library_instances(datasets: Sequence[str] = LIBRARY_DATASETS) -> list[Instance]:
    """Every instance of the library, in manifest order (data set, equation, variant, class).

    (22) is included (it has no file; its manifest rows point to (23)).
    """
    out = []
    for name in datasets:
        classes = range(load_dataset(name).n_classes)
        specs: list[tuple[int, Kernel | None, float | None]] = []
        specs += [(eq, None, None) for eq in (2, 3, 4, 5)]
        specs += [(eq, k, None) for eq in (10, 11) for k in LIBRARY_KERNELS if k.name.endswith("poly")]
        specs += [(eq, k, None) for eq in (12, 13) for k in LIBRARY_KERNELS]
        specs += [(eq, None, None) for eq in (15, 16)]
        specs += [(19, k, None) for k in LIBRARY_KERNELS]
        specs += [(eq, None, p) for eq in (22, 23, 26) for p in LIBRARY_P]
        specs += [(27, None, 1.0), (28, None, 2.0), (29, None, math.inf)]
        for eq, k, p in specs:
            for c in classes:
                out.append(Instance(eq, name, c, kernel=k, p=p, eps=LIBRARY_EPS if p is not None else None))
    return out


@dataclass
class Verification:
    """Two or more solvers that agree on an instance's optimum."""

    objective: float
    scale: float
    solvers: list[str]
    disagreement: float
    notes: list[str]


def verify(model: pyo.ConcreteModel, kind: str | None = None) -> Verification:
    """Solve ``model`` with the :data:`VERIFIERS` of its class until two agree within :data:`AGREEMENT_TOL`.

    The first solver's objective is the reference. A licence size limit, a non-optimal end, a
    missing solver or a disagreeing solver is passed over (and noted, except a missing one).
    Raises ``RuntimeError`` if fewer than two agree.
    """
    kind = kind or model_class(model)
    reference: float | None = None
    scale = 0.0
    solvers: list[str] = []
    worst = 0.0
    notes: list[str] = []
    for name in VERIFIERS[kind]:
        if len(solvers) == 2:
            break
        if name == "ripopt":
            if ripopt_executable() is None:
                continue
            objective, message = _solve_ripopt(model)
        else:
            try:
                limit = SCIP_VERIFY_TIME_LIMIT if name == "scip" else None
                objective, message = solve(model, name, time_limit=limit).objective, ""
            except SolverUnavailableError:
                continue
            except NoOptimalSolutionError as exc:
                kind_of = "licence size limit" if is_licence_limit(exc.result) else exc.result.termination.value
                objective, message = None, f"{name}: {kind_of}"
        if objective is None:
            notes.append(message)
            continue
        if reference is None:
            reference, scale = objective, objective_scale(model)
            solvers.append(name)
            continue
        residual = obj_residual(reference, objective, scale)
        if residual > AGREEMENT_TOL:
            notes.append(f"{name}: disagrees by {residual:.1e}")
            continue
        solvers.append(name)
        worst = max(worst, residual)
    if reference is None or len(solvers) < 2:
        raise RuntimeError(
            f"{title(model)}: only {solvers or 'no solver'} reached a verified optimum "
            f"({'; '.join(notes) or 'no other solver installed'}); tried {VERIFIERS[kind]}"
        )
    return Verification(reference, scale, solvers, worst, notes)


def _counts(nl_text: bytes) -> tuple[int, int]:
    """Variables and rows as written: the counts in the ``.nl`` header (Pyomo's writers all drop
    the variables that appear in no active row or objective)."""
    head = nl_text.split(b"\n", 2)[1].split()
    return int(head[0]), int(head[1])


def _fmt_number(x: float, digits: int = OBJECTIVE_DIGITS) -> str:
    return f"{x:.{digits}g}"


def _structure(inst: Instance, label: str, model: pyo.ConcreteModel | None, nl_text: bytes = b"") -> dict[str, str]:
    row = {
        "model": str(inst.eq), "dataset": inst.dataset, "class": str(inst.c), "label": label,
        "nu": f"{inst.nu:g}", "alpha": f"{inst.alpha:g}", "kernel": str(inst.kernel) if inst.kernel else "",
        "p": _p_text(inst.p), "eps": "" if inst.eps is None else f"{inst.eps:g}",
    }
    if model is None:
        row.update({"model_class": "semi-infinite", "n_variables": "", "n_constraints": "", "sense": "min"})
        return row
    n_var, n_con = _counts(nl_text)
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    row.update({
        "model_class": model_class(model), "n_variables": str(n_var), "n_constraints": str(n_con),
        "sense": "min" if objective.sense == pyo.minimize else "max",
    })
    return row


def _note_22(inst: Instance) -> str:
    twin = Instance(23, inst.dataset, inst.c, p=inst.p, eps=inst.eps).stem
    return (f"not a finite program (one row per point of each uncertainty set (21)), so no file; "
            f"by Theorem 1 its optimum is that of (23) with the same data and parameters: {twin}.*")


@dataclass
class LibraryFile:
    """One file of the library: its path below the root and its (uncompressed) content."""

    path: str
    fmt: str
    content: bytes


def instance_files(inst: Instance, model: pyo.ConcreteModel) -> list[LibraryFile]:
    """The files of one instance: every format that holds it, gzip-compressed in the library."""
    return [LibraryFile(f"{inst.stem}.{fmt}.gz", fmt, text) for fmt, text in model_texts(model).items()]


def _library_rows(
    verify_solutions: bool, progress: Callable[[str], None] | None, instances: Sequence[Instance] | None = None
) -> tuple[list[dict[str, str]], list[LibraryFile]]:
    rows: list[dict[str, str]] = []
    files: list[LibraryFile] = []
    data = {}
    for inst in library_instances() if instances is None else instances:
        if inst.dataset not in data:
            d = load_dataset(inst.dataset)
            data[inst.dataset] = (min_max_scale(d.X), d.y, [str(x) for x in d.classes])
        X, y, labels = data[inst.dataset]
        if inst.eq == 22:
            rows.append({"file": "", "format": "", **_structure(inst, labels[inst.c], None),
                         "objective": "", "objective_scale": "", "verified_by": "", "max_rel_disagreement": "",
                         "note": _note_22(inst)})
            continue
        model = inst.build(X, y)
        these = instance_files(inst, model)
        structure = _structure(inst, labels[inst.c], model, next(f.content for f in these if f.fmt == "nl"))
        files += these
        solved = {"objective": "", "objective_scale": "", "verified_by": "", "max_rel_disagreement": "", "note": ""}
        if verify_solutions:
            if progress:
                progress(f"{inst.stem} ({structure['model_class']})")
            v = verify(model, structure["model_class"])
            solved = {
                "objective": _fmt_number(v.objective), "objective_scale": _fmt_number(v.scale, 3),
                "verified_by": ";".join(v.solvers), "max_rel_disagreement": f"{v.disagreement:.1e}",
                "note": "; ".join(v.notes),
            }
        for f in these:
            rows.append({"file": f.path, "format": f.fmt, **structure, **solved})
    return rows, files


def _manifest_bytes(rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def read_manifest(root: str | os.PathLike) -> list[dict[str, str]]:
    """The rows of ``root/manifest.csv``."""
    with open(Path(root) / MANIFEST, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def generate_library(root: str | os.PathLike, progress: Callable[[str], None] | None = None) -> dict[str, float]:
    """Write the library to ``root`` (replacing the data set folders and the manifest) and verify every optimum.

    Deterministic: the same code and solvers give the same bytes. Returns a summary
    (``files``, ``instances``, ``bytes``, ``seconds``).
    """
    start = time.perf_counter()
    root = Path(root)
    rows, files = _library_rows(True, progress)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".formulations-", dir=root.parent))
    try:
        for f in files:
            target = staging / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(gzip_bytes(f.content))
        (staging / MANIFEST).write_bytes(_manifest_bytes(rows))
        for name in LIBRARY_DATASETS:
            if (root / name).exists():
                shutil.rmtree(root / name)
            os.replace(staging / name, root / name)
        os.replace(staging / MANIFEST, root / MANIFEST)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    instances = len({r["file"].rsplit(".", 2)[0] for r in rows if r["file"]})
    return {"files": len(files), "instances": instances, "bytes": size, "seconds": time.perf_counter() - start}


def _key(row: dict[str, str]) -> tuple[str, ...]:
    """What identifies an instance in the manifest."""
    return tuple(row[k] for k in ("model", "dataset", "class", "kernel", "p"))


def check_library(root: str | os.PathLike, select: Callable[[Instance], bool] | None = None) -> list[str]:
    """Differences between the library at ``root`` and a fresh export, without solving (empty: equal).

    Always: the manifest lists the instances of :func:`library_instances` in order, and the files
    present are exactly the manifest's. For the instances ``select`` accepts (default: all), every
    file's decompressed bytes and the manifest's :data:`STRUCTURAL_COLUMNS` equal a fresh export.
    """
    root = Path(root)
    if not (root / MANIFEST).is_file():
        return [f"missing {root / MANIFEST}"]
    problems = []
    committed = read_manifest(root)
    instances = library_instances()
    fresh_keys = []
    for inst in instances:
        key = (str(inst.eq), inst.dataset, str(inst.c), str(inst.kernel) if inst.kernel else "", _p_text(inst.p))
        if key not in fresh_keys:
            fresh_keys.append(key)
    committed_keys = list(dict.fromkeys(_key(r) for r in committed))
    if committed_keys != fresh_keys:
        problems.append(f"{MANIFEST}: its instances are not those of library_instances() "
                        f"({len(committed_keys)} vs {len(fresh_keys)})")
    listed = {r["file"] for r in committed if r["file"]}
    present = {p.relative_to(root).as_posix() for name in LIBRARY_DATASETS if (root / name).is_dir()
               for p in (root / name).rglob("*") if p.is_file()}
    problems += [f"missing file {p}" for p in sorted(listed - present)]
    problems += [f"file not in {MANIFEST}: {p}" for p in sorted(present - listed)]
    chosen = [inst for inst in instances if select is None or select(inst)]
    rows, files = _library_rows(False, None, chosen)
    by_file = {r["file"]: r for r in committed if r["file"]}
    by_key = {_key(r): r for r in committed if not r["file"]}
    for f in files:
        if f.path in present and read_text(root / f.path) != f.content:
            problems.append(f"{f.path}: content differs from a fresh export")
    for new in rows:
        old = by_file.get(new["file"]) if new["file"] else by_key.get(_key(new))
        if old is None:
            problems.append(f"{MANIFEST}: no row for {new['file'] or _key(new)}")
            continue
        diff = [k for k in STRUCTURAL_COLUMNS if old.get(k) != new[k]]
        if diff:
            problems.append(f"{MANIFEST} row {new['file'] or _key(new)}: {', '.join(diff)} differ from a fresh export")
    return problems


# --------------------------------------------------------------------------- command line


def cmd_export(args) -> int:
    """``tpm-models export``: build one model and write it."""
    from tpm_models.cli import _class_of, _kernel

    if args.model == 22:
        raise ValueError(NOT_FINITE_22)
    data = load_dataset(args.dataset)
    c = _class_of(data, args.class_)
    info = model_info(args.model)
    kernel = _kernel(args)
    if info.kernel == "none" and kernel is not None and kernel.name != "linear":
        raise ValueError(f"({args.model}) is a linear model; --kernel applies to (10)-(13) and (19)")
    if info.kernel != "none" and kernel is None:
        raise ValueError(f"({args.model}) needs --kernel ({', '.join(KERNELS)})")
    if info.robust_p is None and (args.p is not None or args.eps is not None):
        raise ValueError(f"--p and --eps apply to the robust models 23-29, not ({args.model})")
    path = export(args.model, min_max_scale(data.X), data.y, c, args.nu, args.alpha, args.out, args.format,
                  kernel=kernel if info.kernel != "none" else None, p=args.p, eps=args.eps)
    print(f"wrote {path} ({_format_of(path, args.format)}, {path.stat().st_size} bytes)")
    return 0


def cmd_export_library(args) -> int:
    """``tpm-models export-library``: regenerate (or ``--check``) the instance library."""
    if args.check:
        problems = check_library(args.root)
        for line in problems:
            print(line)
        print(f"{args.root}: {'equal to' if not problems else f'{len(problems)} differences from'} a fresh export")
        return 1 if problems else 0

    def progress(msg: str) -> None:
        if not args.quiet:
            print(f"  ... {msg}", flush=True)

    summary = generate_library(args.root, progress)
    print(f"{args.root}: {summary['instances']} instances, {summary['files']} files + {MANIFEST}, "
          f"{summary['bytes'] / 1e6:.1f} MB, {summary['seconds']:.0f} s")
    return 0


def add_parsers(sub) -> None:
    """Register ``export`` and ``export-library`` on the ``tpm-models`` subparsers."""
    from tpm_models.cli import add_model_options

    e = sub.add_parser("export", help="build model EQ on a data set and write it as .lp/.mps/.nl/.gms")
    add_model_options(e)
    e.add_argument("--format", choices=FORMATS, help="file format (default: from --out's extension)")
    e.add_argument("--out", required=True, help="file to write; a name ending in .gz is gzip-compressed")
    e.set_defaults(func=cmd_export)

    lib = sub.add_parser("export-library", help="regenerate the formulations/ instance library and its manifest")
    lib.add_argument("--root", default="formulations", help="library folder (default: formulations)")
    lib.add_argument("--check", action="store_true",
                     help="do not write: compare the library with a fresh export (files, manifest structure)")
    lib.add_argument("--quiet", action="store_true", help="no progress lines")
    lib.set_defaults(func=cmd_export_library)
