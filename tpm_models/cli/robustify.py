"""``tpm-models robustify``: derive the robust counterpart of a registered model
(:func:`tpm_models.robust_counterpart`), write it in any export format, print its size, and with ``--verify``
check it against its semi-infinite model.

Where the uncertain data come from:

* ``--model KEY`` of a model registered with ``uncertain=`` (the paper's 23, 26-29, 15R, 2R, 3R; a plugin's
  counterpart, ``docs/verify.md``): its nominal model and its declarations, every set replaced by ``--set``;
* any other ``--model KEY`` (a nominal model, e.g. 15 or a plugin's): the rows of ``--rows`` (default: every
  inequality row) with their coefficients on ``--vars`` (default: every variable of the row) perturbed in ``--set``.

``--set SPEC`` is the set with its own numbers (:mod:`tpm_models.cli.set_spec`): ``box:0.1``, ``ball:2:0.02``,
``ellipsoid:0.5:shape=S.npy``, ``budget:0.02:2`` (one-sided; ``cardinality``), ``symmetric-budget:0.02:2``,
``polyhedron:A=A.csv:b=b.csv``, ``scenarios:P.csv``, ``factor:PSI.csv:0.5``; several ``--set`` are their
intersection, with ``--product N1 N2 ...`` their Cartesian product. The form of before still works: ``--set box
--eps 0.1``, ``--set ball --p 2 --eps 0.02``, ``--param gamma=2`` (budget), ``shape=FILE`` (ellipsoid), ``A=FILE``
and ``b=FILE`` (polyhedron).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_variables

from tpm_models.checks.verify import verify
from tpm_models.cli.commands import add_command
from tpm_models.cli.options import class_of, model_key, read_array
from tpm_models.cli.set_spec import describe, read_sets, set_of
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.export.writers import FORMATS, format_of, write
from tpm_models.models.counterpart import robust_counterpart
from tpm_models.models.declare import SET_KINDS, declare_rows, with_sets
from tpm_models.models.norms import check_p
from tpm_models.models.registry import build, model_info
from tpm_models.models.uncertainty import UncertainRow, UncertainTerm
from tpm_models.validation import check_output_path


def read_param(text: str) -> tuple[str, object]:
    """``NAME=VALUE``: a finite number, or a ``.npy`` / ``.csv`` / ``.txt`` file of finite numbers
    (:func:`tpm_models.cli.options.read_array`); an error names the parameter and the file."""
    if "=" not in text:
        raise ValueError(f"--param takes NAME=VALUE, got {text!r}")
    name, value = (part.strip() for part in text.split("=", 1))
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is not None:
        if not math.isfinite(number):
            raise ValueError(f"--param {name}={value}: must be a finite number (not nan or inf)")
        return name, number
    if not Path(value).is_file():
        raise ValueError(f"--param {name}: {value!r} is neither a number nor a file")
    return name, read_array(value, name)


def size_of(model: pyo.ConcreteModel) -> str:
    """Variables, rows and nonzeros (linear and nonlinear entries) of the active rows."""
    variables = sum(1 for _ in model.component_data_objects(pyo.Var, descend_into=True))
    rows = list(model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    nonzeros = sum(len(list(identify_variables(r.body, include_fixed=False))) for r in rows)
    return f"{variables} variables, {len(rows)} rows, {nonzeros} nonzeros"


def cmd_robustify(args: argparse.Namespace) -> int:
    """0 written (and verified with ``--verify``), 1 not verified, 2 bad input."""
    check_output_path(args.out)
    fmt = format_of(args.out, args.format)
    data = load_dataset(args.dataset)
    c = class_of(data, args.class_)
    if args.eps is not None and not (math.isfinite(args.eps) and args.eps >= 0):
        raise ValueError(f"--eps {args.eps:g}: the size of a set must be finite and >= 0")
    p = None if args.p is None else check_p(args.p)
    if args.set == ["ball"] and p is None:
        raise ValueError("--set ball needs --p (1, 2, inf or any number >= 1), or write it as --set ball:P:R")
    params = dict(read_param(t) for t in args.param)
    specs = read_sets(args.set, args.eps, p, params)
    make = set_of(specs, args.product)
    X, y = min_max_scale(data.X), data.y
    info = model_info(args.model)
    if info.uncertain is not None and info.nominal is None:
        raise ValueError(f"({info.key}) declares uncertain data but names no nominal model to derive it from")
    paper = model_info(info.nominal).group if info.nominal is not None and info.uncertain is not None else info.group
    if paper != "user" and (args.nu is None or args.alpha is None):
        raise ValueError(f"({info.key}) is a model of the paper: give --nu and --alpha")
    uncertain: Sequence[UncertainRow | UncertainTerm]
    if info.uncertain is not None and info.nominal is not None:
        if args.vars:
            raise ValueError(f"({info.key}) declares its uncertain data; --vars is for a nominal model")
        nominal = build(info.nominal, X, y, c, args.nu, args.alpha)
        declared = info.uncertain(nominal, p if p is not None else 2.0, args.eps if args.eps is not None else 1.0)
        if args.rows:
            declared = [d for d in declared if not hasattr(d, "row") or d.row.parent_component().local_name
                        in args.rows]
        uncertain = with_sets(declared, lambda _size, n: make(n))
        source = f"the uncertain data of ({info.key}) on its nominal model ({info.nominal})"
    else:
        if info.robust_p is not None:
            raise ValueError(f"({info.key}) is robust and declares no uncertain data; give its nominal model")
        nominal = build(args.model, X, y, c, args.nu, args.alpha)
        uncertain = declare_rows(nominal, lambda _size, n: make(n), 0.0, args.rows, args.vars)
        if not uncertain:
            raise ValueError("no uncertain row: --rows/--vars select no inequality row")
        source = f"row-wise uncertainty on ({info.key})"
    counterpart = robust_counterpart(nominal, uncertain)
    path = write(counterpart, args.out, fmt)
    print(f"nominal      {size_of(nominal)}")
    print(f"counterpart  {size_of(counterpart)}  ({len(uncertain)} uncertain rows and terms: {source}, "
          f"set {describe(specs, args.product)})")
    print(f"wrote {path} ({fmt}, {path.stat().st_size} bytes)")
    if not args.verify:
        return 0
    v = verify(nominal, uncertain, counterpart, method=args.method, solver=args.solver)
    print(v.table())
    return 0 if v.verified else 1


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """``robustify``."""
    r = add_command(sub, "robustify")
    r.add_argument("--model", type=model_key, required=True,
                   help="a nominal model (its rows made robust: --rows, --vars) or a model registered with "
                        "uncertain= (its declarations under --set)")
    r.add_argument("--dataset", default="iris", help="iris, wine or a CSV path (label column last)")
    r.add_argument("--class", dest="class_", default="0",
                   help="class number 0..C-1 (or a label) playing c, or positive for binary models")
    r.add_argument("--nu", type=float, help="the paper's nu (required by the paper's models; a plugin's builder gets "
                                            "None when it is not given)")
    r.add_argument("--alpha", type=float, help="the paper's alpha (as --nu)")
    r.add_argument("--set", action="append", required=True, metavar="SPEC",
                   help="the uncertainty set and its numbers: box:0.1, ball:2:0.02, ellipsoid:R[:shape=FILE], "
                        "budget:D:GAMMA (one-sided; also cardinality), symmetric-budget:D:GAMMA, "
                        "polyhedron:A=FILE:b=FILE, scenarios:FILE, factor:PSI_FILE:BETA; repeat for their "
                        "intersection (or --product); a bare kind takes --eps, --p and --param: "
                        + ", ".join(SET_KINDS))
    r.add_argument("--product", type=int, nargs="+", metavar="N",
                   help="several --set as a Cartesian product: set i on the next N_i coefficients")
    r.add_argument("--p", help="--set ball (bare): its norm, 1, 2, inf or any number >= 1; the paper's declarations")
    r.add_argument("--eps", type=float, help="--set of a bare kind: its size (radius, half-width, deviation)")
    r.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="--set of a bare kind: its named numbers: gamma=2 (budget), shape=FILE (ellipsoid), A=FILE "
                        "b=FILE (polyhedron); repeatable")
    r.add_argument("--rows", nargs="+", metavar="NAME", help="only the rows of these constraint components")
    r.add_argument("--vars", nargs="+", metavar="NAME",
                   help="a nominal model: perturb the coefficients of these variables (default: every variable "
                        "of the row)")
    r.add_argument("--format", choices=FORMATS, help="file format (default: from --out's extension)")
    r.add_argument("--out", required=True, help="file to write; a name ending in .gz is gzip-compressed")
    r.add_argument("--verify", action="store_true", help="verify the counterpart against its semi-infinite model")
    r.add_argument("--method", choices=("cutting-plane", "pyros"), default="cutting-plane",
                   help="--verify: how to solve the semi-infinite model")
    r.add_argument("--solver", default="default", help="--verify: the cutting planes' master solver")
    r.set_defaults(func=cmd_robustify)
