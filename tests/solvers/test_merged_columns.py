"""Columns merged for the solver's run (:class:`tpm_models.solvers.reductions.MergeColumns`).

Truths: the algebra of the merge (the merged rows at :math:`(x, k^\\top x_G)` equal the original rows at :math:`x`),
the original form's own optimality conditions at the mapped-back point, and runs of the same form or model without
the merge (Clarabel unmerged; PIQP's dense solver, which never merges; the model's certificate).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from benchmarks.bench_scale import scale_data
from tpm_models import build
from tpm_models.solvers import solve
from tpm_models.solvers.backends.piqp import piqp_matrices
from tpm_models.solvers.clarabel_runs import ClarabelSettings, clarabel_solve
from tpm_models.solvers.conic import conic_form
from tpm_models.solvers.matrices import qp_matrices, sparse_qp_matrices
from tpm_models.solvers.reductions import MERGE_MIN_ROWS, ConicProgram, ConicSolution, MergeColumns, rank_one_columns

EPS = 0.02


def margin_block(rows: int = 1_500, seed: int = 0) -> tuple[sp.csc_matrix, dict[str, int]]:
    """The margin rows of (29) written out: ``-(x_i.w + theta - eps * sum_j s_j) - xi_i`` in each of ``rows`` rows
    (w: 3 columns of data, theta, s: 3 columns), then the rows ``s_j >= +-w_j`` (6) and ``xi >= 0``."""
    rng = np.random.default_rng(seed)
    n = 3 + 1 + 3 + rows
    cols = {"w": 0, "theta": 3, "s": 4, "xi": 7}
    A = sp.lil_matrix((rows + 6 + rows, n))
    A[:rows, 0:3] = -rng.uniform(0.1, 1.0, size=(rows, 3))
    A[:rows, 3] = -1.0
    A[:rows, 4:7] = EPS
    A[np.arange(rows), 7 + np.arange(rows)] = -1.0
    for j in range(3):
        A[rows + 2 * j, [j, 4 + j]] = [1.0, -1.0]
        A[rows + 2 * j + 1, [j, 4 + j]] = [-1.0, -1.0]
    A[rows + 6 + np.arange(rows), 7 + np.arange(rows)] = -1.0
    return sp.csc_matrix(A), cols


def test_the_margin_columns_are_found_and_merged_exactly():
    """theta and the three s_j enter every margin row as -1 and eps: one group, its ratios -eps exact; the merged
    rows at (x, k^T x_G) are the original rows at x, to rounding, on 3 * 1,500 - 5 entries fewer; the new row is
    v - k^T x_G."""
    A, cols = margin_block()
    merged = rank_one_columns(A)
    assert merged is not None and len(merged.groups) == 1
    group = merged.groups[0]
    assert group.columns.tolist() == [3, 4, 5, 6] and group.rows.tolist() == list(range(1_500))
    assert group.ratios.tolist() == [1.0, -EPS, -EPS, -EPS]
    reduction = MergeColumns()
    P, q, Am, b, cones = vars(reduction.forward(ConicProgram(sp.csc_matrix((A.shape[1], A.shape[1])),
                                                             np.zeros(A.shape[1]), A, np.zeros(A.shape[0]),
                                                             []))).values()
    assert Am.shape == (A.shape[0] + 1, A.shape[1] + 1) and P.shape == (A.shape[1] + 1,) * 2
    assert q.size == A.shape[1] + 1 and b.size == A.shape[0] + 1
    assert A.nnz - Am.nnz == 4 * 1_500 - 1_500 - 5  # 4 entries a row become 1; the new row holds 5
    assert [c.kind for c in cones] == ["zero"] and cones[0].dim == 1
    x = np.random.default_rng(1).normal(size=A.shape[1])
    v = group.ratios @ x[group.columns]
    y = Am @ np.append(x, v)
    assert np.abs(y[:-1] - A @ x).max() <= 1e-14 * np.abs(A @ x).max()
    assert y[-1] == pytest.approx(0.0, abs=1e-15)
    back = reduction.back(ConicSolution(np.append(x, v), y, y))
    assert [a.shape for a in (back.x, back.s, back.z)] == [(A.shape[1],), (A.shape[0],), (A.shape[0],)]
    # entry for entry against the merge written densely: the group's entries on the block moved to v, the new row
    dense = np.zeros((A.shape[0] + 1, A.shape[1] + 1))
    dense[:-1, :-1] = A.toarray()
    dense[:1_500, -1] = dense[:1_500, 3]
    dense[:1_500, 3:7] = 0.0
    dense[-1, [3, 4, 5, 6, A.shape[1]]] = [-1.0, EPS, EPS, EPS, 1.0]
    assert np.array_equal(Am.toarray(), dense) and Am.has_sorted_indices
    assert np.array_equal(merged.merged(A, with_rows=False).toarray(), dense[:-1])


def test_inexact_ratios_and_small_blocks_are_left_alone():
    """One margin row's entry of s_3 moved by one unit in the last place: s_3 leaves the group (only exact ratios
    are merged), the others stay; a block under MERGE_MIN_ROWS rows is not merged at all."""
    A, _ = margin_block()
    A = A.tolil()
    A[10, 6] = np.nextafter(EPS, 1.0)
    merged = rank_one_columns(sp.csc_matrix(A))
    assert [g.columns.tolist() for g in merged.groups] == [[3, 4, 5]]
    small, _ = margin_block(rows=MERGE_MIN_ROWS - 1)
    assert rank_one_columns(small) is None
    assert rank_one_columns(small, min_rows=MERGE_MIN_ROWS - 1) is not None


@pytest.fixture(scope="module")
def data():
    return scale_data(6_000)


def test_clarabel_on_the_merged_form_is_a_kkt_point_of_the_original(data):
    """(29) at 6,000 points (1,497 margin rows): Clarabel's runs on the merged form (21 columns into one), mapped
    back, give a point whose objective is that of the run on the form as it is (1e-9 relative: both stop at 1e-12
    on different paths) and that satisfies the original form's stationarity P x + q + A^T z = 0 (1e-9; polished)."""
    X, y = data
    form = conic_form(build(29, X, y, 1, 0.3, 1.0, eps=0.002))
    P, q, A, b, cones = form.P, form.q, form.A, form.b, form.cones
    merged = clarabel_solve(P, q, A, b, cones)
    plain = clarabel_solve(P, q, A, b, cones, settings=ClarabelSettings(merge_columns=False))
    assert "21 columns into 1 on 1,497 rows" in merged.message
    assert "merged" not in plain.message
    assert merged.status == plain.status == "Solved"
    assert merged.x.shape == plain.x.shape and merged.z.shape == plain.z.shape
    f = lambda x: 0.5 * x @ (P @ x) + q @ x  # noqa: E731  P is the full matrix here
    assert f(merged.x) == pytest.approx(f(plain.x), rel=1e-9)
    assert f(merged.x) < -1e-5  # a nonzero optimum, so the relative test means something
    stationarity = P @ merged.x + q + A.T @ merged.z
    assert np.abs(stationarity).max() <= 1e-9
    assert np.abs(merged.x - plain.x).max() <= 1e-6


def test_piqp_on_the_merged_qp_matches_its_dense_solver(data):
    """(23) at p = inf at 6,000 points: PIQP's sparse solver on the merged QP (21 columns into one) reaches the optimum
    of its dense solver on the QP as written (no merge), 1e-8 relative, w within 1e-6, and ``solve`` certifies it on
    the model."""
    X, y = data
    model = build(23, X, y, 1, 0.3, 1.0, p=float("inf"), eps=0.002)
    sparse = sparse_qp_matrices(model)
    merged = piqp_matrices(sparse)
    dense = piqp_matrices(qp_matrices(model))
    assert "21 columns into 1 on 1,497 rows" in merged.message and "merged" not in dense.message
    assert merged.x.shape == dense.x.shape and merged.eq_duals.shape == dense.eq_duals.shape
    assert sparse.objective(merged.x) == pytest.approx(sparse.objective(dense.x), rel=1e-8)
    assert sparse.objective(merged.x) < -1e-5
    w = [k for k, v in enumerate(sparse.variables) if v.parent_component().name == "w"]
    assert np.abs(merged.x[w] - dense.x[w]).max() <= 1e-6
    result = solve(model)
    assert result.solver == "piqp" and result.certified and "columns merged" in result.message
