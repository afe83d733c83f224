"""Which Pyomo components a solve reads, and which it refuses by name: nothing active is ignored.

:func:`read_components` checks every active component (blocks included) before anything is solved: a type in
:data:`READ` is read, one in :data:`TRANSFORM` refused with the transformation that makes the model solvable, a
``SOSConstraint`` taken only by a backend with ``Backend.sos``, any other type refused with its name. The table of
every type: ``docs/solvers.md``, "What a solve reads, and what it refuses by name".
"""

from __future__ import annotations

from typing import Any

import pyomo.core as pyo
from pyomo.core.base.component import ModelComponentFactory

from tpm_models.solvers.common import ModelError

READ: frozenset[str] = frozenset({
    "Var", "Param", "Set", "RangeSet", "Expression", "Constraint", "Objective", "Block", "Suffix", "BooleanVar",
    "BuildAction", "BuildCheck", "SetOf",
})
"""The component types (``ctype`` names) a solve reads (module docstring)."""

SOS = "SOSConstraint"
"""The one type a solve sends only to the backends that take it natively (``Backend.sos``)."""

TRANSFORM: dict[str, str] = {
    **dict.fromkeys(("Disjunct", "Disjunction"), "a GDP model: apply TransformationFactory('gdp.bigm') or "
                    "('gdp.hull') first (pyo.TransformationFactory('gdp.bigm').apply_to(model))"),
    "LogicalConstraint": "logical constraints: apply TransformationFactory('core.logical_to_linear') first "
                         "(or 'gdp.bigm', which also converts them)",
    "Complementarity": "complementarity conditions: apply TransformationFactory('mpec.simple_nonlinear') or "
                       "('mpec.standard_form') first",
    "ExternalFunction": "an external (compiled) function: its rows cannot be read or certified here; export the "
                        "model to .nl (tpm_models.export) for an AMPL-interface solver",
    "Port": "network ports: apply TransformationFactory('network.expand_arcs') first",
    "Arc": "network arcs: apply TransformationFactory('network.expand_arcs') first",
    "Connector": "connectors: apply TransformationFactory('core.expand_connectors') first",
    **dict.fromkeys(("ContinuousSet", "DerivativeVar"), "a DAE model: discretise it (TransformationFactory("
                    "'dae.finite_difference') or ('dae.collocation')) and export it (.nl) for Ipopt; derivative "
                    "variables are not read here"),
    "Integral": "a DAE model: discretise it (TransformationFactory('dae.finite_difference') or "
                "('dae.collocation')) first",
    **dict.fromkeys(("IntervalVar", "SequenceVar"), "a scheduling (constraint programming) model: solve it with "
                    "Pyomo's docplex interface"),
}
"""Types refused with the transformation (or the route) that makes the model solvable."""


class UnsupportedComponentError(ModelError):
    """The model holds an active component a solve does not read (:mod:`tpm_models.solvers.components`); the message
    names it and the transformation to apply."""


def read_components(model: pyo.ConcreteModel) -> bool:
    """Check every active component of ``model`` (module docstring): raise :class:`UnsupportedComponentError` naming
    each kind refused (its first components and what to do), else return whether the model holds active
    ``SOSConstraint`` s (which only a backend with ``sos=True`` may take)."""
    refused: dict[str, list[str]] = {}
    sos = False
    for component in model.component_objects(ctype=None, active=True, descend_into=True):  # through active blocks
        kind = component.ctype.__name__
        if kind in READ:
            continue
        if kind == SOS:
            sos = sos or any(data.active for data in component.values())
            continue
        refused.setdefault(kind, []).append(component.name)
    if refused:
        parts = []
        for kind, names in refused.items():
            how = TRANSFORM.get(kind, f"tpm_models does not read {kind} components (known to Pyomo as "
                                      f"{'a registered component' if kind in ModelComponentFactory else 'a plug-in'})"
                                      "; transform or remove them, or solve with Pyomo's own interface")
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            parts.append(f"{kind} {shown}: {how}")
        raise UnsupportedComponentError(f"{model.name.strip(chr(39))} holds components a solve does not read, so "
                                        f"nothing could prove its answer: {'; '.join(parts)}")
    return sos


def unread_domains(variables: Any) -> list[str]:
    """Names (at most 5) of the variables whose domain is neither an interval of the reals nor of the integers (a
    finite set of values such as ``{1, 3, 7}``): no backend here reads such a domain, so a solve refuses them."""
    out: list[str] = []
    seen: dict[int, bool] = {}
    for v in variables:
        domain = v.domain
        ok = seen.get(id(domain))
        if ok is None:
            interval = domain.get_interval()
            ok = seen[id(domain)] = interval is not None and interval[2] in (0, 1)
        if not ok:
            out.append(v.name)
            if len(out) == 5:
                break
    return out
