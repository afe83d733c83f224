"""Export of the models to ``.lp``, ``.mps``, ``.nl``, ``.gms``, ``.cbf`` and ``.ptf`` files, and the
``formulations/`` library.

    from tpm_models.export.writers import export, write
    export(16, X, y, c=0, nu=0.3, alpha=1.0, path="eq16.lp")        # build (16) and write it
    write(model, "model.nl.gz")                                      # any built model; .gz compresses

Formats (Pyomo's writers, names with ``symbolic_solver_labels``; the ``.lp`` text by our own writer):

======  ==============================  ============================  ===================================
format  writer                          holds                         names (``w[1]``, ``margin[17]``)
======  ==============================  ============================  ===================================
lp      ``lp`` (CPLEX LP, v2 writer;    linear + quadratic terms      ``w(1)``, ``c_l_margin(17)_``
        its text, by :mod:`.lp_text`;
        squares ``x ^2``)
mps     ``mps`` (free MPS, QUADOBJ,     linear + quadratic terms      ``w(1)``, ``c_l_margin(17)_``
        QCMATRIX)
nl      ``nl`` (AMPL, v2 writer)        everything                    comments ``#w[1]``, ``#margin[17]``
gms     ``gams``                        everything                    ``w_1_``, ``margin_17__lo``
cbf     :mod:`.cbf` (CBF, from          the conic form: linear,       leading comments ``#  0  w[1]``,
        :func:`~tpm_models.solvers.     SOC, power cones, quadratic   ``#  51  L+  margin[1] (>=)``
        conic.conic_form`)              objective (epigraph)
ptf     the ``mosek`` package's         as ``cbf``                    ``'w[1]'``, ``'margin[1] (>=)'``
        writer, same conic program
======  ==============================  ============================  ===================================

What is written is the model as built, with these documented departures in *form* only
(the same function and feasible set):

* an objective that is a polynomial of degree <= 2 is written **collected**: one coefficient
  per variable and per pair of variables, in the model's variable order. The ``.lp`` and
  ``.mps`` writers do this themselves; without it the ``.nl`` and ``.gms`` files of the duals
  repeat every Gram product (``K[i,k] lam[i] lam[k]`` and ``K[k,i] lam[k] lam[i]``) and expand
  ``nu/m sum_i (x_i'w + theta)`` point by point, which made them 2-10 times larger;
* ``.nl`` and ``.gms`` carry a start point: every variable at
  :data:`tpm_models.solvers.ipopt.COLD_START` (0.01) clipped to its bounds, the cold start of the
  project's Ipopt: the ``sqrt`` of (23) at p = 2 has no derivative at ``w = 0``;
* ``.nl`` is written without Pyomo's linear presolve (which would eliminate variables);
  ``.mps`` gets two repairs of Pyomo's writer (:func:`_mps_fixed`): a one-token NAME, and a
  ``COLUMNS`` entry for a variable that appears only in quadratic terms (``t`` of (26), (27),
  (29)), without which Gurobi refuses the file.

The ``.lp`` text is made by :func:`tpm_models.export.lp_text.lp_text`: exactly the text of Pyomo's v2 ``.lp``
writer with the same options (``tests/export/test_lp_text.py`` compares the two, character for character, on every
library model that ``.lp`` holds and on handmade edge cases), faster (``docs/notes/bench-builders.md``): it
reads each ``LinearExpression`` row directly instead of walking it, sends the objective and any other row
through Pyomo's own visitor, and hands the whole model to Pyomo's writer when it has ``Suffix``/``SOS``
components, nonlinear terms or duplicate labels. One departure, in the writer: every square is written
``x ^2`` (Pyomo: ``x ^ 2``), which SCIP's LP reader needs (:func:`scip_readable_squares`); a linear
model's ``.lp`` is Pyomo's text unchanged.

A file that cannot hold a model is refused with a ``ValueError`` before anything is written:
``.lp``/``.mps`` hold no ``sqrt`` or fractional power (the norms of (23) at p = 2 and of (23),
(26) at a general p), and (22) is not a finite program at all. Same model, same bytes: the
writers run with ordered file determinism, and gzip files are written with no name and time.

The library (:func:`tpm_models.export.library.generate_library`, ``tpm-models export-library``) is described in
``docs/formulations.md``; ripopt, the external reader of the ``.nl`` files, is :mod:`tpm_models.export.ripopt`.
This module (about 520 lines, a sixth of them this docstring) holds one concern: a model's text in each format and
the checks that refuse a format that cannot hold it.
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.numeric_expr import LinearExpression, PowExpression, UnaryFunctionExpression
from pyomo.opt import WriterFactory
from pyomo.repn.plugins.nl_writer import NLWriter
from pyomo.repn.quadratic import QuadraticRepnVisitor
from pyomo.repn.util import OrderedVarRecorder

from tpm_models.export.cbf import cbf_text, conic_program, ptf_text
from tpm_models.export.lp_text import lp_text
from tpm_models.export.names import same_names
from tpm_models.files import write_bytes
from tpm_models.kernels import Kernel
from tpm_models.models.lazy_rows import has_unmade_terms
from tpm_models.models.norms import check_p
from tpm_models.models.registry import build, model_info
from tpm_models.solvers.conic import NotConicError, why_not_conic
from tpm_models.solvers.ipopt import COLD_START
from tpm_models.solvers.program import title

FORMATS = ("lp", "mps", "nl", "gms", "cbf", "ptf")
"""The formats :func:`write` knows, in the order the library lists them."""

QUADRATIC_ONLY = frozenset({"lp", "mps"})
"""Formats that hold only linear and quadratic terms."""

CONIC = frozenset({"cbf", "ptf"})
"""Formats that hold a model as :func:`tpm_models.solvers.conic.conic_form` reads it (cones)."""

NEEDS_PACKAGE = {"ptf": "mosek"}
"""Formats written by an optional package's own writer: :func:`model_texts` leaves them out of its
default set when the package is not installed (:func:`formats_for` still lists them)."""

NOT_FINITE_22 = (
    "(22) is the semi-infinite robust model: one constraint for every point of every uncertainty "
    "set (21), not a finite program that a file can hold. Export a finite counterpart with the same "
    "optimum (Theorem 1, Corollary 1) instead: (23) (any p; .nl/.gms for p not in {1, inf}), "
    "(26) (any p), or the SOCPs (27) (p=1), (28) (p=2), (29) (p=inf)"
)


# --------------------------------------------------------------------------- format checks


def format_of(path: str | os.PathLike, fmt: str | None) -> str:
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


def _nonpolynomial(expr: Any) -> list[str]:
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


def _repn(expr: Any, position: dict[int, int]) -> _Repn:
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
    objective: Any
    """The active objective (a Pyomo objective, untyped)."""
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
        if has_unmade_terms(con) or con.body.__class__ is LinearExpression:  # linear by its maker's contract
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


def _formats(model: pyo.ConcreteModel, analysis: _Analysis) -> tuple[str, ...]:
    conic = why_not_conic(model) is None
    return tuple(f for f in FORMATS
                 if not (analysis.not_quadratic and f in QUADRATIC_ONLY) and (conic or f not in CONIC))


def formats_for(model: pyo.ConcreteModel) -> tuple[str, ...]:
    """The formats of :data:`FORMATS` that can hold ``model`` exactly (``cbf``, ``ptf``: when
    :func:`tpm_models.solvers.conic.conic_form` takes it)."""
    return _formats(model, _analyse(model))


def _writable_here(fmt: str) -> bool:
    return fmt not in NEEDS_PACKAGE or importlib.util.find_spec(NEEDS_PACKAGE[fmt]) is not None


def _check(model: pyo.ConcreteModel, analysis: _Analysis, fmt: str) -> None:
    if fmt in CONIC:
        reason = why_not_conic(model)
        if reason is not None:
            raise ValueError(_not_conic(model, fmt, reason))
        return
    if fmt in QUADRATIC_ONLY and analysis.not_quadratic:
        bad = analysis.not_quadratic
        where = "; ".join(f"{name}: {', '.join(kinds) or 'nonlinear'}" for name, kinds in bad[:3])
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise ValueError(
            f".{fmt} holds only linear and quadratic terms, and {title(model)!r} has others ({where}{more}). "
            "Export it to .nl or .gms, which hold any function; for p = 1, 2, inf the SOCPs (26), (27), (28), "
            "(29) have the same optimum and fit .lp/.mps"
        )


def _not_conic(model: pyo.ConcreteModel, fmt: str, reason: str) -> str:
    return (f".{fmt} holds a conic program, and {title(model)!r} is not one that tpm_models.solvers.conic "
            f"takes: {reason}. Export it to .nl or .gms, which hold any function")


def check_format(model: pyo.ConcreteModel, fmt: str) -> None:
    """Raise ``ValueError`` (saying what to do) unless format ``fmt`` can hold ``model`` exactly."""
    _check(model, _analyse(model), format_of("x", fmt))


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


_NL_OPTIONS = {"symbolic_solver_labels": True, "file_determinism": 20, "linear_presolve": False,
               "scale_model": False}


def _nl(model: pyo.ConcreteModel) -> tuple[str, list]:
    """The ``.nl`` text (names as comments) and the variables in the order of its columns."""
    out, rows, cols = io.StringIO(), io.StringIO(), io.StringIO()
    info = NLWriter().write(model, out, rows, cols, **_NL_OPTIONS)
    return out.getvalue(), list(info.variables)


def nl_text(model: pyo.ConcreteModel) -> tuple[str, list]:
    """The ``.nl`` text of ``model`` as :func:`write` writes it (collected objective, start point, no presolve) and
    its variables in the file's column order (to load a ``.nl`` solver's point back)."""
    with _prepared(model, _analyse(model), "nl"):
        return _nl(model)


def _text(model: pyo.ConcreteModel, analysis: _Analysis, fmt: str) -> bytes:
    if fmt in CONIC:  # the conic form reads the model as built
        try:
            program = conic_program(model)
        except NotConicError as exc:
            raise ValueError(_not_conic(model, fmt, str(exc))) from exc
        return (cbf_text(program) if fmt == "cbf" else ptf_text(program)).encode("utf-8")
    _check(model, analysis, fmt)
    if fmt in ("lp", "mps"):
        pairs = same_names(model, fmt)
        if pairs:
            shown = ", ".join(f"{a!r} and {b!r}" for a, b in pairs[:3])
            raise ValueError(f"{title(model)}: {shown} become the same name in a .{fmt} file (its names cannot hold "
                             "blanks and some punctuation); rename one of each pair, or write .nl or .gms")
    with PauseGC(), _prepared(model, analysis, fmt):
        if fmt == "lp":
            text = scip_readable_squares(lp_text(model))
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


LP_SQUARE, SCIP_SQUARE = " ^ 2\n", " ^2\n"
"""How Pyomo's ``.lp`` writer ends a square term (``+1 w(1) ^ 2``), and how ours does."""


def scip_readable_squares(text: str) -> str:
    """Pyomo's ``.lp`` text with every square written ``x ^2`` instead of ``x ^ 2``.

    SCIP's LP reader (``reader_lp.c``, SCIP 10 through ``pyscipopt``) refuses a blank between ``^`` and
    the exponent ("sign after value without variable" on the next line) and so refused every ``.lp``
    with a quadratic term; ``x ^2`` is read by SCIP, Gurobi, CPLEX, Xpress and HiGHS alike (measured,
    ``docs/formulations.md``). A label holds no blank, so ``" ^ 2\n"`` occurs only at the end of a square."""
    return text.replace(LP_SQUARE, SCIP_SQUARE)


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
    """The content of ``model``'s file in each format (default: every format that holds it and whose
    writer is installed here, :data:`NEEDS_PACKAGE`).

    Raises ``ValueError`` (saying what to do) if a named format cannot hold the model.
    """
    analysis = _analyse(model)
    if formats is None:
        formats = [f for f in _formats(model, analysis) if _writable_here(f)]
    else:
        formats = [format_of("x", f) for f in formats]
    return {fmt: _text(model, analysis, fmt) for fmt in formats}


def model_text(model: pyo.ConcreteModel, fmt: str) -> bytes:
    """The content of ``model``'s file in format ``fmt`` (``ValueError`` if the format cannot hold it)."""
    return model_texts(model, [fmt])[format_of("x", fmt)]


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


def write(model: pyo.ConcreteModel, path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Write ``model`` to ``path`` in format ``fmt`` (default: from the extension); ``.gz`` compresses.

    Raises ``ValueError`` (and writes nothing) when the format cannot hold the model.
    """
    path = Path(path)
    fmt = format_of(path, fmt)
    data = model_text(model, fmt)
    write_bytes(path, gzip_bytes(data) if path.name.endswith(".gz") else data)
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
    """Build model ``(eq)`` (as :func:`tpm_models.models.registry.build`) and :func:`write` it to ``path``."""
    if model_info(eq).key == 22:
        raise ValueError(NOT_FINITE_22)
    return write(build(eq, X, y, c, nu, alpha, kernel=kernel, p=None if p is None else check_p(p), eps=eps), path,
                 fmt)
