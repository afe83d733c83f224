"""The CPLEX ``.lp`` text of a Pyomo model: Pyomo's own ``LPWriter`` output, written faster.

:func:`lp_text` returns exactly the text that ``LPWriter().write(model, out, **LP_OPTIONS)`` (Pyomo's v2
``.lp`` writer, ``pyomo.repn.plugins.lp_writer``) writes: the same names (``LPFileLabeler``), the same
row and column order (``file_determinism=20``: indices sorted), sections, ``str`` of every number,
variable bounds and domains, ``ONE_VAR_CONSTANT`` for an objective constant or an empty row, fixed
variables moved into the constant, zero coefficients left out, equality (``c_e_``) and ranged
(``r_l_``/``r_u_``) rows, the ``[ ... ] / 2`` quadratic objective and ``[ ... ]`` quadratic rows.
``tests/export/test_lp_text.py`` checks it character for character against Pyomo's writer.

Why: Pyomo's writer walks every row with its expression visitor and looks every name up in a symbol map,
term by term (about 30 us for a row of 21 terms). Here a row whose body is a ``LinearExpression`` of plain
terms is read directly from its argument list, the way Pyomo's visitor reads it (``_before_linear``):
int or float coefficients, variables of the model that are not fixed, each at most once, int or float
constants; its text is one ``%``-format of the row (``%r`` is ``str`` for an int or float), or one
``format(c, '+')`` per term when a coefficient is negative. A row made on demand and not made yet
(:mod:`tpm_models.models.lazy_rows`: the margin rows of (2), (3), (10), (11), (15)) is written from its maker's
:class:`~tpm_models.models.lazy_rows.RowTerms`, the very numbers its expression would hold, and is left unmade
(:math:`10^5` points of (15): ``model_text(model, "lp")`` 2.31 -> 1.90 s, median of three fresh processes each, old
and new alternated, load 2.1-2.3 on 2 cores). Every other row (quadratic, with a fixed
variable, a parameter or numpy number as coefficient, a repeated variable, no term left, any other
expression) and the objective go through Pyomo's own visitor (``QuadraticRepnVisitor``) with the same
column order, and are written by the rules of Pyomo's ``write_expression``. Most of what remains is
``str`` of each coefficient (0.3 s of the 0.5 s of rows of (15) at 100,000 points, ``docs/notes/bench-builders.md``).

Falls back to Pyomo's writer for the whole model (which then writes it, or raises its own error) when the
model has ``Suffix`` or ``SOSConstraint`` components or components the ``.lp`` writer does not know, not
exactly one active objective, a row or objective with nonlinear terms, or two components with the same
label.
"""

from __future__ import annotations

import io
from itertools import compress, islice
from operator import itemgetter, lt
from typing import Any

import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.base.component_namer import index_repr
from pyomo.core.base.label import cpxlp_label_from_name
from pyomo.core.base.var import ScalarVar, VarData
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression
from pyomo.network import Port
from pyomo.repn.plugins.lp_writer import LPWriter
from pyomo.repn.quadratic import QuadraticRepnVisitor
from pyomo.repn.util import (
    FileDeterminism_to_SortComponents,
    OrderedVarRecorder,
    categorize_valid_components,
    initialize_var_map_from_column_order,
    ordered_active_constraints,
)

from tpm_models.models.lazy_rows import unmade_terms

LP_OPTIONS = {"symbolic_solver_labels": True, "file_determinism": 20}
"""The options of Pyomo's ``LPWriter`` that :func:`lp_text` reproduces (20: indices sorted)."""

_VALID = {pyo.Block, pyo.Constraint, pyo.Var, pyo.Param, pyo.Expression, pyo.ExternalFunction, pyo.Set,
          pyo.RangeSet, Port}
"""The component types Pyomo's ``.lp`` writer passes over (its ``valid`` set)."""

_TARGETS = {pyo.Suffix, pyo.SOSConstraint, pyo.Objective}

_PLAIN = frozenset({float, int})
"""Coefficient and constant types read directly (``bool`` and numpy scalars go through the visitor)."""

_VARIABLES = frozenset({VarData, ScalarVar})
"""Variable classes read directly (a bare variable is a term with coefficient 1)."""

_TERM = "{:+} {}\n".format
"""A linear term: ``format(c, '+')`` is ``str(c)`` with a ``+`` before a number that is not negative
(for an int or float, what Pyomo's ``f'+{coef!s}'`` / ``f'{coef!s}'`` choice on ``coef < 0`` writes)."""


def pyomo_lp_text(model: pyo.ConcreteModel) -> str:
    """The text Pyomo's own ``LPWriter`` writes with :data:`LP_OPTIONS` (the reference, and the fallback)."""
    out = io.StringIO()
    LPWriter().write(model, out, **LP_OPTIONS)
    return out.getvalue()


def lp_text(model: pyo.ConcreteModel) -> str:
    """``model`` in CPLEX ``.lp`` format, identical to :func:`pyomo_lp_text` (module docstring)."""
    with PauseGC():
        text = _Writer(model).text()
    return pyomo_lp_text(model) if text is None else text


class _Labels(dict):
    """``id(component data)`` -> its ``.lp`` label, ``LPFileLabeler``'s: the fully qualified name with
    ``[]{}`` as ``()()`` and any other character that is not a letter, digit or ``()_`` as ``_``.

    An indexed component's labels are made together at the first one asked for: its name once, then
    ``index_repr`` of each index, as ``ComponentData.getname`` joins them (one ``getname`` per row and
    column was a tenth of the write)."""

    def __init__(self, variables: dict):
        super().__init__()
        self.variables = variables

    def __missing__(self, key: int) -> str:
        return self.of(self.variables[key])

    def of(self, obj: Any) -> str:  # a Pyomo component data (untyped)
        label = self.get(id(obj))
        if label is None:
            parent = obj.parent_component()
            if parent is not obj and parent is not None:
                base = parent.getname(True)
                start = cpxlp_label_from_name(base) + "("  # the label of base + "[": translate is per character
                for index, data in parent.items():
                    if index.__class__ is int and index >= 0:  # index_repr: "[" + repr(index) + "]"
                        self[id(data)] = f"{start}{index})"
                    else:
                        self[id(data)] = cpxlp_label_from_name(base + index_repr(index))
            label = self.get(id(obj))
            if label is None:
                label = self[id(obj)] = cpxlp_label_from_name(obj.getname(True))
        return label


class _ByColumn(dict):
    """column -> ``format(label)``, made on first use: the labels of the columns written in
    ``LinearExpression`` rows (its keys are those columns)."""

    def __init__(self, form: str, labels: _Labels, variables: list):
        super().__init__()
        self.form = form
        self.labels = labels
        self.variables = variables

    def __missing__(self, column: int) -> str:
        text = self[column] = self.form.format(self.labels.of(self.variables[column]))
        return text


class _Writer:
    """One write of one model: Pyomo's column order, visitors and symbols, as its ``_LPWriter_impl`` sets them up."""

    def __init__(self, model: pyo.ConcreteModel):
        self.model = model
        self.config = LPWriter.CONFIG(LP_OPTIONS)
        self.sorter = FileDeterminism_to_SortComponents(self.config.file_determinism)
        self.one = pyo.Var(name="ONE_VAR_CONSTANT", bounds=(1, 1))
        self.one.construct()
        self.var_map = {id(self.one): self.one}
        initialize_var_map_from_column_order(model, self.config, self.var_map)
        self.var_order = {vid: i for i, vid in enumerate(self.var_map)}
        recorder = OrderedVarRecorder(self.var_map, self.var_order, self.sorter)
        self.objective_visitor = QuadraticRepnVisitor({}, var_recorder=recorder)
        self.row_visitor = QuadraticRepnVisitor(self.objective_visitor.subexpression_cache, var_recorder=recorder)
        self.columns = dict(self.var_order)
        """``id`` -> column of the model's variables that are not fixed (the visitor adds others to ``var_order``)."""
        self.variables = list(self.var_map.values())
        """The variables of :attr:`columns`, by column."""
        self.labels = _Labels(self.var_map)
        self.tails = _ByColumn(" {}\n+", self.labels, self.variables)
        """column -> ``" label\\n+"``: the end of a term and the sign of a next, positive one."""
        self.names = _ByColumn("{}", self.labels, self.variables)
        """column -> label, for the terms of a row with a negative coefficient."""
        self.used: set[int] = set()
        """``id`` of the variables written by Pyomo's rules (objective, other rows)."""
        self.symbols: list[str] = []

    def text(self) -> str | None:
        """The ``.lp`` text, or ``None`` where Pyomo's writer must write the model (module docstring)."""
        component_map, unknown = categorize_valid_components(
            self.model, active=True, sort=self.sorter, valid=_VALID, targets=_TARGETS)
        if unknown or component_map[pyo.Suffix] or component_map[pyo.SOSConstraint]:
            return None
        objectives = [o for blk in component_map[pyo.Objective]
                      for o in blk.component_data_objects(pyo.Objective, active=True, descend_into=False,
                                                          sort=self.sorter)]
        if len(objectives) != 1:
            return None
        parts = [f"\\* Source Pyomo model name={self.model.name} *\\\n\n"]
        if not self._objective(objectives[0], parts) or not self._rows(parts):
            return None
        self._bounds(parts)
        used = self.used | {id(self.variables[c]) for c in self._used_columns()}
        symbols = self.symbols + [self.labels[vid] for vid in used]
        if len(set(symbols)) != len(symbols):
            return None  # Pyomo's symbol map refuses a duplicate: let it say so
        return "".join(parts)

    # ----------------------------------------------------------------------- sections

    def _objective(self, obj: pyo.Objective, parts: list[str]) -> bool:
        label = self.labels.of(obj)
        self.symbols.append(label)
        parts.append(("min \n%s:\n" if obj.sense == pyo.minimize else "max \n%s:\n") % (label,))
        repn = self.objective_visitor.walk_expression(obj.expr)
        if repn.nonlinear is not None:
            return False
        if repn.constant or not (repn.linear or repn.quadratic):
            repn.linear[id(self.one)] = repn.constant
            repn.constant = 0
        parts.append(self._expression(repn, True))
        parts.append("\ns.t.\n")
        return True

    def _rows(self, parts: list[str]) -> bool:
        nontrivial = False
        for con in ordered_active_constraints(self.model, self.config):
            unmade = unmade_terms(con)  # a row made on demand, not made yet: its maker's terms, the row left unmade
            if unmade is not None:
                lb, ub = unmade.lower, unmade.upper
                fast = self._written(unmade.coefs, unmade.variables, unmade.constant)
                body = None if fast is not None else con.body
            else:
                lb, body, ub = con.to_bounded_expression(True)
                fast = self._linear(body.args) if body.__class__ is LinearExpression else None
            if lb is None and ub is None:
                continue
            if fast is None:
                repn = self.row_visitor.walk_expression(body)
                if repn.nonlinear is not None:
                    return False
                offset = repn.constant
                repn.constant = 0
                if repn.linear or repn.quadratic:
                    nontrivial = True
                else:
                    repn.linear[id(self.one)] = 0
                text = self._expression(repn, False)
            else:
                nontrivial = True
                text, offset = fast
            symbol = self.labels.of(con)
            if lb is not None:
                if ub is None:
                    label = f"c_l_{symbol}_"
                    parts.append(f"\n{label}:\n{text}>= {(lb - offset)!s}\n")
                elif lb == ub:
                    label = f"c_e_{symbol}_"
                    parts.append(f"\n{label}:\n{text}= {(lb - offset)!s}\n")
                else:
                    label = f"r_l_{symbol}_"
                    parts.append(f"\n{label}:\n{text}>= {(lb - offset)!s}\n")
                    parts.append(f"\nr_u_{symbol}_:\n{text}<= {(ub - offset)!s}\n")
            else:
                label = f"c_u_{symbol}_"
                parts.append(f"\n{label}:\n{text}<= {(ub - offset)!s}\n")
            self.symbols.append(label)
        if not nontrivial:
            self.used.add(id(self.one))
            parts.append(f"\nc_e_ONE_VAR_CONSTANT:\n+1 {self.labels[id(self.one)]}\n= 1\n")
        return True

    def _bounds(self, parts: list[str]) -> None:
        parts.append("\nbounds")
        integer, binary = [], []
        used, used_columns, labels = self.used, self._used_columns(), self.labels
        for column, (vid, v) in enumerate(self.var_map.items()):  # the first len(columns) are those columns
            if vid not in used and column not in used_columns:
                continue
            symbol = labels[vid]
            if v.is_binary():
                binary.append(symbol)
            elif v.is_integer():
                integer.append(symbol)
            lb, ub = v.bounds
            parts.append(f"\n   {'-inf' if lb is None else str(lb)} <= {symbol} <= {'+inf' if ub is None else str(ub)}")
        if integer:
            parts.append("\ngeneral\n  " + "\n  ".join(integer))
        if binary:
            parts.append("\nbinary\n  " + "\n  ".join(binary))
        parts.append("\nend\n")

    # ----------------------------------------------------------------------- one expression

    def _linear(self, args: list) -> tuple[str, object] | None:
        """A ``LinearExpression``'s terms and constant as Pyomo's visitor reads them, written; ``None`` unless
        every term is plain (module docstring) and at least one coefficient is not zero."""
        coefs, variables, const = [], [], 0
        for arg in args:
            cls = arg.__class__
            if cls is MonomialTermExpression:
                coef, var = arg._args_
                coefs.append(coef)
                variables.append(var)
            elif cls in _PLAIN:
                const += arg
            elif cls in _VARIABLES:
                coefs.append(1)
                variables.append(arg)
            else:
                return None
        return self._written(coefs, variables, const)

    def _written(self, coefs: list, variables: list, const: Any) -> tuple[str, object] | None:
        """The text and offset of the linear terms ``coefs[t] * variables[t]`` plus ``const`` (:meth:`_linear`, or a
        row's :class:`~tpm_models.models.lazy_rows.RowTerms`), as Pyomo's visitor reads and writes them; ``None``
        unless every coefficient is a plain int or float, every variable a column, each once, one coefficient not
        zero."""
        if not coefs or not _PLAIN.issuperset(map(type, coefs)):
            return None
        try:
            columns = list(map(self.columns.__getitem__, map(id, variables)))
        except KeyError:
            return None  # a fixed variable (a constant to Pyomo) or one not in the model
        in_order = all(map(lt, columns, islice(columns, 1, None)))
        if not in_order and len(set(columns)) != len(columns):
            return None  # a variable twice: Pyomo adds its coefficients (-2 + 0.0 is -2.0)
        if not all(coefs):  # Pyomo leaves zero coefficients out
            kept = list(map(bool, coefs))
            if not any(kept):
                return None
            columns, coefs = list(compress(columns, kept)), list(compress(coefs, kept))
        if not in_order:
            terms = sorted(zip(columns, coefs))
            columns, coefs = [col for col, _ in terms], [c for _, c in terms]
        offset = 0
        offset += const  # as Pyomo's visitor: 0 + the constants (so -0.0 becomes 0.0)
        if min(coefs) > 0:  # every term "+c name" (a NaN, which is not < 0, too): repr is str for int and float
            return (("+%r" + "%r".join(map(self.tails.__getitem__, columns))) % tuple(coefs))[:-1], offset
        return "".join(map(_TERM, coefs, map(self.names.__getitem__, columns))), offset

    def _used_columns(self) -> set[int]:
        """The columns written in ``LinearExpression`` rows: those whose text was made."""
        return set(self.tails) | set(self.names)

    def _expression(self, repn: Any, objective: bool) -> str:  # Pyomo's QuadraticRepn (untyped)
        """Pyomo's ``write_expression``: linear terms in column order, then ``+ [ ... ]`` (``/ 2`` in the objective)."""
        order, labels, used = self.var_order, self.labels, self.used
        out = []
        for vid, coef in sorted(repn.linear.items(), key=lambda x: order[x[0]]):
            used.add(vid)
            out.append(f"{coef!s} {labels[vid]}\n" if coef < 0 else f"+{coef!s} {labels[vid]}\n")
        if repn.quadratic:
            terms = []
            for (vid1, vid2), coef in repn.quadratic.items():
                used.update((vid1, vid2))
                if objective:
                    coef = 2 * coef
                c1, c2 = order[vid1], order[vid2]
                if c2 < c1:
                    col, sym = (c2, c1), f" {labels[vid2]} * {labels[vid1]}\n"
                elif c1 == c2:
                    col, sym = (c1, c1), f" {labels[vid2]} ^ 2\n"
                else:
                    col, sym = (c1, c2), f" {labels[vid1]} * {labels[vid2]}\n"
                terms.append((col, str(coef) + sym if coef < 0 else f"+{coef!s}{sym}"))
            out.append("+ [\n")
            out.append("".join(map(itemgetter(1), sorted(terms, key=itemgetter(0)))))
            out.append("] / 2\n" if objective else "]\n")
        return "".join(out)
