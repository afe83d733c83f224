"""``--set SPEC``: an uncertainty set written on the command line, with its own numbers.

A spec is the set's kind and its numbers, separated by colons; a number is given in its kind's order or by name::

    ball:2:0.02                   NormBall(p=2, r=0.02)        ball:p=inf:r=0.1
    box:0.1                       |delta_j| <= 0.1             box:lower=-0.1:upper=0.2   (numbers or files)
    ellipsoid:0.02                Ellipsoid(I, 0.02)           ellipsoid:0.5:shape=S.npy
    budget:0.02:2                 one-sided budget (PyROS CardinalitySet), d=0.02, gamma=2; also cardinality:0.02:2
    symmetric-budget:0.02:2       |delta_j| <= 0.02, sum |delta_j| / 0.02 <= 2
    polyhedron:A=A.csv:b=b.csv    A delta <= b                 polyhedron:0.1  (the l_1 ball of radius 0.1)
    scenarios:P.csv               the rows of P (K x n)
    factor:PSI.csv:0.5            FactorModel(psi, beta=0.5)

A value is a number or a ``.npy`` / ``.csv`` / ``.txt`` file of numbers. Several ``--set`` make one set: their
intersection, or with ``--product N1 N2 ...`` their Cartesian product (set i on the next Ni coefficients). The form
of before still works: ``--set box --eps 0.1``, ``--set ball --p 2 --eps 0.02``, ``--set budget --param gamma=2``
(``--eps`` is then the set's size, ``--param NAME=VALUE`` any of its named numbers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tpm_models.cli.options import read_array
from tpm_models.models.declare import KINDS, SET_KINDS, combine, make_set
from tpm_models.models.uncertainty import UncertaintySet


@dataclass
class SetSpec:
    """One ``--set``: its text, its kind and the numbers it names (a float, or an array read from a file)."""

    text: str
    kind: str
    values: dict = field(default_factory=dict)

    def describe(self) -> str:
        """``kind:name=value:...``, a file's array as its shape."""
        items = [f"{k}={v:g}" if isinstance(v, float) else f"{k}=<{'x'.join(map(str, np.shape(v)))} array>"
                 for k, v in self.values.items()]
        return ":".join([self.kind, *items])


def read_value(text: str, what: str) -> float | np.ndarray:
    """A number (``inf`` too: a ball's p) or the array of a file; ``ValueError`` naming ``what`` otherwise."""
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        if math.isnan(number):
            raise ValueError(f"{what}: nan is not a number a set can take")
        return number
    if not Path(text).is_file():
        raise ValueError(f"{what}: {text!r} is neither a number nor a file (a .npy, .csv or .txt of numbers)")
    return read_array(text, what)


def parse_set(text: str) -> SetSpec:
    """``KIND[:VALUE|:NAME=VALUE]...`` as a :class:`SetSpec`; ``ValueError`` that says what is wrong and shows the
    kind's form."""
    kind, *items = [part.strip() for part in text.split(":")]
    if kind not in KINDS:
        raise ValueError(f"--set {text}: no set {kind!r}; the sets are {', '.join(SET_KINDS)} (e.g. --set box:0.1, "
                         "--set ball:2:0.02)")
    spec = KINDS[kind]
    form = usage(kind)
    out = SetSpec(text, kind)
    positional = list(spec.positional)
    for item in items:
        if not item:
            raise ValueError(f"--set {text}: an empty item (two colons in a row?); the form is {form}")
        if "=" in item:
            name, value = (part.strip() for part in item.split("=", 1))
            if name not in spec.positional and name not in spec.named:
                raise ValueError(f"--set {text}: the {kind} set has no number {name!r}; the form is {form}")
            if name in positional:
                positional.remove(name)
        else:
            if not positional:
                raise ValueError(f"--set {text}: too many numbers for the {kind} set; the form is {form}")
            name, value = positional.pop(0), item
        if name in out.values:
            raise ValueError(f"--set {text}: {name} is given twice")
        out.values[name] = read_value(value, f"--set {text}: {name}")
    return out


def usage(kind: str) -> str:
    """The form of a kind's spec: ``ball:P:R``, ``box:R (or box:lower=L:upper=U)``."""
    spec = KINDS[kind]
    text = ":".join([kind, *(name.upper() for name in spec.positional)])
    if spec.named:
        text += f" (named: {', '.join(f'{name}=...' for name in spec.named)})"
    return f"{text}, {spec.meaning}"


def read_sets(texts: list[str], eps: float | None, p: float | None, params: dict) -> list[SetSpec]:
    """The ``--set`` options as specs, the form of before folded in: with one ``--set``, ``--eps`` fills its size,
    ``--p`` a ball's p and ``--param`` its named numbers, each refused when the spec already gives it; with several,
    each spec gives its own numbers."""
    specs = [parse_set(t) for t in texts]
    if len(specs) > 1:
        if eps is not None or params:
            raise ValueError("with several --set, give each set its own numbers in its spec (--set box:0.1 --set "
                             "ball:2:0.05), not --eps or --param")
        return specs
    spec = specs[0]
    kind = KINDS[spec.kind]
    extra = dict(params)
    if eps is not None:
        if kind.size is None:
            raise ValueError(f"--set {spec.text}: a {spec.kind} set carries its own size (its data); --eps is not "
                             "for it")
        extra[kind.size] = float(eps)
    if p is not None and spec.kind == "ball":
        extra["p"] = float(p)
    for name, value in extra.items():
        if name not in kind.positional and name not in kind.named:
            raise ValueError(f"--param {name}: the {spec.kind} set has no number {name!r}; the form is "
                             f"{usage(spec.kind)}")
        if name in spec.values:
            raise ValueError(f"--set {spec.text}: its {name} is given twice (in the spec and by --eps, --p or "
                             "--param); give it once")
        spec.values[name] = value
    return specs


def set_of(specs: list[SetSpec], sizes: list[int] | None) -> Callable[[int], UncertaintySet]:
    """A function ``n -> set`` of the specs (one set; several: their intersection, or with ``sizes`` their
    Cartesian product), made once for each ``n`` (one set shared by the rows of that many coefficients); its
    errors name the spec."""
    made: dict[int, UncertaintySet] = {}
    if sizes is not None and len(sizes) != len(specs):
        raise ValueError(f"--product needs one size a --set: {len(specs)} sets, {len(sizes)} sizes")

    def make(n: int) -> UncertaintySet:
        if n not in made:
            parts = []
            dims = sizes if sizes is not None else [n] * len(specs)
            if sizes is not None and sum(sizes) != n:
                raise ValueError(f"--product {' '.join(map(str, sizes))}: the sizes add up to {sum(sizes)}, the "
                                 f"uncertain rows perturb {n} coefficients")
            for spec, k in zip(specs, dims):
                try:
                    parts.append(make_set(spec.kind, spec.values, k))
                except ValueError as exc:
                    raise ValueError(f"--set {spec.text}: {exc}; the form is {usage(spec.kind)}") from None
            try:
                made[n] = combine(parts, sizes)
            except ValueError as exc:
                raise ValueError(f"--set {' --set '.join(s.text for s in specs)}: {exc}") from None
        return made[n]

    return make


def describe(specs: list[SetSpec], sizes: list[int] | None) -> str:
    """The set in words: ``box:r=0.1``, ``box:r=0.3 and ball:p=2:r=0.25`` (an intersection), ``box:... x ...``."""
    if sizes is not None:
        return " x ".join(f"{s.describe()} (on {k})" for s, k in zip(specs, sizes))
    return " and ".join(s.describe() for s in specs) + (" (their intersection)" if len(specs) > 1 else "")
