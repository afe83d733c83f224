"""Issue 50's battery: robust LPs and SOCPs from RSOME's and PyROS's documentation examples, as data.

Each :class:`Case` is a nominal model (objective ``c'x``, either sense; rows ``lower <= a'x <= upper``; second-order
cones ``||G x + g0||_2 <= h'x + h0``; bounds on ``x``) and its uncertain parts (:class:`Unc`): a row or the
objective gets ``(M x + m0)'delta``, ``delta`` in a set (:class:`SetSpec`). The cases are numbers only (numpy and
the standard library), so that two independent writers read the same data:

* :func:`pyomo_model` writes the nominal Pyomo model and the ``tpm_models`` declarations
  (``UncertainRow``/``UncertainTerm`` with the library's sets), which ``robust_counterpart`` derives and ``solve``
  solves (``tests/models/test_robust_battery.py``);
* ``benchmarks/rsome_battery.py`` writes each case in RSOME's own language (``dvar``, ``rvar``, ``forall``,
  ``minmax``/``maxmin``) in a throwaway venv that has no Pyomo and no ``tpm_models``, and stores its optima in
  ``docs/results/rsome-battery.csv``.

``closed`` is the optimum in closed form where one exists (the derivation in ``note``); most closed forms use
that a row ``1'x + sigma(x) <= b`` with a convex, permutation-symmetric support ``sigma`` and ``max 1'x`` has an
optimum with equal entries (for a fixed sum, ``sigma`` is least at the mean by convexity and symmetry).

Nothing in the library imports this module; ``pyomo_model`` imports Pyomo and ``tpm_models`` when called.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

INF = math.inf


@dataclass(frozen=True)
class SetSpec:
    """An uncertainty set of perturbations ``delta`` (the kinds of :func:`box` ... :func:`product`)."""

    kind: str
    params: dict = field(default_factory=dict)
    members: tuple = ()

    def label(self) -> str:
        if self.kind == "ball":
            p = self.params["p"]
            return f"l{'inf' if math.isinf(p) else f'{p:g}'} ball"
        if self.kind in ("intersection", "product"):
            sign = " & " if self.kind == "intersection" else " x "
            return "(" + sign.join(m.label() for m in self.members) + ")"
        if self.kind == "ellipsoid" and np.linalg.matrix_rank(self.params["S"]) < len(self.params["S"]):
            return "degenerate ellipsoid"
        return self.kind


def box(lower: Any, upper: Any) -> SetSpec:
    return SetSpec("box", {"lower": np.asarray(lower, float), "upper": np.asarray(upper, float)})


def ball(p: float, radius: float) -> SetSpec:
    return SetSpec("ball", {"p": float(p), "r": float(radius)})


def ellipsoid(S: Any, radius: float = 1.0) -> SetSpec:
    """``{delta : delta = L u, |u|_2 <= r}``, ``S = LL'`` (``delta' S^-1 delta <= r^2`` when ``S`` is definite)."""
    return SetSpec("ellipsoid", {"S": np.asarray(S, float), "r": float(radius)})


def budget(deviation: Any, gamma: float) -> SetSpec:
    """PyROS's cardinality set: ``delta = d * z``, ``z in [0, 1]^n``, ``sum z <= gamma`` (one-sided)."""
    return SetSpec("budget", {"d": np.asarray(deviation, float), "gamma": float(gamma)})


def polyhedron(A: Any, b: Any) -> SetSpec:
    return SetSpec("polyhedron", {"A": np.asarray(A, float), "b": np.asarray(b, float)})


def scenarios(P: Any) -> SetSpec:
    return SetSpec("scenarios", {"P": np.asarray(P, float)})


def factor(psi: Any, beta: float) -> SetSpec:
    """PyROS's factor model set: ``delta = Psi xi``, ``xi in [-1, 1]^F``, ``|sum xi| <= beta F``."""
    return SetSpec("factor", {"psi": np.asarray(psi, float), "beta": float(beta)})


def intersection(*sets: SetSpec) -> SetSpec:
    return SetSpec("intersection", members=tuple(sets))


def product(sets: list[SetSpec], sizes: list[int]) -> SetSpec:
    return SetSpec("product", {"sizes": tuple(int(s) for s in sizes)}, tuple(sets))


def l1_polyhedron(n: int, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """``{delta : |delta|_1 <= r}`` as its ``2^n`` half-spaces ``s'delta <= r``, ``s in {-1, 1}^n``."""
    signs = np.array([[1.0 if (k >> j) & 1 else -1.0 for j in range(n)] for k in range(2 ** n)])
    return signs, np.full(len(signs), float(radius))


@dataclass
class Row:
    name: str
    a: np.ndarray
    lower: float | None = None
    upper: float | None = None


@dataclass
class Cone:
    """``||G x + g0||_2 <= h'x + h0``: a second-order cone of the nominal model (no uncertainty)."""

    name: str
    G: np.ndarray
    g0: np.ndarray
    h: np.ndarray
    h0: float


@dataclass
class Unc:
    """``target`` (a row's name, or ``"obj"``) gets ``(M x + m0)'delta`` for every ``delta`` in ``uset``. Items of
    one ``group`` share one ``delta`` (joint uncertainty: one random vector in several rows; RSOME writes one
    ``rvar``), the others have their own (row by row)."""

    target: str
    M: np.ndarray
    m0: np.ndarray
    uset: SetSpec
    group: str | None = None


@dataclass
class Case:
    name: str
    source: str
    sense: str
    c: np.ndarray
    rows: list[Row]
    uncertain: list[Unc]
    lb: np.ndarray
    ub: np.ndarray
    cones: list[Cone] = field(default_factory=list)
    closed: float | None = None
    note: str = ""

    @property
    def n(self) -> int:
        return len(self.c)

    @property
    def kind(self) -> str:
        """LP or SOCP, the class of the counterpart (a cone in the nominal model, or from a 2-norm set)."""
        def conic(s: SetSpec) -> bool:
            return (s.kind == "ellipsoid" or s.kind == "ball" and s.params["p"] not in (1.0, INF)
                    or any(conic(m) for m in s.members))
        return "SOCP" if self.cones or any(conic(u.uset) for u in self.uncertain) else "LP"

    def sets(self) -> str:
        return ", ".join(dict.fromkeys(u.uset.label() for u in self.uncertain))

    def forms(self) -> str:
        """The row forms and targets the case exercises (for the table)."""
        out = [self.sense]
        rows = {r.name: r for r in self.rows}
        for u in self.uncertain:
            if u.target == "obj":
                out.append("objective")
                continue
            r = rows[u.target]
            out.append("ranged" if r.lower is not None and r.upper is not None else ("<=" if r.upper is not None
                                                                                      else ">="))
            if np.any(u.m0):
                out.append("rhs")
        if any(u.group for u in self.uncertain):
            out.append("joint")
        if np.any(np.isinf(self.lb) & np.isinf(self.ub)):
            out.append("free-x")
        return " ".join(dict.fromkeys(out))


def nonneg(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(n), np.full(n, INF)


def eye(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``M = I``, ``m0 = 0``: the coefficients of ``delta`` are ``x`` (a perturbed row ``(a + delta)'x``)."""
    return np.eye(n), np.zeros(n)


def sum_case(name: str, uset: SetSpec, closed: float, note: str, n: int = 4, b: float = 10.0,
             source: str = "RSOME/PyROS set catalogue") -> Case:
    """``max 1'x`` s.t. ``(1 + delta)'x <= b``, ``x >= 0``: the support of ``uset`` at ``x`` in closed form."""
    M, m0 = eye(n)
    return Case(name, source, "max", np.ones(n), [Row("cap", np.ones(n), upper=b)], [Unc("cap", M, m0, uset)],
                *nonneg(n), closed=closed, note=note)


# --------------------------------------------------------------------------- data of the documentation examples

def rsome_portfolio(n: int = 150) -> tuple[np.ndarray, np.ndarray]:
    """RSOME's robust portfolio (after Bertsimas and Sim 2004): ``p_i = 1.15 + 0.05 i / n``,
    ``sigma_i = 0.05 / 450 * sqrt(2 i n (n + 1))``."""
    i = np.arange(1, n + 1)
    return 1.15 + i * 0.05 / n, 0.05 / 450 * (2 * i * n * (n + 1)) ** 0.5


def knapsack(n: int = 20) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A knapsack (RSOME's robust knapsack, deterministic data): values ``c``, weights ``w``, deviations
    ``0.1 w`` to ``0.5 w``, capacity ``b``."""
    j = np.arange(n)
    w = 15.0 + (j * 7 % 11)
    c = 10.0 + (j * 13 % 17)
    wh = w * (0.1 + 0.4 * ((j * 5 % 9) / 8))
    return c, w, wh, float(w.sum() / 3)


def greedy_knapsack(c: np.ndarray, w: np.ndarray, b: float) -> float:
    """The LP relaxation of ``max c'x, w'x <= b, 0 <= x <= 1`` (Dantzig's greedy by ``c/w``)."""
    value, left = 0.0, b
    for j in np.argsort(-c / w, kind="stable"):
        take = min(1.0, left / w[j])
        value += take * c[j]
        left -= take * w[j]
        if left <= 0:
            break
    return value


HOURS = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0], [3.0, 4.0, 2.0]])
PROFIT = np.array([5.0, 4.0, 3.0])
CAPACITY = np.array([50.0, 60.0, 70.0])


def production(uset_of: Any, name: str, closed: float | None = None, note: str = "", joint: bool = False) -> Case:
    """``docs/robustify.md``'s production plan (3 products, 3 machines, hours known to 10%), as RSOME's production
    examples: ``max profit'x`` s.t. ``(t_k + delta_k)'x <= C_k``; ``joint``: one ``u`` moves product j's hours on
    every machine (``delta_kj = 0.1 t_kj u_j``), else each row its own ``delta_k`` in ``uset_of(k)``."""
    rows = [Row(f"machine{k}", HOURS[k], upper=CAPACITY[k]) for k in range(3)]
    if joint:
        unc = [Unc(f"machine{k}", np.diag(0.1 * HOURS[k]), np.zeros(3), uset_of(k), group="u") for k in range(3)]
    else:
        unc = [Unc(f"machine{k}", np.eye(3), np.zeros(3), uset_of(k)) for k in range(3)]
    return Case(name, "docs/robustify.md; RSOME production planning", "max", PROFIT, rows, unc, *nonneg(3),
                closed=closed, note=note)


def inventory(T: int = 5, gamma: float = 2.0, rho: float = 0.2) -> Case:
    """A static robust inventory plan (Ben-Tal et al. 2004, RSOME's robust inventory without adaptive orders):
    orders ``0 <= x_t <= 40`` at cost ``c_t``, demand ``d_t (1 + rho z_t)``, ``z`` in the symmetric budget set
    ``{|z| <= 1, |z|_1 <= gamma}`` (one ``z`` for every period: joint), stock
    ``I_t = 20 + sum_{s<=t}(x_s - d_s) in [10, 60]``: ranged rows whose right-hand sides are uncertain."""
    t = np.arange(T)
    d = 30.0 + 10.0 * np.sin(np.pi * t / 3)
    cost = 1.0 + 0.5 * np.cos(np.pi * t / 4)
    A, b = l1_polyhedron(T, gamma)
    uset = intersection(box(-np.ones(T), np.ones(T)), polyhedron(A, b))
    rows, unc = [], []
    for k in range(T):
        a = (t <= k).astype(float)
        served = d[: k + 1].sum()
        rows.append(Row(f"stock{k}", a, lower=10.0 - 20.0 + served, upper=60.0 - 20.0 + served))
        m0 = np.where(t <= k, -rho * d, 0.0)
        unc.append(Unc(f"stock{k}", np.zeros((T, T)), m0, uset, group="z"))
    return Case("inventory-budget", "RSOME robust inventory (Ben-Tal et al. 2004), static orders", "min", cost,
                rows, unc, np.zeros(T), np.full(T, 40.0))


def chebyshev_fit() -> Case:
    """A robust Chebyshev (min-max) fit, free coefficients: ``min t`` s.t. ``|(a_i + delta_i)'x - y_i| <= t`` for
    every ``delta_i`` in its own l2 ball (row by row): ``|a_i'x - y_i| + r|x|_2 <= t`` (RSOME's robust regression
    examples)."""
    A = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0], [1.0, 4.0]])
    y = np.array([0.9, 2.1, 2.9, 4.2, 4.8])
    rows, unc = [], []
    for i in range(len(y)):
        a = np.append(A[i], -1.0)  # variables (x0, x1, t)
        rows.append(Row(f"above{i}", a, upper=y[i]))
        rows.append(Row(f"below{i}", np.append(A[i], 1.0), lower=y[i]))
        M = np.hstack([np.eye(2), np.zeros((2, 1))])
        unc.append(Unc(f"above{i}", M, np.zeros(2), ball(2, 0.1)))
        unc.append(Unc(f"below{i}", M, np.zeros(2), ball(2, 0.1)))
    return Case("chebyshev-fit-l2", "RSOME robust regression (Chebyshev fit)", "min", np.array([0.0, 0.0, 1.0]),
                rows, unc, np.array([-INF, -INF, 0.0]), np.full(3, INF))


def cases() -> list[Case]:
    """The battery, in order."""
    n, b = 4, 10.0
    sig = np.array([0.1, 0.2, 0.3, 0.4])
    out = [
        Case("issue-max-box", "issue 50 (RSOME, PyROS, CVXRO take either sense)", "max", np.ones(2),
             [Row("cap", np.array([1.0, 2.0]), upper=4.0)], [Unc("cap", *eye(2), box([-0.5, -0.5], [0.5, 0.5]))],
             *nonneg(2), closed=4 / 1.5, note="x = (4/1.5, 0): the worst case is every coefficient at its top"),
        sum_case("sum-linf-ball", ball(INF, 0.2), b / 1.2, "sigma = r|x|_1 = r 1'x: 1'x = b/(1+r)"),
        sum_case("sum-l2-ball", ball(2, 0.5), b * 2 / (2 + 0.5), "sigma = r|x|_2, x equal: b sqrt(n)/(sqrt(n)+r)"),
        sum_case("sum-l1-ball", ball(1, 0.5), b * n / (n + 0.5), "sigma = r|x|_inf, x equal: bn/(n+r)"),
        sum_case("sum-ellipsoid-diag", ellipsoid(np.diag(sig ** 2)), b / (1 + 1 / np.sqrt((1 / sig ** 2).sum())),
                 "sigma = |diag(s) x|_2, least at x_j ~ 1/s_j^2: b/(1 + r/sqrt(sum 1/s_j^2))"),
        sum_case("sum-ellipsoid-rank1", ellipsoid(np.outer(sig, sig)), b / (1 + 0.1),
                 "S = vv', sigma = |v'x|, v > 0: all on the least v_j: b/(1 + r min v)"),
        sum_case("sum-ellipsoid-rank1-apex", ellipsoid(np.outer([0.3, -0.2, 0.1, -0.4], [0.3, -0.2, 0.1, -0.4])), b,
                 "S = vv', v of both signs: v'x = 0 on the optimal face, the cone at its apex: b"),
        sum_case("sum-budget", budget(np.full(n, 0.2), 1.5), b * n / (n + 0.2 * 1.5),
                 "sigma = d (sum of the Gamma largest x_j), x equal: bn/(n + d Gamma)"),
        sum_case("sum-polyhedron-simplex", polyhedron(np.vstack([-np.eye(n), np.ones((1, n))]),
                                                      np.append(np.zeros(n), 0.4)),
                 b * n / (n + 0.4), "{delta >= 0, 1'delta <= r}: sigma = r max x_j, x equal: bn/(n+r)"),
        sum_case("sum-scenarios-vertices", scenarios(0.4 * np.eye(n)), b * n / (n + 0.4),
                 "scenarios r e_j: sigma = r max x_j: bn/(n+r)"),
        sum_case("sum-factor-model", factor(np.full((n, 3), 0.05), 0.5), b / (1 + 0.05 * 0.5 * 3),
                 "Psi = q 11': Psi'x = q 1'x 1, sigma = q 1'x beta F: b/(1 + q beta F)"),
        sum_case("sum-product-linf-l2", product([ball(INF, 0.3), ball(2, 0.3)], [2, 2]), b / (1 + 0.3 / np.sqrt(2)),
                 "sigma = 0.3|x_(1)|_1 + 0.3|x_(2)|_2: all on the second block, equal: b/(1 + r/sqrt 2)"),
        sum_case("sum-intersection-box-l2", intersection(box(np.full(n, -0.3), np.full(n, 0.3)), ball(2, 0.4)),
                 b * n / (n + 0.8), "x equal: max 1'delta over the box and the ball is min(n 0.3, 0.4 sqrt n) = 0.8"),
        sum_case("sum-intersection-symmetric-budget",
                 intersection(box(np.full(n, -0.2), np.full(n, 0.2)), polyhedron(*l1_polyhedron(n, 0.2 * 1.5))),
                 b * n / (n + 0.2 * 1.5), "Bertsimas-Sim |delta| <= d, |delta|_1 <= d Gamma: x equal, bn/(n+d Gamma)"),
        Case("ge-linf-ball", "RSOME/PyROS set catalogue, a >= row", "min", np.ones(n),
             [Row("cover", np.ones(n), lower=b)], [Unc("cover", *eye(n), ball(INF, 0.2))], *nonneg(n),
             closed=b / 0.8, note="(1 + delta)'x >= b: 1'x - r|x|_1 >= b: 1'x = b/(1-r)"),
        Case("ge-l2-ball", "RSOME/PyROS set catalogue, a >= row", "min", np.ones(n),
             [Row("cover", np.ones(n), lower=b)], [Unc("cover", *eye(n), ball(2, 0.5))], *nonneg(n),
             closed=b / (1 - 0.5 / 2), note="1'x - r|x|_2 >= b, x equal: b/(1 - r/sqrt(n))"),
        Case("ranged-min-free", "a ranged row, free x", "min", np.ones(1),
             [Row("band", np.array([2.0]), lower=1.0, upper=4.0)], [Unc("band", *eye(1), box([-0.5], [0.5]))],
             np.array([-INF]), np.array([INF]), closed=1 / 1.5, note="1 <= (2+d)x <= 4, |d| <= 0.5: x in [2/3, 1.6]"),
        Case("ranged-max-free", "a ranged row, free x", "max", np.ones(1),
             [Row("band", np.array([2.0]), lower=1.0, upper=4.0)], [Unc("band", *eye(1), box([-0.5], [0.5]))],
             np.array([-INF]), np.array([INF]), closed=4 / 2.5, note="as ranged-min-free, the upper side: 1.6"),
        Case("rhs-l2-ball", "an uncertain right-hand side", "max", np.ones(1),
             [Row("limit", np.ones(1), upper=3.0)],
             [Unc("limit", np.zeros((2, 1)), np.array([-0.3, -0.4]), ball(2, 1.0))], np.array([-INF]),
             np.array([INF]), closed=2.5, note="x <= 3 + beta'u, |u|_2 <= 1: 3 - |beta|_2 = 2.5"),
        Case("objective-box-min", "an uncertain objective (minimised)", "min", np.array([3.0, 1.0, 2.0]),
             [Row("simplex", np.ones(3), lower=1.0, upper=1.0)],
             [Unc("obj", *eye(3), box([-0.5, -2.5, -0.2], [0.5, 2.5, 0.2]))], *nonneg(3),
             closed=2.2, note="min over the simplex of (c + h)'x: min_j (c_j + h_j)"),
    ]
    p, s = rsome_portfolio()
    m = len(p)
    out += [
        Case("portfolio-box", "RSOME robust portfolio, box", "max", p, [Row("simplex", np.ones(m), 1.0, 1.0)],
             [Unc("obj", np.diag(s), np.zeros(m), box(-np.ones(m), np.ones(m)))], *nonneg(m),
             closed=float((p - s).max()), note="max over the simplex of (p - sigma)'x: max_j (p_j - sigma_j)"),
        Case("portfolio-symmetric-budget", "RSOME robust portfolio (Bertsimas-Sim), Gamma = 5", "max", p,
             [Row("simplex", np.ones(m), 1.0, 1.0)],
             [Unc("obj", np.vstack([np.diag(s), -np.diag(s)]), np.zeros(2 * m), budget(np.ones(2 * m), 5.0))],
             *nonneg(m), note="{|z| <= 1, |z|_1 <= 5} as z = z+ - z-, (z+, z-) in the budget set of 2n"),
        Case("portfolio-ellipsoid", "RSOME robust portfolio, ellipsoid (l2 ball of radius 1.5)", "max", p,
             [Row("simplex", np.ones(m), 1.0, 1.0)],
             [Unc("obj", np.diag(s), np.zeros(m), ball(2, 1.5))], *nonneg(m), closed=1.15,
             note="p'x - 1.5|sigma x|_2 with p_i - 1.15 and sigma_i^2 both ~ i: by Cauchy-Schwarz the excess is <= 0, "
                  "= 0 at x uniform (1.5 is this data's break-even radius): 1.15"),
    ]
    p8, s8 = p[::19], s[::19]
    k = len(p8)
    L = np.diag(s8) + 0.01 * np.tril(np.ones((k, k)), -1)
    out.append(Case("portfolio-risk-cone-budget", "a nominal SOCP (risk cap) with uncertain returns (budget)", "max",
                    p8, [Row("simplex", np.ones(k), 1.0, 1.0)],
                    [Unc("obj", -np.diag(s8), np.zeros(k), budget(np.ones(k), 2.0))], *nonneg(k),
                    cones=[Cone("risk", L.T, np.zeros(k), np.zeros(k), 0.12)]))
    c, w, wh, cap = knapsack()
    N = len(c)
    out += [
        Case("knapsack-box", "RSOME robust knapsack (LP relaxation), box", "max", c,
             [Row("weight", w, upper=cap)], [Unc("weight", np.diag(wh), np.zeros(N), box(-np.ones(N), np.ones(N)))],
             np.zeros(N), np.ones(N), closed=greedy_knapsack(c, w + wh, cap),
             note="0 <= x: the worst weights w + w_hat; Dantzig's greedy"),
        Case("knapsack-budget", "RSOME robust knapsack (LP relaxation), budget Gamma = 4", "max", c,
             [Row("weight", w, upper=cap)], [Unc("weight", np.eye(N), np.zeros(N), budget(wh, 4.0))],
             np.zeros(N), np.ones(N)),
        Case("knapsack-ellipsoid", "RSOME robust knapsack (LP relaxation), ellipsoid", "max", c,
             [Row("weight", w, upper=cap)], [Unc("weight", np.eye(N), np.zeros(N), ellipsoid(np.diag(wh ** 2), 2.0))],
             np.zeros(N), np.ones(N)),
        production(lambda k: box(-0.1 * HOURS[k], 0.1 * HOURS[k]), "production-box"),
        production(lambda k: ellipsoid(np.diag((0.1 * HOURS[k]) ** 2)), "production-ellipsoid"),
        production(lambda k: budget(0.1 * HOURS[k], 1.5), "production-budget"),
        production(lambda k: ellipsoid(np.eye(3)), "production-joint-ellipsoid", joint=True),
        production(lambda k: budget(np.ones(3), 1.5), "production-joint-budget", joint=True),
    ]
    A8 = np.array([[0.2, 0.0], [0.0, 0.3], [0.1, 0.1]])
    beta = np.array([2.0, 0.0])
    rows = [Row(f"machine{k}", HOURS[k], upper=CAPACITY[k]) for k in range(3)]
    out.append(Case("production-affine-l2-rhs", "docs/robustify.md section 8: (a0 + A u)'x <= b + beta'u", "max",
                    PROFIT, rows, [Unc("machine2", A8.T, -beta, ball(2, 1.0))], *nonneg(3)))
    out.append(Case("production-dense-ellipsoid", "production plan, one dense ellipsoid a row", "max", PROFIT,
                    [Row(f"machine{k}", HOURS[k], upper=CAPACITY[k]) for k in range(3)],
                    [Unc(f"machine{k}", np.eye(3), np.zeros(3),
                         ellipsoid(0.01 * (np.diag(HOURS[k] ** 2) + 0.5 * np.outer(HOURS[k], HOURS[k])), 1.0))
                     for k in range(3)], *nonneg(3)))
    rng_free = np.array([[1.0, -1.0, 0.5], [0.5, 1.0, -1.0], [-1.0, 0.5, 1.0], [0.3, 0.3, 0.3]])
    out.append(Case("scenarios-factor-mixed", "PyROS DiscreteScenarioSet and FactorModelSet, one row each", "min",
                    np.array([-1.0, -2.0, -1.5]),
                    [Row("r0", np.array([1.0, 1.0, 1.0]), upper=6.0), Row("r1", np.array([1.0, 2.0, 0.5]), upper=8.0)],
                    [Unc("r0", *eye(3), scenarios(0.2 * rng_free)),
                     Unc("r1", *eye(3), factor(0.1 * rng_free[:3, :2], 0.5))],
                    np.zeros(3), np.full(3, 5.0)))
    out += [inventory(), chebyshev_fit()]
    return out


def case(name: str) -> Case:
    for c in cases():
        if c.name == name:
            return c
    raise KeyError(name)


# --------------------------------------------------------------------------- the library's side


def library_set(spec: SetSpec) -> Any:
    """The ``tpm_models`` set of ``spec``."""
    from tpm_models.models.composite_sets import CartesianProduct, FactorModel, Intersection, Scenarios
    from tpm_models.models.uncertainty import Box, Budget, Ellipsoid, NormBall, Polyhedron

    q = spec.params
    if spec.kind == "box":
        return Box(tuple(q["lower"]), tuple(q["upper"]))
    if spec.kind == "ball":
        return NormBall(q["p"], q["r"])
    if spec.kind == "ellipsoid":
        return Ellipsoid(q["S"].tolist(), q["r"])
    if spec.kind == "budget":
        return Budget(tuple(q["d"]), q["gamma"])
    if spec.kind == "polyhedron":
        return Polyhedron(q["A"].tolist(), q["b"].tolist())
    if spec.kind == "scenarios":
        return Scenarios(q["P"].tolist())
    if spec.kind == "factor":
        return FactorModel(q["psi"].tolist(), q["beta"])
    if spec.kind == "intersection":
        return Intersection([library_set(m) for m in spec.members])
    if spec.kind == "product":
        return CartesianProduct([library_set(m) for m in spec.members], list(q["sizes"]))
    raise ValueError(spec.kind)


def pyomo_model(case: Case) -> tuple[Any, list]:
    """The nominal Pyomo model of ``case`` and its declarations (``UncertainRow``/``UncertainTerm``)."""
    import pyomo.environ as pyo

    from tpm_models.models.uncertainty import UncertainRow, UncertainTerm

    n = case.n
    m = pyo.ConcreteModel(case.name)
    m.J = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.J, bounds=lambda _, j: (None if np.isinf(case.lb[j]) else float(case.lb[j]),
                                            None if np.isinf(case.ub[j]) else float(case.ub[j])))

    def affine(a: np.ndarray, a0: float = 0.0) -> Any:
        return sum(float(a[j]) * m.x[j] for j in range(n) if a[j] != 0) + float(a0)

    m.obj = pyo.Objective(expr=affine(case.c), sense=pyo.maximize if case.sense == "max" else pyo.minimize)
    for r in case.rows:
        if r.lower is not None and r.lower == r.upper:
            m.add_component(r.name, pyo.Constraint(expr=affine(r.a) == float(r.lower)))
        else:
            m.add_component(r.name, pyo.Constraint(expr=(r.lower, affine(r.a), r.upper)))
    for cone in case.cones:  # ||G x + g0|| <= h'x + h0 on new variables: y = G x + g0, t = h'x + h0
        k = len(cone.g0)
        y = pyo.Var(range(k))
        t = pyo.Var(domain=pyo.NonNegativeReals)
        m.add_component(f"{cone.name}_y", y)
        m.add_component(f"{cone.name}_t", t)
        y_def = pyo.ConstraintList()
        m.add_component(f"{cone.name}_y_def", y_def)
        for i in range(k):
            y_def.add(y[i] == affine(cone.G[i], cone.g0[i]))
        m.add_component(f"{cone.name}_t_def", pyo.Constraint(expr=t == affine(cone.h, cone.h0)))
        m.add_component(cone.name, pyo.Constraint(expr=sum(y[i] ** 2 for i in range(k)) <= t ** 2))
    shared: dict = {}
    declared: list = []
    for u in case.uncertain:
        if np.array_equal(u.M, np.eye(n)) and not np.any(u.m0):
            coefficients: list = [m.x[j] for j in m.J]
        else:
            coefficients = [affine(u.M[q], u.m0[q]) if np.any(u.M[q]) else float(u.m0[q]) for q in range(len(u.m0))]
        key = u.group or id(u)
        if key not in shared:
            shared[key] = library_set(u.uset)
        if u.target == "obj":
            declared.append(UncertainTerm(coefficients, shared[key]))
        else:
            declared.append(UncertainRow(m.component(u.target), coefficients, shared[key]))
    return m, declared
