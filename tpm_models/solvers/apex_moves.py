"""The Clarabel backend's moves of a point at a power cone's apex, where a perspective row
:math:`c\\,a^q r^{1-q} \\le d z` at :math:`r = 0` has no value: put where the polish would put it
(:func:`apex_point`), or moved just inside the cone (:func:`nudged_apex`). The certificate's own reading of such rows:
:mod:`tpm_models.certify.power_apex`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tpm_models.certify.tolerances import APEX_TOL
from tpm_models.solvers.cones import ConeKind, ConicForm
from tpm_models.solvers.polish import faces


def apex_point(form: ConicForm, x: np.ndarray, z: np.ndarray) -> np.ndarray | None:
    """``x`` with the power cones of ``form`` that read at their apex at ``(x, z)`` (:func:`~.polish.faces`) put
    there as the polish puts them (each row of one column :math:`s_i = b_i - a_i x_c` of the block solved for
    :math:`s_i = 0`), ``None`` when no power cone reads so."""
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
"""Where :func:`nudged_apex` puts the :math:`r` of a perspective block at its apex: where the model's rows have a
value, at 1e-4 of :data:`~tpm_models.certify.tolerances.APEX_TOL` (so the certificate still reads the apex)."""


def nudged_apex(form: ConicForm, x: np.ndarray) -> np.ndarray | None:
    """``x`` with each power cone of ``form`` at its apex (its components within
    :data:`~tpm_models.certify.tolerances.APEX_TOL` of 0) moved inside it, its second component (a perspective's
    :math:`r`, a row of one column) set to :data:`APEX_NUDGE`; ``None`` when no such cone."""
    starts = np.cumsum([0] + [c.dim for c in form.cones])
    s = np.asarray(form.b, dtype=float) - form.A @ x
    second = [starts[k] + 1 for k, cone in enumerate(form.cones)
              if cone.kind is ConeKind.POW and np.abs(s[starts[k]:starts[k + 1]]).max() <= APEX_TOL]
    out, moved = with_slacks(form, x, np.asarray(second, dtype=np.int64), APEX_NUDGE)
    return out if moved else None
