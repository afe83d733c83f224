"""The uncertainty sets refuse data that is not a bounded convex set, at construction, saying what is wrong."""

import math

import pytest

from tpm_models.models.uncertainty import Box, Budget, Ellipsoid, NormBall, Polyhedron


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
