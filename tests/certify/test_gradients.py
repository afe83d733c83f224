"""The objective's value and gradient as the certificate reads them (:func:`tpm_models.certify.gradients.
objective_gradient`), on the paper's models with one radius per point (the objective then holds
:math:`(\\sum_i \\varepsilon_i)\\,\\|w\\|`, a sum of parameters read in one pass).

Truth: Pyomo's own evaluation of the objective (``pyo.value``) and its reverse-mode derivative
(``pyomo.core.expr.calculus.derivatives.differentiate``), at a random point. Tolerance 1e-12 relative: the same sums
added in another order (a few ulps of terms of size 10^2).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.expr.calculus.derivatives import Modes, differentiate

from tpm_models.certify.objective import objective_gradient
from tpm_models.models.registry import build
from tpm_models.solvers.variables import free_variables


@pytest.mark.parametrize("eq, p", [(15, None), (23, 1.0), (23, 1.5), (23, 2.0), (23, 3.0), (23, float("inf")),
                                   (26, 1.5), (28, None)])
def test_the_objective_and_its_gradient_are_pyomos(eq, p):
    rng = np.random.default_rng(7)
    m = 200
    X, y = rng.random((m, 4)), rng.integers(0, 3, m)
    kwargs = {} if eq == 15 else {"eps": rng.uniform(0.01, 0.2, m), **({"p": p} if p is not None else {})}
    model = build(eq, X, y, 1, 0.3, 1.0, **kwargs)
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    variables, col = free_variables(model)
    x = rng.uniform(0.1, 1.0, len(variables))  # inside every domain: the norms' auxiliaries positive
    for v, value in zip(variables, x):
        v.set_value(float(value), skip_validation=True)
    read = objective_gradient(model, objective, col, len(variables), {}, x)
    assert read is not None
    value, grad = read
    truth = pyo.value(objective.expr)
    assert abs(value - truth) <= 1e-12 * max(1.0, abs(truth))
    derivative = differentiate(objective.expr, wrt_list=variables, mode=Modes.reverse_numeric)
    expected = np.array([float(d) for d in derivative])
    assert np.max(np.abs(grad - expected)) <= 1e-12 * max(1.0, np.max(np.abs(expected)))
