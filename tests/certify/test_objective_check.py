"""The certificate's check of its objective against Pyomo's own evaluation (``objective_disagrees``), and the one
walk of the expression that gives its value and central differences (``joint_values``)."""

import math

import numpy as np
import pyomo.environ as pyo

from tpm_models.certify.reading import joint_values, objective_disagrees


def _quadratic_model() -> tuple[pyo.ConcreteModel, list, np.ndarray]:
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I)
    m.q = pyo.Param(initialize=0.7, mutable=True)
    m.obj = pyo.Objective(expr=0.5 * sum(m.x[i] ** 2 for i in m.I) + m.q * m.x[1] * m.x[2] - 2.0 * m.x[3] + 1.5)
    x = np.array([0.3, -1.2, 2.5])
    for v, xv in zip(m.x.values(), x):
        v.set_value(float(xv))
    return m, list(m.x.values()), x


def _value_at(m: pyo.ConcreteModel, variables: list, point: np.ndarray) -> float:
    for v, xv in zip(variables, point):
        v.set_value(float(xv))
    return float(pyo.value(m.obj.expr))


def test_joint_values_are_one_walk_a_point():
    """Every entry of the joint walk is Pyomo's value at that point, to the last bit (each node does the same float
    operations, in the same order, on each entry), and the variables keep their values."""
    m, variables, x = _quadratic_model()
    d = np.array([0.6, 0.0, -0.8])
    steps = (0.0, 1e-4, -1e-4, 1e-6, -1e-6)
    joint = joint_values(m.obj, variables, x, d, steps)
    assert joint is not None
    assert [v.value for v in variables] == x.tolist()
    expected = [_value_at(m, variables, x + s * d) for s in steps]
    np.testing.assert_array_equal(joint, expected)


def test_joint_values_refused_by_a_function_node_and_values_kept():
    """``sqrt`` takes one float: no joint walk (``None``, so the caller walks once a point), nothing logged as an
    error, and the variables keep their values."""
    m, variables, x = _quadratic_model()
    m.obj.deactivate()
    m.root = pyo.Objective(expr=pyo.sqrt(1.0 + m.x[1] ** 2) + m.x[2])
    assert joint_values(m.root, variables, x, np.ones(3) / math.sqrt(3), (0.0, 1e-4, -1e-4)) is None
    assert [v.value for v in variables] == x.tolist()


def _gradient(x: np.ndarray, q: float = 0.7) -> np.ndarray:
    return np.array([x[0] + q * x[1], x[1] + q * x[0], x[2] - 2.0])


def _objective(x: np.ndarray, q: float = 0.7) -> float:
    return float(0.5 * x @ x + q * x[0] * x[1] - 2.0 * x[2] + 1.5)


def test_objective_disagrees_catches_a_misread_value_and_gradient():
    """The right value and gradient pass; a wrong value, or a gradient read with the wrong cross term (q = 0.2 for
    0.7), is caught, through the joint walk (quadratic) and through one walk a point (with ``sqrt``)."""
    m, variables, x = _quadratic_model()
    f, grad = _objective(x), _gradient(x)
    assert objective_disagrees(m.obj, variables, x, f, grad, smooth=True) is None
    assert "is not Pyomo's evaluation" in objective_disagrees(m.obj, variables, x, f + 1e-3, grad, smooth=True)
    assert "gradient" in objective_disagrees(m.obj, variables, x, f, _gradient(x, 0.2), smooth=True)
    assert objective_disagrees(m.obj, variables, x, f, _gradient(x, 0.2), smooth=False) is None  # value only
    m.obj.deactivate()
    m.root = pyo.Objective(expr=pyo.sqrt(1.0 + m.x[1] ** 2) + m.x[2])
    f_root = math.sqrt(1.0 + x[0] ** 2) + x[1]
    grad_root = np.array([x[0] / math.sqrt(1.0 + x[0] ** 2), 1.0, 0.0])
    assert objective_disagrees(m.root, variables, x, f_root, grad_root, smooth=True) is None
    assert "gradient" in objective_disagrees(m.root, variables, x, f_root, grad_root + [0.0, 0.0, 0.5], smooth=True)
    assert [v.value for v in variables] == x.tolist()
