"""The uncertainty sets refuse data that is not a bounded convex set, at construction, saying what is wrong: NaN or
infinite data, a negative size, an empty or unbounded set, for every set the library has (the composite sets of
``composite_sets`` too; their intersections' emptiness with cones in ``test_set_programs``)."""

import math

import pytest

from tpm_models.models.composite_sets import CartesianProduct, FactorModel, Intersection, Scenarios
from tpm_models.models.uncertainty import Box, Budget, Ellipsoid, NormBall, Polyhedron, SymmetricBudget


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Ellipsoid([[1.0, 0.0], [0.0, 1.0]], -1.0), "finite and >= 0"),
    (lambda: Ellipsoid([[1.0, math.nan], [math.nan, 1.0]], 1.0), "finite"),
    (lambda: Ellipsoid([[1.0, 0.0], [0.0, -1.0]], 1.0), "positive semidefinite"),
    (lambda: Ellipsoid([[1.0, 0.5], [0.0, 1.0]], 1.0), "symmetric"),
    (lambda: Ellipsoid([[1.0, 0.0, 0.0]], 1.0), "square"),
    (lambda: Box(0.0, math.inf), "finite"),
    (lambda: Box((0.0, -math.inf), (1.0, 1.0)), "finite"),
    (lambda: Box((0.0, 2.0), (1.0, 1.0)), "lower <= upper"),
    (lambda: Box((0.0, 0.0), (1.0, 1.0, 1.0)), "differ in length"),
    (lambda: Budget((1.0, math.inf), 1.0), "finite"),
    (lambda: Budget((1.0, -1.0), 1.0), ">= 0"),
    (lambda: Budget(1.0, math.nan), "finite and >= 0"),
    (lambda: Budget(1.0, -1.0), "finite and >= 0"),
    (lambda: NormBall(2, -0.1), "finite and >= 0"),
    (lambda: NormBall(2, math.inf), "finite and >= 0"),
    (lambda: Polyhedron([[1.0, math.nan]], [1.0]), "finite"),
    (lambda: Polyhedron([[1.0, 0.0]], [math.inf]), "finite"),
    (lambda: Polyhedron([[1.0, 0.0]], [1.0, 2.0]), "one b per row"),
    (lambda: Polyhedron([[1.0, 0.0], [-1.0, 0.0]], [-1.0, -1.0]), "empty"),  # delta_1 <= -1 and >= 1
    (lambda: Polyhedron([[1.0, 0.0]], [1.0]), "unbounded"),
    (lambda: Polyhedron([[1.0], [-1.0]], [-1.0, -1.0], bounded=False), "empty"),  # a member may be unbounded, not empty
    (lambda: Ellipsoid([[1.0]], math.nan), "finite and >= 0"),
    (lambda: NormBall(0.5, 1.0), "p must be >= 1"),
    (lambda: Box.symmetric(-0.1), "half-widths must be"),
    (lambda: Box.symmetric(math.nan), "finite"),
    (lambda: SymmetricBudget((0.1, math.nan), 1.0), "finite"),
    (lambda: SymmetricBudget((0.1, -0.1), 1.0), ">= 0"),
    (lambda: SymmetricBudget(0.1, math.inf), "finite and >= 0"),
    (lambda: SymmetricBudget(0.1, -1.0), "finite and >= 0"),
    (lambda: Scenarios([[0.0, math.inf]]), "finite"),
    (lambda: FactorModel([[math.nan]], 0.5), "finite"),
    (lambda: FactorModel([[1.0]], math.nan), "finite"),
    (lambda: FactorModel([[1.0]], -0.1), r"in \[0, 1\]"),
    (lambda: CartesianProduct([Box.symmetric(0.1)], [1.5]), "whole number"),
    (lambda: Intersection([Polyhedron([[1.0, 1.0]], [1.0], bounded=False),
                           Polyhedron([[-1.0, -1.0]], [1.0], bounded=False)]), "unbounded"),  # a slab
    (lambda: Intersection([Box((0.5, 0.5), (1.0, 1.0)), Ellipsoid([[0.01, 0.0], [0.0, 0.01]], 1.0)]), "empty"),
])
def test_a_set_that_is_not_a_bounded_convex_set_is_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_degenerate_sets_are_accepted_with_their_support():
    """A singular (PSD) ellipsoid is a flat ellipse; its support r*sqrt(g'Sg) is 0 across it (closed form)."""
    flat = Ellipsoid([[4.0, 0.0], [0.0, 0.0]], 0.5)
    assert flat.support([0.0, 3.0])[0] == 0.0
    assert flat.support([1.0, 3.0])[0] == pytest.approx(0.5 * 2.0, rel=1e-15)
    assert Box(1.0, 1.0).is_point() and Budget(0.0, 1.0).is_point()


def test_a_slab_is_a_member_of_an_intersection_not_a_set_alone():
    """|1'delta| <= 0.4 is unbounded: refused alone, accepted with bounded=False, and bounded by a box (the support
    of the box cut by the slab in the direction (1, 1): 0.4, closed form)."""
    A, b = [[1.0, 1.0], [-1.0, -1.0]], [0.4, 0.4]
    with pytest.raises(ValueError, match="unbounded"):
        Polyhedron(A, b)
    cut = Intersection([Box.symmetric(0.3), Polyhedron(A, b, bounded=False)])
    assert cut.support([1.0, 1.0])[0] == pytest.approx(0.4, abs=1e-12)
