"""The certificate's evaluation of an expression (:func:`tpm_models.certify.evaluation.pyomo_value`) against
Pyomo's own (``pyo.value``), the truth: the same number to the bit (the same operations in the same order, no
tolerance), or the same exception's type, on every objective and row body of the idiom battery's models (at a random
point, and with the variables unset) and of the paper's models on Iris."""

from __future__ import annotations

import logging
import math
import sys
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models.certify.evaluation import pyomo_value
from tpm_models.models.registry import all_models, build

sys.path.insert(0, str(Path(__file__).parents[1] / "solvers"))
import idioms  # noqa: E402


def _outcome(evaluate, expr):
    try:
        return evaluate(expr)
    except Exception as exc:  # noqa: BLE001  the exception's type is compared
        return type(exc)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _expressions(model) -> list:
    return [o.expr for o in model.component_data_objects(pyo.Objective, descend_into=True)] + \
        [c.body for c in model.component_data_objects(pyo.Constraint, descend_into=True)]


def test_pyomo_value_is_pyomos_on_the_idioms(caplog):
    caplog.set_level(logging.CRITICAL, logger="pyomo")  # pyo.value logs each unset variable it meets
    rng = np.random.default_rng(0)
    compared = 0
    for name, factory in idioms.CASES.items():
        try:
            model, _ = factory()
        except Exception:  # noqa: BLE001  a case needing what is not installed (pint, sympy)
            continue
        free = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
        for values in (None, rng.standard_normal(len(free))):
            for k, v in enumerate(free):
                v.set_value(None if values is None else float(values[k]), skip_validation=True)
            for expr in _expressions(model):
                truth, read = _outcome(pyo.value, expr), _outcome(pyomo_value, expr)
                assert _same(truth, read), (name, str(expr)[:200], truth, read)
                compared += 1
    assert compared > 1000


@pytest.mark.parametrize("options", [{}, {"p": 2.0, "eps": 0.05}, {"p": 1.5, "eps": 0.05}, {"p": 1.0, "eps": 0.05}])
def test_pyomo_value_is_pyomos_on_the_papers_models(options, iris):
    X, y = iris
    rng = np.random.default_rng(1)
    built = 0
    for key, info in all_models().items():
        if info.group != "paper":
            continue
        try:
            model = build(key, X, y, 1, 0.3, 1.0, **options)
        except (TypeError, ValueError):  # a model without p or eps, or another p
            continue
        built += 1
        for v in model.component_data_objects(pyo.Var, descend_into=True):
            if not v.fixed:
                v.set_value(float(rng.uniform(0.1, 1.0)), skip_validation=True)
        for expr in _expressions(model):
            truth, read = _outcome(pyo.value, expr), _outcome(pyomo_value, expr)
            assert _same(truth, read), (key, str(expr)[:200], truth, read)
    assert built >= 1


def test_an_unset_parameter_is_refused_as_pyomo_refuses_it():
    model = pyo.ConcreteModel()
    model.x = pyo.Var(initialize=2.0)
    model.q = pyo.Param(mutable=True)
    expr = model.q * model.x + 1
    with pytest.raises(ValueError):
        pyo.value(expr)
    with pytest.raises(ValueError):
        pyomo_value(expr)
    model.q = 3.0
    assert pyomo_value(expr) == pyo.value(expr) == 7.0
