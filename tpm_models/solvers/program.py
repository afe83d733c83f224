"""The program: a Pyomo model as the solve path reads it, once per solve (:func:`tpm_models.solvers.dispatch.solve`
makes one and hands it to every step), each reading made on first use and kept on the program, never in a module.
The certificate never reads through a program (:mod:`tpm_models.certify.reading`)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

import numpy as np
import pyomo.core as pyo

from tpm_models.solvers.common import ModelError
from tpm_models.solvers.expression_terms import atom_terms, product_terms
from tpm_models.solvers.rows import LinearRows, read_rows, sign_rows
from tpm_models.solvers.variables import free_variables, model_variables, variable_bounds


class Program:
    """One model's reading for one solve (module docstring). Every attribute is read on first use; the lists and
    arrays are shared by the steps of the solve: copy one to change it."""

    def __init__(self, model: pyo.ConcreteModel, bulk: bool = True):
        self.model = model
        self.bulk = bulk
        """Read the builders' recorded row blocks in bulk (:func:`tpm_models.solvers.rows.read_rows`)."""
        self.conic: object | None = None
        """The conic form (:class:`tpm_models.solvers.cones.ConicForm`) once
        :func:`tpm_models.solvers.conic.conic_program` has built it."""
        self.not_conic: str | None = None
        """Why the model has no conic form, once :func:`tpm_models.solvers.conic.conic_program` has found out."""
        self.certificates: dict = {}
        """What :func:`tpm_models.certify.certificate.certify` keeps of its last certificate in this solve."""

    @cached_property
    def variables(self) -> list:
        """Every variable of the model, fixed or not, in model order."""
        return model_variables(self.model)

    @cached_property
    def columns(self) -> tuple[list, dict]:
        """The unfixed variables in model order and their columns ``{id(v): k}``."""
        return free_variables(self.model, self.variables)

    @cached_property
    def free(self) -> list:
        """The unfixed variables in model order (the columns' variables)."""
        return self.columns[0]

    @cached_property
    def column(self) -> dict:
        """``{id(v): k}``: the column of each unfixed variable."""
        return self.columns[1]

    @cached_property
    def n(self) -> int:
        """The number of columns."""
        return len(self.columns[0])

    @cached_property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The lower and upper bounds of the columns (read-only arrays)."""
        return variable_bounds(self.free)

    @cached_property
    def rows(self) -> LinearRows:
        """The active rows: the linear ones as one sparse matrix over the columns, the others in ``others``."""
        return read_rows(self.model, self.column, self.n, self.bulk)

    def release_rows(self) -> None:
        """Let :attr:`rows` go (read again if asked for)."""
        self.__dict__.pop("rows", None)

    @property
    def atom_rows(self) -> Mapping:
        """``{id(con): atom terms or None}`` of the rows :attr:`rows` leaves in ``others`` (``rows.atom_rows``)."""
        return self.rows.atom_rows

    @cached_property
    def signs(self) -> set[int]:
        """``id`` s of the variables a row of their own keeps nonnegative (:func:`.rows.sign_rows`)."""
        return sign_rows(self.rows, self.free)

    @cached_property
    def objective(self):
        """The model's one active objective (:class:`ModelError` if it has none or several)."""
        return objective_of(self.model)

    @cached_property
    def objective_terms(self) -> tuple | None:
        """:func:`~.expression_terms.atom_terms` of the objective: ``(columns, coefficients, constant,
        [(coefficient, node)])``, or ``None`` when it is not linear in nodes."""
        return atom_terms(self.objective.expr, self.column)

    @cached_property
    def linear_objective(self) -> tuple | None:
        """``(columns, coefficients, constant)`` of a linear objective, ``None`` otherwise."""
        terms = self.objective_terms
        if terms is None or terms[3]:
            return None
        return terms[0], terms[1], terms[2]

    @cached_property
    def quadratic_objective(self) -> tuple | None:
        """:func:`~.expression_terms.product_terms` of the objective: ``(i, j, a, linear columns, linear
        coefficients, constant)``, or ``None`` when a node is not a product of two columns."""
        return product_terms(self.objective_terms, self.column)


def title(model: pyo.ConcreteModel) -> str:
    """The model's name as given to its builder (Pyomo quotes names with spaces)."""
    return model.name.strip("'")


def objective_of(model: pyo.ConcreteModel) -> Any:
    """The active objective of ``model``; :class:`~tpm_models.solvers.common.ModelError` unless there is exactly
    one (a feasibility problem still needs one: ``pyo.Objective(expr=0)``)."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objectives) != 1:
        names = ", ".join(o.name for o in objectives[:5])
        raise ModelError(
            f"{title(model)} has {len(objectives)} active objectives{' (' + names + ')' if names else ''}; "
            "solve() needs exactly one: deactivate the others (obj.deactivate()) or, for a feasibility "
            "problem, add pyo.Objective(expr=0)")
    return objectives[0]
