"""Robust experiments: (23) by Clarabel's dense path against the registry's builders, eps = 0 against the
deterministic fast path, the exact worst-case attack against random and constructed perturbations, and the report
writers that share ``robust.md`` between two commands."""

import math

import numpy as np
import pytest

from tpm_models import build, solve, stratified_split
from tpm_models.experiments.robust import (
    attack_values,
    degenerate_planes,
    fit_linear_23,
    predict,
    robust_correct,
    run_robust_split,
    summarize_robust,
)
from tpm_models.experiments.robust_report import KERNEL_END, KERNEL_START, write_robust_table
from tpm_models.learn.fastqp import FastOneVsAll


@pytest.mark.parametrize("p, eq", [(1.0, 27), (2.0, 28), (math.inf, 29)])
def test_fit_23_equals_registry_socp(iris, p, eq):
    X, y = iris
    (W, _), = fit_linear_23(X, y, 3, [0.3], p, 0.05)
    for c in range(3):
        w = solve(build(eq, X, y, c, 0.3, 1.0, eps=0.05)).values["w"]  # default SOCP solver (Ipopt)
        assert np.max(np.abs(W[c] - w)) <= 1e-5, (p, c)


def test_eps_zero_is_the_deterministic_model(wine):
    X, y = wine
    train, test = stratified_split(y, 3)
    for ratio in (0.2, 0.5):
        (W, T), = fit_linear_23(X[train], y[train], 3, [ratio], 2.0, 0.0)
        fast = FastOneVsAll(ratio, 1.0).fit(X[train], y[train])
        d = fast.distances(X[test])
        clear = np.sort(d, axis=1)[:, 1] - np.sort(d, axis=1)[:, 0] > 1e-6
        pred = predict(W, T, X[test], degenerate_planes(W, ratio, X[train]))
        assert np.array_equal(pred[clear], d.argmin(axis=1)[clear])
        assert clear.mean() > 0.95


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_attack_is_exact(iris, p):
    """No random perturbation in the ball moves a point declared robust; for p = 2 the witness moves every
    point declared attackable."""
    X, y = iris
    train, test = stratified_split(y, 0)
    eps = 0.08
    (W, T), = fit_linear_23(X[train], y[train], 3, [0.4], 2.0, 0.0)
    deg = degenerate_planes(W, 0.4, X[train])
    Xt, yt = X[test], y[test]
    values, deltas = attack_values(W, T, Xt, yt, p, eps, deg, witness=True)
    robust = robust_correct(W, T, Xt, yt, p, eps, 0.4, X[train])
    clean = predict(W, T, Xt, deg) == yt
    assert 0 < robust.sum() < clean.sum()  # the attack matters, and not everywhere
    rng = np.random.default_rng(7)
    for _ in range(300):
        d = rng.normal(size=Xt.shape)
        if p == 1.0:
            d = d * (rng.random(Xt.shape) < 0.3)
        norms = np.linalg.norm(d, ord=p, axis=1)
        d = eps * d / np.where(norms > 0, norms, 1.0)[:, None] * rng.uniform(0.5, 1.0, (len(d), 1)) ** 0.1
        moved = predict(W, T, Xt + d, deg) != yt
        assert not np.any(moved & robust)
    if p == 2.0:
        attackable = clean & (values < -1e-9)
        assert attackable.any()
        assert np.all(np.linalg.norm(deltas[attackable], axis=1) <= eps * (1 + 1e-12))
        assert np.all(predict(W, T, Xt[attackable] + deltas[attackable], deg) != yt[attackable])


def test_robust_split_and_summary():
    rec = run_robust_split("iris", 0, [2.0], [0.05])
    assert set(rec["models"]) == {"det", "p=2,eps=0.05"}
    for m in rec["models"].values():
        assert len(m["train"]) == 9 and all(a <= b for a, b in zip(m["attacked"]["p=2,eps=0.05"], m["test"]))
    (row,) = summarize_robust([rec])
    assert row["dataset"] == "iris" and row["p"] == "2" and row["eps"] == 0.05
    assert row["robust attacked mean"] <= row["robust clean mean"]
    with pytest.raises(ValueError, match="p must be"):
        fit_linear_23(np.eye(3), np.array([0, 1, 2]), 3, [0.5], 0.5, 0.1)


def test_robust_table_keeps_the_kernel_section_and_the_discussion(tmp_path):
    """``robust-table`` rewrites its table in ``robust.md`` and keeps what it did not write: the (23K) section of
    ``robust-kernel-table`` and the hand-written discussion."""
    rec = run_robust_split("iris", 0, [1.0], [0.05])
    rows = summarize_robust([rec])
    records_path = tmp_path / "runs" / "records.json"
    write_robust_table(tmp_path, rows, [rec], "tpm-models robust-table A", {"date": "d"}, records_path)
    md = tmp_path / "robust.md"
    section = f"{KERNEL_START}\n## Robust kernel model (23K)\nkernel rows\n{KERNEL_END}"
    md.write_text(md.read_text().replace("(not written yet)", "Our words.").replace(
        "\n## Discussion\n", f"\n{section}\n\n## Discussion\n"))
    written = write_robust_table(tmp_path, rows, [rec], "tpm-models robust-table B", {"date": "d"}, records_path)
    text = md.read_text()
    assert written == [md, tmp_path / "robust.json"]
    assert "`tpm-models robust-table B`" in text and "robust-table A" not in text
    assert text.count(section) == 1 and "Our words." in text and text.index(section) < text.index("## Discussion")
    assert f"| iris | 1 | 0.05 | {rows[0]['robust clean mean']:.2f} ± " in text
    assert records_path.exists()
