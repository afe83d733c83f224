"""Max-voting and max-distance (tpm_models.experiments.decisions) against independent truths: the binary duals (4)/(5),
(12)/(13) built in Pyomo, solved by PIQP and recovered by (6)/(7); the rules written out with
estimators.TPMSVM per pair / per class; solving every alpha (errata 7) and every gamma (errata 10); the engine's
counts of one grid point against that pipeline; the tables that report them."""

import numpy as np
import pytest

from tpm_models import Kernel, load_dataset, min_max_scale, solve
from tpm_models.experiments.decisions import (
    RULES,
    MaxDistanceTPMSVM,
    OneVsOneTPMSVM,
    decision_grid_counts,
    fit_binary,
    fit_rule,
)
from tpm_models.experiments.table3 import (
    ALL_CELLS,
    ALPHAS,
    DECISIONS,
    KERNEL_PARAMS,
    RATIOS,
    Protocol,
    SplitTask,
    config_of,
    cv_folds,
    cv_seed,
    dataset_arrays,
    expand,
    print_summary,
    run_split,
    run_table3,
    split_indices,
    write_table3,
)
from tpm_models.learn.estimators import TPMSVM
from tpm_models.models.binary import (
    build_dual_4,
    build_dual_5,
    build_dual_12,
    build_dual_13,
    decision_8,
    recover_minus,
    recover_plus,
)


def _task(dataset, cell, split, protocol):
    X, y, sha = dataset_arrays(dataset)
    return SplitTask(dataset, cell, split, protocol, X, y, config_of(sha, ALL_CELLS[cell], protocol))


def _params(kernel: Kernel) -> dict:
    return {k: getattr(kernel, k) for k in ("degree", "gamma", "sigma") if getattr(kernel, k) is not None}


# ----------------------------------------------------------------- the binary planes against the Pyomo duals


@pytest.mark.parametrize("kernel", [Kernel(), Kernel("gaussian", sigma=0.5), Kernel("hom-poly", degree=2)])
@pytest.mark.parametrize("nu, alpha", [(0.3, 1.0), (0.5, 1.0), (1.8, 2.0)])  # 0.5: theta from the KKT midpoint
def test_binary_planes_equal_pyomo_duals_4_5_and_recovery_6_7(kernel, nu, alpha):
    """H+ and H- of the fast path (two (19)-type QPs, the mirror identity) = (4)/(5) or (12)/(13) by PIQP and
    (6)/(7): lambda, theta, <w, phi(x)>, and the value of (8)/(14); for a pair and for a class against the rest."""
    X, y, _ = dataset_arrays("iris")
    for plus_class, minus_classes in ((1, (2,)), (0, (1, 2))):
        sel = np.flatnonzero(np.isin(y, (plus_class, *minus_classes)))
        Xs, ys = X[sel], np.where(y[sel] == plus_class, 1, -1)
        K = kernel.gram(Xs, Xs)
        b, qps = fit_binary(K, np.flatnonzero(ys == 1), np.flatnonzero(ys == -1), [nu], [alpha])
        assert qps == 2
        if kernel.name == "linear":
            duals = build_dual_4(Xs, ys, nu, alpha), build_dual_5(Xs, ys, nu, alpha)
        else:
            duals = build_dual_12(Xs, ys, nu, alpha, kernel=kernel), build_dual_13(Xs, ys, nu, alpha, kernel=kernel)
        lam_p, lam_m = (solve(m, "piqp").values["lam"] for m in duals)
        h_plus = recover_plus(Xs, ys, lam_p, nu, alpha, kernel)
        h_minus = recover_minus(Xs, ys, lam_m, nu, alpha, kernel)
        np.testing.assert_allclose(b.lam_plus[:, 0], h_plus.lam, atol=1e-8)
        np.testing.assert_allclose(b.lam_minus[:, 0], h_minus.lam, atol=1e-8)
        assert abs(b.theta_plus[0] - h_plus.theta) < 1e-8 and abs(b.theta_minus[0] - h_minus.theta) < 1e-8
        np.testing.assert_allclose(b.plus.w_phi(K)[:, 0], h_plus.w_phi(Xs), atol=1e-8)
        np.testing.assert_allclose(b.w_phi_minus(K)[:, 0], h_minus.w_phi(Xs), atol=1e-8)
        assert abs(np.sqrt(b.mirror.w_w[0]) - h_minus.norm_w) < 1e-8
        np.testing.assert_allclose(b.decision(K)[:, 0], decision_8(h_plus, h_minus, Xs), atol=1e-7)


def test_swapping_the_classes_negates_8():
    """The mirror identity in the Pyomo pipeline: TPMSVM with X+ and X- swapped gives minus the value of (8)."""
    X, y, _ = dataset_arrays("wine")
    sel = np.flatnonzero(y != 2)
    a = TPMSVM(nu=0.3, solver="piqp").fit(X[sel], np.where(y[sel] == 0, 1, -1)).decision_function(X)
    b = TPMSVM(nu=0.3, solver="piqp").fit(X[sel], np.where(y[sel] == 0, -1, 1)).decision_function(X)
    np.testing.assert_allclose(a, -b, atol=1e-7)


# ----------------------------------------------------------------- the rules against TPMSVM per pair / class


def _pipeline_predict(rule, X_train, y_train, X_test, nu, alpha, kernel):
    """The rule written out with estimators.TPMSVM (Pyomo, PIQP), one point at a time."""
    n_classes = int(y_train.max()) + 1
    params = {"nu": nu, "alpha": alpha, "kernel": kernel.name, "solver": "piqp", **_params(kernel)}
    if rule == "ovr-maxdist":
        g = np.column_stack([TPMSVM(**params).fit(X_train, np.where(y_train == c, 1, -1)).decision_function(X_test)
                             for c in range(n_classes)])
        return np.array([int(np.argmax(row)) for row in g])
    votes = np.zeros((len(X_test), n_classes), dtype=int)
    scores = np.zeros((len(X_test), n_classes))
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            pair = (y_train == i) | (y_train == j)
            clf = TPMSVM(**params).fit(X_train[pair], np.where(y_train[pair] == i, 1, -1))  # X+ = class i
            g = clf.decision_function(X_test)
            assert np.array_equal(clf.predict(X_test) == 1, g >= 0)
            votes[:, i] += g >= 0
            votes[:, j] += g < 0
            scores[:, i] += g
            scores[:, j] -= g
    out = []
    for v, s in zip(votes, scores):
        tied = [c for c in range(n_classes) if v[c] == v.max()]
        best = max(s[c] for c in tied)
        out.append(min(c for c in tied if s[c] == best))
    return np.array(out)


@pytest.mark.parametrize("dataset, kernel, nu", [
    ("iris", Kernel(), 0.5), ("iris", Kernel("gaussian", sigma=2.0**-1), 0.3),
    ("wine", Kernel(), 0.1), ("wine", Kernel("inhom-poly", degree=2, gamma=2.0), 0.7),
])
def test_rules_equal_tpmsvm_per_pair_and_per_class(dataset, kernel, nu):
    """Predictions on the test split and on random points of the feature box (where the one-versus-one votes of
    Wine tie 1-1-1 a few times in 1000, so the tie rule is exercised)."""
    X, y, _ = dataset_arrays(dataset)
    train, test = split_indices(y, 3, Protocol())
    Z = np.vstack([X[test], np.random.default_rng(7).uniform(0.0, 1.0, (1000, X.shape[1]))])
    alpha = 2.0
    ovo = OneVsOneTPMSVM(nu=nu * alpha, alpha=alpha, kernel=kernel).fit(X[train], y[train])
    ovr = MaxDistanceTPMSVM(nu=nu * alpha, alpha=alpha, kernel=kernel).fit(X[train], y[train])
    for clf in (ovo, ovr):
        expected = _pipeline_predict(clf.rule, X[train], y[train], Z, nu * alpha, alpha, kernel)
        assert np.array_equal(clf.predict(Z), expected), clf.rule
    votes, scores = ovo.votes(Z)
    assert (votes.sum(1) == 3).all() and np.allclose(scores.sum(1), 0.0)
    if dataset == "wine" and kernel.name == "linear":
        assert (votes.max(1) == 1).sum() >= 3  # ties decided by the scores
    assert ovr.decision_function(Z).shape == (len(Z), 3)


def test_classifiers_take_any_labels_and_check_them():
    d = load_dataset("iris")
    X = min_max_scale(d.X)
    clf = OneVsOneTPMSVM(nu=0.3).fit(X, d.classes[d.y])
    assert set(clf.predict(X)) <= set(d.classes) and (clf.predict(X) == d.classes[d.y]).mean() > 0.9
    with pytest.raises(ValueError, match="at least two classes"):
        MaxDistanceTPMSVM().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="nu = 2"):
        OneVsOneTPMSVM(nu=2.0, alpha=1.0)
    with pytest.raises(ValueError, match="unknown decision rule"):
        fit_rule("vote", np.eye(2), np.arange(2), np.array([0, 1]), 2, [0.5], [1.0])


# ----------------------------------------------------------------- errata 7 and 10 hold for the rules


@pytest.mark.parametrize("rule", RULES)
def test_errata_7_every_alpha_gives_the_same_counts_and_values(rule):
    """One split, every one of the 17 alpha solved (training, test and 5-fold CV counts), and the rules' values
    themselves: invariant to alpha at fixed nu/alpha."""
    X, y, _ = dataset_arrays("wine")
    train, test = split_indices(y, 0, Protocol())
    folds = cv_folds(y, train, 5, cv_seed(0, 0))
    for kernel in (Kernel(), Kernel("gaussian", sigma=1.0)):
        full = decision_grid_counts(X, y, train, test, kernel, ALPHAS, RATIOS, folds=folds, rule=rule)
        one = decision_grid_counts(X, y, train, test, kernel, (1.0,), RATIOS, folds=folds, rule=rule)
        for part in ("train", "test", "cv"):
            assert np.array_equal(getattr(full, part), np.broadcast_to(getattr(one, part), (len(ALPHAS), 9)))
        assert full.qps == len(ALPHAS) * one.qps
    K = Kernel().gram(X, X)
    fitted = fit_rule(rule, K, train, y[train], 3, [0.3 * a for a in ALPHAS], ALPHAS)
    values = fitted.votes(K)[1] if rule == "ovo-vote" else fitted.values(K)
    np.testing.assert_allclose(values, np.broadcast_to(values[:, 8:9, :], values.shape), atol=1e-6)


def test_engine_solves_every_alpha_without_shortcuts_and_inhom_linear_is_linear():
    """run_split with shortcuts off (17 alpha, every gamma) = with them on; errata 10 for gamma in the grid."""
    for cell in ("vote-gaussian", "maxdist-linear", "vote-inhom-linear"):
        short = run_split(_task("iris", cell, 2, Protocol()))["result"]
        full = run_split(_task("iris", cell, 2, Protocol(shortcuts=False)))["result"]
        assert len(full["alphas_solved"]) == len(ALPHAS) and len(short["alphas_solved"]) == 1
        for a, b in zip(expand(short), expand(full)):
            assert np.array_equal(a, b), cell
    assert short["derived"].startswith("errata 10")
    X, y, _ = dataset_arrays("wine")
    train, test = split_indices(y, 1, Protocol())
    for rule in RULES:
        linear = decision_grid_counts(X, y, train, test, Kernel(), ALPHAS[::8], RATIOS, rule=rule)
        for gamma in KERNEL_PARAMS[::4]:
            inhom = decision_grid_counts(X, y, train, test, Kernel("inhom-poly", degree=1, gamma=gamma), ALPHAS[::8],
                                         RATIOS, rule=rule)
            assert np.array_equal(inhom.train, linear.train) and np.array_equal(inhom.test, linear.test)


# ----------------------------------------------------------------- the engine against the pipeline


@pytest.mark.parametrize("cell, ratio, param", [("vote-gaussian", 0.3, 2.0**-1), ("maxdist-linear", 0.5, None)])
def test_engine_counts_equal_tpmsvm_pipeline(cell, ratio, param):
    """Training, test and 5-fold CV counts of one grid point (alpha = 4: errata 7) of run_split's record."""
    protocol = Protocol(cv_folds=5)
    rec = run_split(_task("iris", cell, 1, protocol))["result"]
    X, y, _ = dataset_arrays("iris")
    train, test = split_indices(y, 1, protocol)
    kernel = ALL_CELLS[cell].kernels()[KERNEL_PARAMS.index(param) if param else 0]
    alpha = 4.0
    pred = _pipeline_predict(ALL_CELLS[cell].family, X[train], y[train], X, ratio * alpha, alpha, kernel)
    a, r, p = ALPHAS.index(alpha), RATIOS.index(ratio), (KERNEL_PARAMS.index(param) if param else 0)
    tr, te = expand(rec)
    assert tr[a, r, p] == int((pred[train] == y[train]).sum())
    assert te[a, r, p] == int((pred[test] == y[test]).sum())
    cv = 0
    for fit, held_out in cv_folds(y, train, 5, cv_seed(protocol.seed, 1)):
        cv += int((_pipeline_predict(ALL_CELLS[cell].family, X[fit], y[fit], X[held_out], ratio * alpha, alpha,
                                     kernel) == y[held_out]).sum())
    assert np.asarray(rec["cv_correct"])[0, r, p] == cv


# ----------------------------------------------------------------- the tables


def test_tables_report_the_rules_beside_18(tmp_path, capsys):
    """The cells exist for every kernel cell; the markdown has their section and paired differences against the
    (18) cell of the same kernel; the link to experiments.md is right one folder deeper inside docs/."""
    assert len(DECISIONS) == 14 and {c.family for c in DECISIONS.values()} == set(RULES)
    run = run_table3(["iris"], ["linear", "vote-linear", "maxdist-linear"], runs=3, protocol=Protocol(cv_folds=3),
                     progress=False)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "experiments.md").write_text("# Experiments\n")
    out = tmp_path / "docs" / "results" / "decisions"
    summaries = write_table3(run, out, "tpm-models table3 ...")
    text = (out / "table3.md").read_text()
    assert "[experiments.md](../../experiments.md)" in text
    assert "## Other decision functions on the same splits" in text
    lin = next(s for s in summaries if s.cell == "linear")
    for s in summaries[1:]:
        d = np.array(s.acc["cv"]) - np.array(lin.acc["cv"])
        row = next(line for line in text.split("\n") if line.startswith(f"| iris | {ALL_CELLS[s.cell].label} |")
                   and "±" in line and line.count("|") == 5)
        assert f"{d.mean():+.2f}" in row
    print_summary(summaries, selection="cv")
    assert capsys.readouterr().out.count("not in paper") == 2
    write_table3(run, tmp_path / "elsewhere", "tpm-models table3 ...")
    assert "[experiments.md](../experiments.md)" in (tmp_path / "elsewhere" / "table3.md").read_text()
