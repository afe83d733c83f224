"""The kinds of change a user makes to a built model (the margin rows of a builder), shared by the tests that check a
fast reading of the rows against the walk after each one (``test_bulk_rows.py``, ``test_conic_rows.py``)."""

from __future__ import annotations

import pyomo.environ as pyo


def change_eps(model):
    rows = list(model.margin)  # the points of X_c
    for i, k in zip(rows[:7], range(7)):
        model.eps[i] = 0.5 + k  # eps is mutable: the rows hold -eps_i
    model.eps[rows[9]] = 3  # an int is a number too


def set_value(model):
    con = model.margin[list(model.margin)[3]]
    con.set_value(con.body + 2 * model.theta >= 1)


def deactivate(model):
    model.margin[list(model.margin)[5]].deactivate()


def deactivate_all(model):
    model.margin.deactivate()


def fix(model):
    model.theta.fix(0.25)


def fix_row_variable(model):
    model.xi[list(model.xi)[2]].fix(0.0)


def add_row(model):
    model.extra = pyo.Constraint(expr=model.theta + model.w[1] <= 3)
    model.extra_margin = pyo.Constraint(expr=model.margin[list(model.margin)[0]].body >= -1)


def delete_rows(model):
    model.del_component(model.margin)


def delete_one_row(model):
    del model.margin[list(model.margin)[4]]


def eps_none(model):
    model.eps[list(model.margin)[1]] = None


def clone(model):
    return model.clone()


def rebuild_rows(model):
    """The same component deleted and added back under another name: the same rows, still valid."""
    margin = model.margin
    model.del_component(margin)
    model.again = margin


CHANGES = [change_eps, set_value, deactivate, deactivate_all, fix, fix_row_variable, add_row, delete_rows,
           delete_one_row, eps_none, clone, rebuild_rows]
