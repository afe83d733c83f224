"""The Clarabel backend's moves of a point at a power cone's apex, before its polish and before the certificate
reads it (:mod:`tpm_models.solvers.backends.clarabel`): where a perspective row :math:`c\\,a^q r^{1-q} \\le d z` sits
at :math:`r = 0` it has no value, so the point is put where the polish would put it (:func:`apex_point`) or moved
just inside the cone (:func:`nudged_apex`). The certificate's own reading of such rows is
:mod:`tpm_models.certify.power_apex`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tpm_models.certify.tolerances import APEX_TOL
from tpm_models.solvers.cones import ConeKind, ConicForm
from tpm_models.solvers.polish import faces


def apex_point(form: ConicForm, x: np.ndarray, z: np.ndarray) -> np.ndarray | None:
    """``x`` with the power cones of ``form`` that read at their apex at ``(x, z)`` (the polish's reading,
    :func:`~tpm_models.solvers.polish.faces`) put there as the polish puts them (:mod:`tpm_models.solvers.polish`:
    :math:`s = 0` on the block, each row of one column :math:`s_i = b_i - a_i x_c` snapped to :math:`x_c = b_i / a_i`
    exactly), ``None`` when no power cone reads so. A perspective block :math:`(\\tau, r, a)` there has :math:`r = 0`,
    where the row :math:`c\\,a^q r^{1-q} \\le d z` has no value ((23) at p = 3 on 10^5 points, whose optimum is
    :math:`w = 0`)."""
    starts = np.cumsum([0] + [c.dim for c in form.cones])
    read = faces(form.cones, form.b - form.A @ x, z)
    rows = [np.arange(starts[k], starts[k + 1]) for k, c in enumerate(form.cones)
            if c.kind is ConeKind.POW and read[k] == "apex"]
    if not rows:
        return None
    return with_slacks(form, x, np.concatenate(rows), 0.0)[0]


def with_slacks(form: ConicForm, x: np.ndarray, rows: np.ndarray, slack: float) -> tuple[np.ndarray, int]:
    """``x`` with the column of each of ``rows`` that is a row of one column :math:`s_i = b_i - a_i x_c` solved for
    :math:`s_i` = ``slack``: :math:`x_c = (b_i - s_i) / a_i` (the other rows left alone), and how many were."""
    A = sp.csr_matrix(form.A)
    rows = np.asarray(rows, dtype=np.int64)
    rows = rows[np.diff(A.indptr)[rows] == 1]
    rows = rows[A.data[A.indptr[rows]] != 0]
    out = np.array(x, dtype=float)
    out[A.indices[A.indptr[rows]]] = (np.asarray(form.b, dtype=float)[rows] - slack) / A.data[A.indptr[rows]]
    return out, len(rows)


APEX_NUDGE = 1e-14
"""Where :func:`nudged_apex` puts the :math:`r` of a perspective block at its apex: a point where the model's rows
have a value (:math:`r^{1-q}` at :math:`r = 0` has none), at :math:`10^{-4}` of
:data:`~tpm_models.certify.tolerances.APEX_TOL`, so the certificate still reads the block at its apex; the rows that
hold :math:`r` move by its coefficient times 1e-14."""


def nudged_apex(form: ConicForm, x: np.ndarray) -> np.ndarray | None:
    """``x`` with each power cone of ``form`` that sits at its apex (its three components within
    :data:`~tpm_models.certify.tolerances.APEX_TOL` of 0) moved inside it by its second component, :math:`r` of the
    perspective block :math:`(\\tau, r, a)`, set to :data:`APEX_NUDGE` (a row of one column: the column solved for
    it); ``None`` when no such cone. The polish lands on :math:`r = 0` exactly when the optimum is :math:`w = 0`
    ((26) at p = 1.5 on 10^5 points of the scale benchmark's seed 1), where the model's rows cannot be evaluated."""
    starts = np.cumsum([0] + [c.dim for c in form.cones])
    s = np.asarray(form.b, dtype=float) - form.A @ x
    second = [starts[k] + 1 for k, cone in enumerate(form.cones)
              if cone.kind is ConeKind.POW and np.abs(s[starts[k]:starts[k + 1]]).max() <= APEX_TOL]
    out, moved = with_slacks(form, x, np.asarray(second, dtype=np.int64), APEX_NUDGE)
    return out if moved else None
