"""A model as a conic program in a file: CBF (the Conic Benchmark Format of CBLIB) and MOSEK's PTF.

    from tpm_models.export.writers import write
    write(model, "eq28.cbf")        # or .cbf.gz; .ptf through the mosek package's own writer

The model is read into cones by :func:`tpm_models.solvers.conic.conic_form` (Clarabel's form
:math:`\\min \\tfrac12x^\\top Px + q^\\top x + q_0`, :math:`s = b - Ax \\in \\mathcal K`) and written as
the CBF problem

.. math::
    \\min/\\max\\ \\ a^{obj\\top} x + b^{obj} \\quad\\text{s.t.}\\quad g = A_{\\mathrm{CBF}}\\,x + b_{\\mathrm{CBF}}
    \\in \\mathcal K_1\\times\\dots\\times\\mathcal K_r,\\qquad x \\text{ free}

with :math:`A_{\\mathrm{CBF}} = -A`, :math:`b_{\\mathrm{CBF}} = b` (so :math:`g = s`), and each cone of the
conic form as the CBF cone of the same set:

=====================  ==========  ====================================================
conic form             CBF         set
=====================  ==========  ====================================================
``zero``               ``L=``      g = 0
``nonneg``             ``L+``      g >= 0 (rows and variable bounds)
``soc``                ``Q``       g0 >= norm(g[1:])
``pow`` (alpha)        ``@k:POW``  g0^alpha g1^(1-alpha) >= abs(g2), ``POWCONES`` entry
                                   (alpha, 1-alpha)
quadratic objective    ``QR``      2 g0 g1 >= norm(g[2:])^2, g0, g1 >= 0
=====================  ==========  ====================================================

**The quadratic objective** (CBF has none) goes through an epigraph column :math:`t` (the last one):
with :math:`P = F^\\top F` (:func:`psd_factor`), :math:`\\tfrac12 x^\\top Px \\le t \\iff \\|Fx\\|^2 \\le 2\\,t\\cdot 1
\\iff (t, 1, Fx) \\in \\mathrm{QR}`, and the objective is :math:`q^\\top x + t + q_0`. At the optimum
:math:`t = \\tfrac12 x^\\top Px`, so the optimum is the model's.

**The sense is the model's.** A maximisation (the duals) is written ``OBJSENSE MAX`` with the model's
own objective (the conic form's minimisation negated back), so a reader's optimum is the model's
objective value with no sign to undo.

**The version** is the lowest that holds the file: ``VER 1`` (linear, ``Q`` and ``QR`` cones, which
every CBF reader takes, PICOS's included: it reads version 1 only) unless a power cone is present,
then ``VER 3`` (``POWCONES`` and ``@k:POW`` were added in version 3).

**Names.** CBF has no names: the file begins with ``#`` comment lines mapping every column and every
range of rows to the builder's components (``#   3  w[4]``, ``#  57-60  Q  cone_t``). Comments come
before ``VER``, where every reader skips them.

**Numbers** are written with ``repr`` (the shortest text that reads back to the same double).

PTF (MOSEK's text format) is written by the ``mosek`` package's own writer (``Task.writedata``, which
needs no licence) from the same conic program: linear rows become MOSEK linear constraints, cones
its affine conic constraints, all with the names above. ``mosek`` is the optional ``mosek`` extra.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

if TYPE_CHECKING:  # an optional dependency (the mosek extra), for the annotation of fill_mosek_task only
    import mosek

from tpm_models.certify.tolerances import PSD_TOL
from tpm_models.solvers.conic import ConicForm, NotConicError, conic_form
from tpm_models.solvers.program import title

CBF_KIND = {"zero": "L=", "nonneg": "L+", "soc": "Q", "qr": "QR"}
"""CBF's name of each cone kind of :class:`ConicProgram` (``pow`` is ``@k:POW``)."""


PIVOT_TIE = 1e-9
"""In :func:`psd_factor`, a pivot is the *first* diagonal entry within this relative distance of the
largest, so that an entry larger only in its last digits (another CPU's rounding) never changes
which pivot is taken, and the file's structure is the same on every machine."""


@dataclass
class ConicProgram:
    """A conic program as CBF states it: ``sense`` (``"MIN"``/``"MAX"``) of ``c'x + c0`` over free
    ``x`` with ``g = A x + b`` in the product of ``cones`` (``(kind, dim, alpha)``, kinds of
    :data:`CBF_KIND` and ``pow``), and a name for every column and row."""

    sense: str
    c: np.ndarray
    c0: float
    A: sp.csr_matrix
    b: np.ndarray
    cones: list[tuple[str, int, float | None]]
    column_names: list[str]
    row_names: list[str]
    model_title: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Number of columns."""
        return len(self.c)


def psd_factor(P: np.ndarray, tol: float = PSD_TOL) -> np.ndarray:
    """:math:`F` (``r x n``) with :math:`F^\\top F = P` for a symmetric positive semidefinite ``P``:
    Cholesky with diagonal pivoting, stopped when every remaining diagonal entry is at most ``tol``
    times the largest diagonal entry of ``P``.

    A diagonal ``P`` gives :math:`F = \\mathrm{diag}(\\sqrt{P_{kk}})` (its nonzero rows), exactly.
    The remainder left out is positive semidefinite with entries below ``tol * max(diag P)``; with
    :data:`~tpm_models.solvers.conic.PSD_TOL` = 1e-12 it moves :math:`\\tfrac12x^\\top Px` by at most
    ``1e-12 * max(diag P) * ||x||_1^2 / 2``. Pivots are picked by :data:`PIVOT_TIE`, and the result
    does not depend on an eigensolver (whose vectors' signs and order vary between LAPACK builds).
    Raises :class:`NotConicError` if a pivot is negative beyond the tolerance (``P`` not PSD).
    """
    P = np.array(P, dtype=float)
    n = P.shape[0]
    if n == 0:
        return np.zeros((0, 0))
    if np.count_nonzero(P - np.diag(np.diag(P))) == 0:
        d = np.diag(P)
        if (d < 0).any():
            raise NotConicError("the objective's quadratic form is not positive semidefinite")
        keep = np.flatnonzero(d > 0)
        F = np.zeros((len(keep), n))
        F[np.arange(len(keep)), keep] = np.sqrt(d[keep])
        return F
    top = float(np.max(np.diag(P), initial=0.0))
    S = P.copy()
    rows = []
    remaining = np.ones(n, dtype=bool)
    while remaining.any():
        diag = np.where(remaining, np.diag(S), -np.inf)
        largest = float(diag.max())
        if largest <= tol * top:
            if largest < -tol * max(top, 1.0):
                raise NotConicError(f"the objective's quadratic form is not positive semidefinite "
                                    f"(pivot {largest:.3g})")
            break
        k = int(np.flatnonzero(diag >= largest * (1.0 - PIVOT_TIE))[0])
        row = np.zeros(n)
        row[remaining] = S[k, remaining] / math.sqrt(S[k, k])
        row[~remaining] = 0.0
        rows.append(row)
        remaining[k] = False
        S = S - np.outer(row, row)
    return np.array(rows) if rows else np.zeros((0, n))


def _upper_to_full(P: sp.spmatrix) -> sp.csr_matrix:
    upper = sp.triu(P, format="csr")
    return (upper + sp.triu(upper, 1, format="csr").T).tocsr()


def _row_names(form: ConicForm, names: list[str]) -> list[str]:
    """A label for every row of ``form``: the constraint it states, else the bound or atom it is."""
    m, n_model = form.A.shape[0], len(form.variables)
    labels: list[str | None] = [None] * m
    n_zero = form.cones[0].dim if form.cones and form.cones[0].kind == "zero" else 0
    for d in form.dual_maps():
        constraint: Any = d.constraint  # a Pyomo constraint (untyped)
        name = constraint.name
        for r, factor in d.rows:  # factor -1: a <= side (or an equality), +1: a >= side
            labels[r] = name if r < n_zero else f"{name} ({'<=' if factor < 0 else '>='})"
        if d.cone_start is not None:
            for r in range(d.cone_start, d.cone_start + d.cone_dim):
                labels[r] = name
    A = form.A.tocsr()
    start = 0
    for cone in form.cones:
        for r in range(start, start + cone.dim):
            if labels[r] is not None:
                continue
            cols, vals = A.indices[A.indptr[r]:A.indptr[r + 1]], A.data[A.indptr[r]:A.indptr[r + 1]]
            if cone.kind in ("zero", "nonneg") and len(cols) == 1 and cols[0] < n_model and abs(vals[0]) == 1.0:
                kind = "fixed" if cone.kind == "zero" else ("lower bound" if vals[0] < 0 else "upper bound")
                labels[r] = f"{kind} of {names[cols[0]]}"
            else:  # an atom's epigraph: named after the auxiliary column of the row (a cone: of its first row)
                row = cols if cone.kind in ("zero", "nonneg") else A.indices[A.indptr[start]:A.indptr[start + 1]]
                aux = [c for c in row if c >= n_model]
                labels[r] = "epigraph of " + (names[aux[0]] if aux else "an atom")
        start += cone.dim
    return [str(x) for x in labels]


def conic_program(model: pyo.ConcreteModel) -> ConicProgram:
    """``model`` as a :class:`ConicProgram` (module docstring); :class:`NotConicError` if the conic form
    does not take it."""
    form = conic_form(model)
    n = form.A.shape[1]
    names = [v.name for v in form.variables] + [f"auxiliary: {a}" for a in form.aux_names]
    rows_A = [(-form.A).tocsr()]
    b = [np.asarray(form.b, dtype=float)]
    cones: list[tuple[str, int, float | None]] = [(c.kind, c.dim, c.alpha) for c in form.cones]
    row_names = _row_names(form, names)
    notes = []
    c = np.asarray(form.q, dtype=float).copy()
    P = _upper_to_full(form.P)
    if P.nnz:
        cols = np.unique(P.nonzero()[0])
        F_sub = psd_factor(P[cols, :][:, cols].toarray())
        t = n
        n += 1
        names.append("objective epigraph t >= 1/2 x'Px")
        c = np.append(c, 1.0)
        rows_A = [sp.hstack([blk, sp.csr_matrix((blk.shape[0], 1))], format="csr") for blk in rows_A]
        F = sp.lil_matrix((2 + F_sub.shape[0], n))
        F[0, t] = 1.0
        for k in range(F_sub.shape[0]):
            for j, col in enumerate(cols):
                if F_sub[k, j] != 0.0:
                    F[2 + k, col] = F_sub[k, j]
        rows_A.append(F.tocsr())
        b.append(np.concatenate([[0.0, 1.0], np.zeros(F_sub.shape[0])]))
        cones.append(("qr", F.shape[0], None))
        row_names += ["objective epigraph (t, 1, Fx) in QR, F'F = P"] * F.shape[0]
        notes.append(f"quadratic objective 1/2 x'Px as t >= 1/2 x'Px: (t, 1, Fx) in QR, F ({F_sub.shape[0]} rows) "
                     "with F'F = P by pivoted Cholesky")
    A = sp.vstack(rows_A, format="csr")
    A.sum_duplicates()
    A.sort_indices()
    # the conic form minimises sense * objective: write the model's own objective and sense
    sign = form.sense
    return ConicProgram("MIN" if sign == 1 else "MAX", sign * c, sign * float(form.q0), A,
                        np.concatenate(b), cones, names, row_names, title(model), notes)


def cbf_version(prog: ConicProgram) -> int:
    """1 without power cones, else 3 (module docstring)."""
    return 3 if any(kind == "pow" for kind, _, _ in prog.cones) else 1


def _num(x: float) -> str:
    return repr(float(x))


def _ranges(labels: list[str], kinds: list[str]) -> list[str]:
    out, start = [], 0
    for k in range(1, len(labels) + 1):
        if k == len(labels) or labels[k] != labels[start] or kinds[k] != kinds[start]:
            span = f"{start}" if k - 1 == start else f"{start}-{k - 1}"
            out.append(f"# {span:>11}  {kinds[start]:<7} {labels[start]}")
            start = k
    return out


def cbf_text(model_or_program: pyo.ConcreteModel | ConicProgram) -> str:
    """The CBF text of a model (or of a :class:`ConicProgram`), names in leading comments."""
    prog = model_or_program if isinstance(model_or_program, ConicProgram) else conic_program(model_or_program)
    powers = sorted({alpha for kind, _, alpha in prog.cones if kind == "pow" and alpha is not None})
    power_index = {alpha: k for k, alpha in enumerate(powers)}
    kind_text = [f"@{power_index[alpha]}:POW" if kind == "pow" and alpha is not None else CBF_KIND[kind]
                 for kind, _, alpha in prog.cones]
    row_kinds = [t for t, (_, dim, _) in zip(kind_text, prog.cones) for _ in range(dim)]
    lines = [f"# {prog.model_title}: written by tpm-models (tpm_models.export.cbf) from the model's conic form",
             "# columns (VAR, 0-based) and the model's components:"]
    lines += [f"# {j:>11}  {name}" for j, name in enumerate(prog.column_names)]
    lines.append("# rows (CON, 0-based), their cone and the model's constraints:")
    lines += _ranges(prog.row_names, row_kinds)
    lines += [f"# {note}" for note in prog.notes]
    lines += ["VER", str(cbf_version(prog)), ""]
    if powers:
        lines += ["POWCONES", f"{len(powers)} {2 * len(powers)}"]
        for alpha in powers:
            lines += ["2", _num(alpha), _num(1.0 - alpha)]
        lines.append("")
    lines += ["OBJSENSE", prog.sense, "", "VAR", f"{prog.n} 1", f"F {prog.n}", ""]
    lines += ["CON", f"{prog.A.shape[0]} {len(prog.cones)}"]
    lines += [f"{t} {dim}" for t, (_, dim, _) in zip(kind_text, prog.cones)]
    lines.append("")
    nz = np.flatnonzero(prog.c)
    if len(nz):
        lines += ["OBJACOORD", str(len(nz))] + [f"{j} {_num(prog.c[j])}" for j in nz] + [""]
    if prog.c0 != 0.0:
        lines += ["OBJBCOORD", _num(prog.c0), ""]
    coo = prog.A.tocoo()
    order = np.lexsort((coo.col, coo.row))
    entries = [(int(coo.row[k]), int(coo.col[k]), float(coo.data[k])) for k in order if coo.data[k] != 0.0]
    if entries:
        lines += ["ACOORD", str(len(entries))] + [f"{i} {j} {_num(v)}" for i, j, v in entries] + [""]
    bnz = np.flatnonzero(prog.b)
    if len(bnz):
        lines += ["BCOORD", str(len(bnz))] + [f"{i} {_num(prog.b[i])}" for i in bnz] + [""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- PTF through mosek


class WriterUnavailableError(ValueError):
    """A format's writer is an optional package that is not installed (the message says which)."""


MOSEK_MISSING = ("writing .ptf needs the mosek package's own writer: pip install mosek (the 'mosek' extra; "
                 "writing a file needs no licence). Or write .cbf, which needs nothing")


def fill_mosek_task(task: mosek.Task, prog: ConicProgram) -> None:
    """Put ``prog`` into an empty ``mosek.Task``: linear rows as constraints, cones as affine conic
    constraints, with the names of :class:`ConicProgram`."""
    import mosek  # the optional extra: imported only when a .ptf is asked for

    task.appendvars(prog.n)
    for j, name in enumerate(prog.column_names):
        task.putvarbound(j, mosek.boundkey.fr, 0.0, 0.0)
        task.putvarname(j, name)
    task.putclist(list(range(prog.n)), [float(x) for x in prog.c])
    task.putcfix(float(prog.c0))
    task.putobjsense(mosek.objsense.minimize if prog.sense == "MIN" else mosek.objsense.maximize)
    A = prog.A.tocsr()
    start = 0
    used: dict[str, int] = {}

    def unique(name: str) -> str:
        used[name] = used.get(name, 0) + 1
        return name if used[name] == 1 else f"{name} #{used[name]}"

    for kind, dim, alpha in prog.cones:
        rows = range(start, start + dim)
        if kind in ("zero", "nonneg"):
            first = task.getnumcon()
            task.appendcons(dim)
            key = mosek.boundkey.fx if kind == "zero" else mosek.boundkey.lo
            for k, r in enumerate(rows):  # g = a'x + b (= 0 | >= 0):  a'x (= | >=) -b
                cols = A.indices[A.indptr[r]:A.indptr[r + 1]]
                task.putarow(first + k, cols.tolist(), A.data[A.indptr[r]:A.indptr[r + 1]].tolist())
                rhs = 0.0 - float(prog.b[r])  # 0.0 - b: no -0 in the file
                task.putconbound(first + k, key, rhs, rhs if kind == "zero" else math.inf)
                task.putconname(first + k, unique(prog.row_names[r]))
        else:
            afe = task.getnumafe()
            task.appendafes(dim)
            for k, r in enumerate(rows):
                cols = A.indices[A.indptr[r]:A.indptr[r + 1]]
                task.putafefrow(afe + k, cols.tolist(), A.data[A.indptr[r]:A.indptr[r + 1]].tolist())
                task.putafeg(afe + k, float(prog.b[r]))
            if kind == "soc":
                domain = task.appendquadraticconedomain(dim)
            elif kind == "qr":
                domain = task.appendrquadraticconedomain(dim)
            elif alpha is not None:  # a power cone always has its exponent
                domain = task.appendprimalpowerconedomain(dim, [float(alpha), 1.0 - float(alpha)])
            else:
                raise ValueError(f"a {kind} cone of dimension {dim} without an exponent")
            task.appendaccseq(domain, afe, [0.0] * dim)
            task.putaccname(task.getnumacc() - 1, unique(prog.row_names[start]))
        start += dim


def ptf_text(model_or_program: pyo.ConcreteModel | ConicProgram) -> str:
    """The PTF text of a model, by the ``mosek`` package's writer (:class:`WriterUnavailableError`,
    saying what to do, when ``mosek`` is not installed)."""
    prog = model_or_program if isinstance(model_or_program, ConicProgram) else conic_program(model_or_program)
    try:
        import mosek
    except ImportError as exc:
        raise WriterUnavailableError(MOSEK_MISSING) from exc
    with mosek.Env() as env, env.Task() as task, tempfile.TemporaryDirectory(prefix="tpm-ptf-") as tmp:
        fill_mosek_task(task, prog)
        path = os.path.join(tmp, "model.ptf")
        task.writedata(path)
        with open(path, encoding="utf-8") as fh:
            return fh.read()
