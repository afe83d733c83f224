"""The reductions of the Clarabel backend (:mod:`tpm_models.solvers.reductions`,
:mod:`tpm_models.solvers.powsoc`), each alone against its inverse.

Truth: the same program solved directly. Each program is solved twice by the backend's retry policy, directly and
through the reduction with its point mapped back (:meth:`~tpm_models.solvers.reductions.Reduction.back`), both
polished on the program given (a KKT point to ``POLISH_ACCEPT`` = 1e-11, so both are its optimum to that accuracy):
the objectives agree to ``OBJ_TOL``, ``x`` to ``X_TOL``, and the dual mapped back is a dual of the program given
(stationarity :math:`Px + q + A^\\top z = 0` to ``KKT_TOL``, ``z`` in the dual cone) and equals the direct dual where
that is unique. The programs: hand-made ones whose optimum is known by construction, and small random ones
(strictly convex, so the primal optimum is unique).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from tpm_models.solvers import BACKENDS
from tpm_models.solvers.clarabel_runs import ClarabelSettings, Polisher, RetryPolicy, Runner, RunPlan
from tpm_models.solvers.cones import Cone
from tpm_models.solvers.polish import POLISH_ACCEPT, kkt_residual
from tpm_models.solvers.powsoc import DropImpliedBounds, PowAsSoc
from tpm_models.solvers.reductions import MERGE_MIN_ROWS, Chain, ConicProgram, MergeColumns

OBJ_TOL = 1e-9
"""Relative gap of the two optima (both polished KKT points to 1e-11, objectives of order 0.1-10: measured below
1e-12)."""
X_TOL = 1e-7
"""Largest difference of the two ``x`` (relative to ``max(1, |x|)``): two KKT points to 1e-11 of a strictly convex
program (``P`` at least 0.1 I) are within about ``sqrt(1e-11 / 0.1)`` of each other, 1e-5 at worst; measured below
1e-9."""
STATIONARITY_TOL = 1e-7
"""The largest entry of :math:`Px + q + A^\\top z` on the program given at Clarabel's own point mapped back, before
the polish: Clarabel's dual residual is 1e-8 or less at the points it ends on here (measured up to 4.8e-9), while a
map that lost a term of :math:`A^\\top z` leaves 1e-2 or more."""

SETTINGS = ClarabelSettings(merge_columns=False)
"""The runs without the backend's own merge of columns, so that each reduction is tested alone."""


def clarabel():
    if not BACKENDS["clarabel"].available():
        pytest.skip("clarabel is not installed")


def solve(program: ConicProgram, reductions: list, polish: bool = True):
    """The retry policy on ``program`` through ``reductions``, its point mapped back and polished on ``program``."""
    polisher = Polisher(program, SETTINGS) if polish else None
    plan = RunPlan(SETTINGS.ladder, judged=True, polish_short=True)  # the backend's: a point short may be polished
    run = RetryPolicy(Runner(Chain(program, reductions), SETTINGS), plan, SETTINGS, polisher).solve()
    return run


def objective(program: ConicProgram, x: np.ndarray) -> float:
    P = program.P + program.P.T - sp.diags(program.P.diagonal())
    return float(0.5 * x @ (P @ x) + program.q @ x)


def full(P: sp.spmatrix) -> sp.csr_matrix:
    P = sp.csc_matrix(P)
    return (P + P.T - sp.diags(P.diagonal())).tocsr()


def same_optimum(program: ConicProgram, reductions: list, unique_dual: bool = True) -> None:
    """The assertions of the module docstring for ``program`` through ``reductions``."""
    direct = solve(program, [])
    reduced = solve(program, reductions)
    rough = solve(program, [type(r)() for r in reductions], polish=False)  # Clarabel's point, mapped back only
    assert rough.x.shape == direct.x.shape and rough.z.shape == direct.z.shape
    stationarity = full(program.P) @ rough.x + program.q + program.A.T @ rough.z
    assert np.max(np.abs(stationarity)) <= STATIONARITY_TOL
    for run in (direct, reduced):  # both polished: KKT points of the program given
        assert run.polished is not None and run.polished.accepted, run.message
        assert kkt_residual(full(program.P), program.q, sp.csr_matrix(program.A), program.b, program.cones, run.x,
                            run.z) <= POLISH_ACCEPT
    f, g = objective(program, direct.x), objective(program, reduced.x)
    assert abs(f - g) <= OBJ_TOL * max(1.0, abs(f))
    assert np.max(np.abs(direct.x - reduced.x)) <= X_TOL * max(1.0, float(np.max(np.abs(direct.x))))
    if unique_dual:
        assert np.max(np.abs(direct.z - reduced.z)) <= X_TOL * max(1.0, float(np.max(np.abs(direct.z))))


def random_power_program(seed: int, n: int = 6, k: int = 3, alpha: float | None = None) -> ConicProgram:
    """:math:`\\min \\tfrac12 x^\\top Px + q^\\top x` over the box :math:`|x| \\le 2` with ``k`` power cones
    :math:`(x_a + 1, x_b + 1, x_c)` (``alpha`` rational, of denominator at most 16, or drawn), ``P`` at least
    0.1 I: feasible (``x = 0`` is inside every cone) and strictly convex."""
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(n, n))
    P = sp.csc_matrix(np.triu(M @ M.T / n + 0.1 * np.eye(n)))
    q = rng.normal(size=n) * 2
    rows, b, cones = [np.eye(n), -np.eye(n)], [np.full(n, 2.0), np.full(n, 2.0)], [Cone("nonneg", 2 * n)]
    for _ in range(k):
        a, c, d = rng.choice(n, 3, replace=False)
        block = np.zeros((3, n))
        block[0, a] = block[1, c] = block[2, d] = -1.0
        rows.append(block), b.append(np.array([1.0, 1.0, 0.0]))
        cones.append(Cone("pow", 3, alpha if alpha is not None else float(rng.choice([1 / 3, 2 / 3, 0.25, 0.6]))))
    return ConicProgram(P, q, sp.csc_matrix(np.vstack(rows)), np.concatenate(b), cones)


@pytest.mark.parametrize("seed", range(6))
def test_power_cones_as_socs_map_back_to_the_power_cones_optimum(seed):
    """:class:`PowAsSoc` on random programs with power cones: the optimum of the native power cones."""
    clarabel()
    program = random_power_program(seed)
    reduction = PowAsSoc()
    soc = reduction.forward(program)
    assert not any(c.kind == "pow" for c in soc.cones) and soc.shape[1] > program.shape[1]
    same_optimum(program, [PowAsSoc()])


def test_the_power_cones_section_maps_back_to_its_closed_form():
    """Hand-made: :math:`\\max x_2` over :math:`(x_0, x_1, x_2) \\in \\mathcal K_{\\mathrm{pow}}(1/3)` with
    :math:`x_0 = 2, x_1 = 0.5` is :math:`2^{1/3} 0.5^{2/3}` (closed form), through the reduction as directly."""
    clarabel()
    A = sp.csc_matrix(np.vstack([np.eye(3)[:2], -np.eye(3)]))
    program = ConicProgram(sp.csc_matrix((3, 3)), np.array([0.0, 0.0, -1.0]), A, np.array([2.0, 0.5, 0, 0, 0]),
                           [Cone("zero", 2), Cone("pow", 3, 1 / 3)])
    run = solve(program, [PowAsSoc()])
    assert abs(run.x[2] - 2 ** (1 / 3) * 0.5 ** (2 / 3)) <= 1e-9
    same_optimum(program, [PowAsSoc()])


def implied_bounds_program(seed: int) -> ConicProgram:
    """Columns ``(tau, r, w, a)`` (four of each kind, ``m`` = 4): :math:`\\min \\tfrac12\\|w - c\\|^2 + e^\\top a +
    e^\\top r` over the power cones :math:`(\\tau_j, r_j, w_j)` (:math:`|w_j| \\le \\tau_j^{1/2} r_j^{1/2}`), the rows
    :math:`a_j \\ge \\tau_j`, and the bounds :math:`\\tau, r, a \\ge 0`, which those rows and cones imply
    (:func:`~tpm_models.solvers.powsoc.implied_bounds`). At the optimum (``c`` drawn away from 0) every :math:`w_j`,
    :math:`\\tau_j`, :math:`r_j` is positive: the bounds are inactive, their multipliers 0 (unique)."""
    rng = np.random.default_rng(seed)
    m = 4
    n = 4 * m
    tau, r, w, a = (np.arange(m) + k * m for k in range(4))
    c = rng.uniform(3.0, 5.0, m) * rng.choice([-1.0, 1.0], m)  # the optimum: w = c - 2 sign(c), tau = r = |w|
    P = sp.csc_matrix((np.ones(m), (w, w)), shape=(n, n))
    q = np.zeros(n)
    q[w], q[a], q[r] = -c, 1.0, 1.0
    rows, cones = [], []
    for cols in (tau, r, a):  # the bounds x >= 0: s = x
        for col in cols:
            rows.append({col: -1.0})
    cones.append(Cone("nonneg", 3 * m + m))
    for j in range(m):  # a_j - tau_j >= 0
        rows.append({a[j]: -1.0, tau[j]: 1.0})
    for j in range(m):
        rows += [{tau[j]: -1.0}, {r[j]: -1.0}, {w[j]: -1.0}]
        cones.append(Cone("pow", 3, 0.5))
    A = sp.lil_matrix((len(rows), n))
    for i, row in enumerate(rows):
        for col, v in row.items():
            A[i, col] = v
    return ConicProgram(P, q, sp.csc_matrix(A), np.zeros(len(rows)), cones)


@pytest.mark.parametrize("seed", range(4))
def test_implied_bounds_left_out_map_back_to_the_whole_programs_optimum(seed):
    """:class:`DropImpliedBounds` on hand-made programs (:func:`implied_bounds_program`): the bounds of
    :math:`\\tau` (through :math:`a \\ge \\tau`), :math:`r` and :math:`a` are left out, the point mapped back has
    :math:`z = 0` on them, and it is the whole program's optimum with its dual."""
    clarabel()
    program = implied_bounds_program(seed)
    reduction = DropImpliedBounds()
    reduced = reduction.forward(program)
    assert reduction.dropped == 12 and reduced.shape[0] == program.shape[0] - 12
    run = solve(program, [DropImpliedBounds()], polish=False)
    assert np.all(run.z[:12] == 0.0)
    c = -program.q[8:12]  # the closed form (implied_bounds_program): w = c - 2 sign(c), tau = r = |w|
    polished = solve(program, [DropImpliedBounds()])
    assert np.max(np.abs(polished.x[8:12] - (c - 2 * np.sign(c)))) <= X_TOL
    same_optimum(program, [DropImpliedBounds()])


@pytest.mark.parametrize("seed", range(3))
def test_the_implied_bounds_then_the_power_cones_chain_back(seed):
    """The backend's chain at scale, ``[DropImpliedBounds, PowAsSoc]``, mapped back through both: the same
    optimum and dual as the whole program on its power cones."""
    clarabel()
    same_optimum(implied_bounds_program(seed), [DropImpliedBounds(), PowAsSoc()])


def margin_program(seed: int, m: int = MERGE_MIN_ROWS + 200, eps: float = 0.05) -> ConicProgram:
    """A one-class margin program as (28) writes it, columns ``(w (3), theta, r, xi (m))``:
    :math:`\\min \\tfrac12\\|w\\|^2 + 0.5\\,\\theta + 0.05\\,r + e^\\top\\xi / m` s.t.
    :math:`X_i w + \\theta - \\varepsilon r + \\xi_i \\ge 1`, :math:`\\xi \\ge 0`, :math:`r \\ge \\pm w_j`:
    :math:`\\theta` and :math:`r` enter every margin row in the ratio :math:`-\\varepsilon` (one merged group,
    :func:`~tpm_models.solvers.reductions.rank_one_columns`)."""
    rng = np.random.default_rng(seed)
    d = 3
    n = d + 2 + m
    X = rng.normal(size=(m, d)) + 1.0
    margin = sp.hstack([-sp.csr_matrix(X), -np.ones((m, 1)), np.full((m, 1), eps), -sp.identity(m)])
    bounds = sp.hstack([sp.csr_matrix((m, d + 2)), -sp.identity(m)])
    norm = np.zeros((2 * d, n))
    for j in range(d):
        norm[2 * j, [j, d + 1]] = [1.0, -1.0]
        norm[2 * j + 1, [j, d + 1]] = [-1.0, -1.0]
    A = sp.vstack([margin, bounds, sp.csr_matrix(norm)]).tocsc()
    b = np.concatenate([-np.ones(m), np.zeros(m + 2 * d)])
    P = sp.csc_matrix((np.ones(d), (np.arange(d), np.arange(d))), shape=(n, n))
    q = np.concatenate([np.zeros(d), [0.5, 0.05], np.full(m, 1.0 / m)])
    return ConicProgram(P, q, A, b, [Cone("nonneg", A.shape[0])])


@pytest.mark.parametrize("seed", range(2))
def test_merged_columns_map_back_to_the_unmerged_optimum(seed):
    """:class:`MergeColumns` on margin programs (:func:`margin_program`): one new column and one new row, and the
    optimum and dual of the program as written. The dual is compared through stationarity only (many margin rows
    are active, and at a degenerate optimum the multipliers need not be unique)."""
    clarabel()
    program = margin_program(seed)
    reduction = MergeColumns()
    merged = reduction.forward(program)
    assert merged.shape == (program.shape[0] + 1, program.shape[1] + 1) and merged.A.nnz < program.A.nnz
    same_optimum(program, [MergeColumns()], unique_dual=False)
