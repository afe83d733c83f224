"""Power cones written as second-order cones (:mod:`tpm_models.solvers.powsoc`): the tree of rotated cones.

Truths: the closed form of the power cone's section, :math:`\\max |s_2| = s_0^\\alpha s_1^{1-\\alpha}` for given
:math:`s_0, s_1 \\ge 0`, and the number of rotated cones from the binary expansions of the leaves' counts (each leaf
taken :math:`c` times enters the tree once per bit of :math:`c`; cvxpy's ``pnorm`` has the same count: 2 per
coordinate at p = 1.5, 3 and 4, 3 at p = 1.2, 4 at p = 5/3). The solves through the models' own forms against the
native power cones: ``tests/solvers/test_sparse.py``.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from tpm_models.solvers.clarabel_runs import clarabel_solve
from tpm_models.solvers.conic import Cone, ConicForm
from tpm_models.solvers.powsoc import pow_as_soc_map

ALPHAS = [Fraction(1, 3), Fraction(2, 3), Fraction(1, 4), Fraction(3, 4), Fraction(1, 2), Fraction(3, 5),
          Fraction(5, 6), Fraction(1, 7), Fraction(11, 16)]


def section(alpha: float, s0: float, s1: float, sign: float) -> ConicForm:
    """:math:`\\max` (``sign`` = 1) or :math:`\\min` (-1) of :math:`s_2` over :math:`(s_0, s_1, s_2) \\in
    \\mathcal K_{\\mathrm{pow}}(\\alpha)` with :math:`s_0, s_1` fixed; columns ``x = (s_0, s_1, s_2)``."""
    A = sp.csc_matrix(np.vstack([np.eye(3)[:2], -np.eye(3)]))  # zero rows x_0 = s0, x_1 = s1; the cone's s = x
    b = np.array([s0, s1, 0.0, 0.0, 0.0])
    return ConicForm([None] * 3, 0, sp.csc_matrix((3, 3)), np.array([0.0, 0.0, -sign]), 0.0, 1, A, b,
                     [Cone("zero", 2), Cone("pow", 3, alpha)], [], [])


def bits(n: int) -> int:
    return bin(n).count("1")


@pytest.mark.parametrize("alpha", ALPHAS, ids=str)
def test_the_tree_has_one_cone_fewer_than_the_bits_of_its_leaves(alpha):
    """The leaves :math:`s_0` (a times), :math:`s_1` (d - a), :math:`\\rho` (2^L - d): one rotated cone SOC(3) fewer
    than their counts' bits, and one new column per cone but the root's (rho's), plus sigma and rho."""
    a, d = alpha.numerator, alpha.denominator
    size = 1 << max(1, math.ceil(math.log2(d)))
    expected = bits(a) + bits(d - a) + bits(size - d) - 1
    soc, back = pow_as_soc_map(section(float(alpha), 1.0, 1.0, 1.0))
    assert back is not None
    cones = [c for c in soc.cones[2:] if c.kind == "soc"]  # after the zero block and the power block's rows
    assert len(cones) == expected and {c.dim for c in cones} == {3}
    assert soc.A.shape[1] - 3 == 2 + expected - 1  # the new columns after the section's three
    assert [c.kind for c in soc.cones].count("pow") == 0


@pytest.mark.parametrize("alpha", ALPHAS, ids=str)
def test_the_tree_holds_exactly_the_power_cone(alpha):
    """For random :math:`s_0, s_1 > 0`, the largest and the least :math:`s_2` the tree allows are
    :math:`\\pm s_0^\\alpha s_1^{1-\\alpha}` (closed form): the section is that interval (convex, so every point
    between is in it), no more and no less. Clarabel at the library's 1e-12; tolerance 1e-8 of max(1, value)
    (Clarabel's accepted accuracy, ``CLARABEL_ACCEPT_TOL``; measured errors are at most 3e-11). Not at
    :math:`s_0 = 0` or :math:`s_1 = 0`: the section is then the point 0, with no interior, and an interior point
    method stops 1e-8 to 1e-2 from it on the tree and on the power cone alike."""
    rng = np.random.default_rng(int(alpha.denominator * 100 + alpha.numerator))
    points = [tuple(rng.uniform(0.05, 3.0, 2)) for _ in range(4)]
    for s0, s1 in points:
        truth = s0 ** float(alpha) * s1 ** (1 - float(alpha))
        for sign in (1.0, -1.0):
            soc, _ = pow_as_soc_map(section(float(alpha), s0, s1, sign))
            run = clarabel_solve(soc.P, soc.q, soc.A, soc.b, soc.cones, polish_point=False)
            assert run.status == "Solved", (s0, s1, sign, run.message)
            assert abs(run.x[2] - sign * truth) <= 1e-8 * max(1.0, truth), (s0, s1, sign, run.x[2], truth)
