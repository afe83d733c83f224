"""The Section 5 engine (tpm_models.experiments): against the Pyomo pipeline, the errata-7/10 shortcuts against
solving everything, the tie rules, the results store (interrupt and resume), joblib and Dask, the CLI."""

import json
import logging
import math
import shlex

import numpy as np
import pytest

from tpm_models import Kernel, solve
from tpm_models.cli import main
from tpm_models.experiments.table3 import (
    ALL_CELLS,
    ALPHAS,
    CELLS,
    KERNEL_PARAMS,
    PAPER_TABLE3,
    RATIOS,
    SEED,
    Protocol,
    SplitTask,
    Table3Store,
    config_of,
    cv_folds,
    cv_seed,
    dask_backend,
    dataset_arrays,
    expand,
    grid_counts,
    run_split,
    run_table3,
    select,
    split_indices,
    summarize,
    svc_counts,
    write_table3,
)
from tpm_models.experiments.table3.report import paired_difference
from tpm_models.models.multiclass import build_dual_19, predict_18, recover_17


def _task(dataset, cell, split, protocol):
    X, y, sha = dataset_arrays(dataset)
    return SplitTask(dataset, cell, split, protocol, X, y, config_of(sha, ALL_CELLS[cell], protocol))


def _results(run):
    """The deterministic part of every record (timings differ between runs)."""
    return {k: v["result"] for k, v in run.records.items()}


# ----------------------------------------------------------------- against the Pyomo pipeline


@pytest.mark.parametrize("dataset, cell, ratio, param", [
    ("iris", "linear", 0.5, None),  # nu*m_c/alpha an integer for 38 points: theta from the KKT-interval midpoint
    ("iris", "gaussian", 0.3, 2.0**-2),
    ("wine", "inhom-quadratic", 0.9, 2.0**2),
    ("wine", "hom-cubic", 0.1, None),
])
def test_split_counts_equal_pyomo_pipeline(dataset, cell, ratio, param):
    """Correct training and test predictions of one grid point: build_dual_19 + PIQP + recover_17 + predict_18."""
    protocol = Protocol()
    rec = run_split(_task(dataset, cell, 1, protocol))["result"]
    X, y, _ = dataset_arrays(dataset)
    train, test = split_indices(y, 1, protocol)
    kernel = CELLS[cell].kernels()[KERNEL_PARAMS.index(param) if param else 0]
    alpha = 4.0  # any alpha of the grid (errata 7); the engine solved alpha = 1
    planes = [recover_17(X[train], y[train], c, solve(build_dual_19(X[train], y[train], c, ratio * alpha, alpha,
                                                                    kernel=kernel), "piqp").values["lam"],
                         ratio * alpha, alpha, kernel) for c in range(3)]
    pred = predict_18(planes, X)
    tr, te = expand(rec)
    a, r, p = ALPHAS.index(alpha), RATIOS.index(ratio), (KERNEL_PARAMS.index(param) if param else 0)
    assert tr[a, r, p] == int((pred[train] == y[train]).sum())
    assert te[a, r, p] == int((pred[test] == y[test]).sum())
    assert rec["n_train"] + rec["n_test"] == len(y) and rec["n_test"] == math.ceil(0.25 * len(y))  # sklearn's rounding


# ----------------------------------------------------------------- errata 7 and 10: solving less changes nothing


@pytest.mark.parametrize("dataset, cell", [("iris", "linear"), ("iris", "gaussian"), ("wine", "hom-quadratic")])
def test_errata_7_one_alpha_gives_every_alphas_accuracies(dataset, cell):
    """Full grid, every one of the 17 alpha solved: the same training and test accuracies as alpha = 1 alone."""
    for split in (0, 1):
        short = run_split(_task(dataset, cell, split, Protocol(shortcuts=True)))["result"]
        full = run_split(_task(dataset, cell, split, Protocol(shortcuts=False)))["result"]
        assert len(short["alphas_solved"]) == 1 and len(full["alphas_solved"]) == len(ALPHAS)
        assert full["qps"] == len(ALPHAS) * short["qps"]
        for a, b in zip(expand(short), expand(full)):
            assert np.array_equal(a, b)
        for rule in ("first", "last"):
            assert select(short, rule).test_acc == select(full, rule).test_acc


def test_errata_10_inhomogeneous_linear_is_linear():
    """Every gamma of (gamma + x'x') solved: the accuracies of the linear kernel, for every (alpha, nu/alpha)."""
    for dataset in ("iris", "wine"):
        X, y, _ = dataset_arrays(dataset)
        for split in (0, 1, 2):
            train, test = split_indices(y, split, Protocol())
            linear = grid_counts(X, y, train, test, Kernel("linear"), ALPHAS[::4], RATIOS)
            for gamma in KERNEL_PARAMS:
                inhom = grid_counts(X, y, train, test, Kernel("inhom-poly", degree=1, gamma=gamma), ALPHAS[::4], RATIOS)
                assert np.array_equal(inhom.train, linear.train) and np.array_equal(inhom.test, linear.test), gamma
    short = run_split(_task("wine", "inhom-linear", 0, Protocol()))["result"]
    lin = run_split(_task("wine", "linear", 0, Protocol()))["result"]
    assert short["derived"].startswith("errata 10")
    assert np.array_equal(expand(short)[1], np.repeat(expand(lin)[1], len(KERNEL_PARAMS), axis=-1))


# ----------------------------------------------------------------- tie rules


def test_tie_rules_and_grid_order():
    rec = {"n_train": 10, "n_test": 4,
           "train_correct": np.zeros((1, len(RATIOS), 2), int).tolist(),
           "test_correct": np.zeros((1, len(RATIOS), 2), int).tolist()}
    tr, te = np.array(rec["train_correct"]), np.array(rec["test_correct"])
    tr[0, 2, 1] = tr[0, 5, 0] = 9  # two configurations tie at the best training accuracy
    te[0, 2, 1], te[0, 5, 0] = 1, 3
    rec["train_correct"], rec["test_correct"] = tr.tolist(), te.tolist()
    first, last = select(rec, "first"), select(rec, "last")
    # alpha is the outer loop: the first tie is at the smallest alpha, the last at the largest
    assert first.index == (0, 2, 1) and first.test_acc == 25.0 and first.train_acc == 90.0
    assert last.index == (len(ALPHAS) - 1, 5, 0) and last.test_acc == 75.0
    assert first.n_tied == 2 * len(ALPHAS)
    with pytest.raises(ValueError, match="tie rule"):
        select(rec, "random")


# ----------------------------------------------------------------- the store: interrupt and resume


def test_interrupt_and_resume_equals_fresh_run(tmp_path, caplog):
    store = tmp_path / "t3.jsonl"
    cells = ["linear", "inhom-quadratic"]
    first = run_table3(["iris"], cells, runs=3, store=store, progress=False)
    assert first.computed == 6 and first.reused == 0
    lines = store.read_text().splitlines()
    assert len(lines) == 6
    # interrupted while writing the last record: half a line, no newline
    store.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    lost = tuple(json.loads(lines[-1])["key"])
    # and a record whose content no longer matches its checksum
    bad = json.loads(lines[0])
    bad["result"]["test_correct"][0][0][0] += 1
    store.write_text("\n".join([json.dumps(bad)] + lines[1:-1]) + "\n" + lines[-1][:40])
    damaged = tuple(bad["key"])
    with pytest.raises(ValueError, match="exists"):
        run_table3(["iris"], cells, runs=5, store=store, progress=False)
    with caplog.at_level(logging.WARNING, logger="tpm_models"):
        resumed = run_table3(["iris"], cells, runs=5, store=store, resume=True, progress=False)
    assert resumed.corrupt == 2 and "2 corrupt" in caplog.text
    assert resumed.reused == 4 and resumed.computed == 2 * 2 + 2  # 2 new splits per cell + the 2 damaged
    fresh = run_table3(["iris"], cells, runs=5, progress=False)
    assert _results(resumed) == _results(fresh)
    records, corrupt = Table3Store(store).read()
    assert corrupt == 0 and len(records) == 10 and {lost, damaged} <= {tuple(r["key"]) for r in records}
    again = run_table3(["iris"], cells, runs=5, store=store, resume=True, progress=False)
    assert again.computed == 0 and again.reused == 10 and _results(again) == _results(fresh)
    # another configuration (seed) is never taken from the store
    other = run_table3(["iris"], ["linear"], runs=2, protocol=Protocol(seed=7), store=store, resume=True,
                       progress=False)
    assert other.computed == 2 and other.stale == 2


# ----------------------------------------------------------------- parallel: joblib processes and Dask


def test_joblib_processes_and_dask_give_the_serial_results():
    kw = {"datasets": ["iris", "wine"], "cells": ["linear", "gaussian"], "runs": 2, "progress": False}
    serial = run_table3(n_jobs=1, **kw)
    loky = run_table3(n_jobs=2, **kw)
    assert _results(loky) == _results(serial)
    assert len({r["timing"]["pid"] for r in loky.records.values()}) >= 1
    with dask_backend("local", n_workers=2, processes=False) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        dask = run_table3(n_jobs=None, **kw)
    assert _results(dask) == _results(serial)


# ----------------------------------------------------------------- the table and the CLI


def test_paper_table_3_as_printed():
    assert len(PAPER_TABLE3) == 14 and set(CELLS) == {c for _, c in PAPER_TABLE3}
    assert PAPER_TABLE3[("iris", "linear")] == (92.08, 3.71, 101.27)
    assert PAPER_TABLE3[("iris", "gaussian")] == (90.70, 4.71, 13051.45)
    assert PAPER_TABLE3[("wine", "inhom-quadratic")] == (96.35, 2.24, 19982.60)
    assert PAPER_TABLE3[("wine", "gaussian")] == (None, None, None)


def test_table3_files_keep_the_discussion(tmp_path):
    run = run_table3(["iris"], ["linear", "inhom-linear"], runs=3, progress=False)
    summaries = write_table3(run, tmp_path, "cmd", {"load": "x"})
    lin, inh = summaries
    assert lin.mean == inh.mean and lin.std == inh.std  # errata 10
    accs = [select(run.records[("iris", "linear", s)]["result"]).test_acc for s in range(3)]
    assert lin.mean["first"] == pytest.approx(np.mean(accs), abs=1e-12)
    assert lin.std["first"] == pytest.approx(np.std(accs, ddof=1), abs=1e-12)
    md = (tmp_path / "table3.md").read_text()
    assert "92.08 ± 3.71" in md and "`cmd`" in md
    text = md.replace("(not written yet)", "Our words.")
    (tmp_path / "table3.md").write_text(text)
    write_table3(run, tmp_path, "cmd2", {})
    assert "Our words." in (tmp_path / "table3.md").read_text()
    rows = (tmp_path / "table3.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("dataset,kernel,runs,mean_first")


def test_cli_table3(tmp_path, capsys):
    store, out = tmp_path / "s.jsonl", tmp_path / "out"
    args = ["table3", "--dataset", "wine", "--kernel", "hom-cubic", "--runs", "2", "--store", str(store), "--quiet"]
    assert main(args + ["--out-dir", str(out)]) == 0
    text = capsys.readouterr().out
    assert "95.70 ± 2.85" in text and "2 splits computed" in text
    assert (out / "table3.md").exists() and (out / "table3.csv").exists()
    # the command line is recorded as given (cli.main, once), quoted as a shell takes it back
    produced = f"Produced by `tpm-models {shlex.join(args + ['--out-dir', str(out)])}`"
    assert produced in (out / "table3.md").read_text().splitlines()
    assert main(args) == 2 and "--resume" in capsys.readouterr().err
    assert main(args + ["--resume", "--tie-rule", "last"]) == 0
    assert "0 splits computed, 2 reused" in capsys.readouterr().out
    assert main(["table3", "--dataset", "mnist", "--no-store"]) == 2
    assert "neither a shipped set" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:  # refused by the parser, before any work (issue 26)
        main(["table3", "--runs", "0", "--no-store"])
    assert stop.value.code == 2 and "argument --runs: must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["table3", "--kernel", "sigmoid"])


def test_cli_table3_both_protocols_one_after_the_other(tmp_path, monkeypatch, capsys):
    """The README runs ``table3`` and then ``table3 --selection cv`` without ``--resume``: each protocol has its own
    default store; a rerun is refused (no lost work) with a message naming both ways out, and ``--fresh`` works."""
    monkeypatch.chdir(tmp_path)
    args = ["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "2", "--jobs", "1", "--quiet"]
    assert main(args) == 0
    assert main(args + ["--selection", "cv", "--folds", "3"]) == 0
    assert (tmp_path / "runs" / "table3.jsonl").exists() and (tmp_path / "runs" / "table3-cv.jsonl").exists()
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "runs/table3.jsonl exists" in err and "--resume" in err and "--fresh" in err
    assert main(args + ["--fresh"]) == 0
    assert "2 splits computed, 0 reused" in capsys.readouterr().out


def test_svc_baseline_equals_sklearn_own_kernels():
    """The baseline on our Gram matrices equals scikit-learn with its own linear / RBF kernel."""
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import SVC

    X, y, _ = dataset_arrays("iris")
    train, test = split_indices(y, 2, Protocol())
    Cs = (2.0**-3, 1.0, 2.0**5)
    for kernel, own in ((Kernel("linear"), {"kernel": "linear"}),
                        (Kernel("gaussian", sigma=0.5), {"kernel": "rbf", "gamma": 1 / (2 * 0.5**2)})):
        folds = cv_folds(y, train, 4, 7)
        tr, te, cv, fits = svc_counts(X, y, train, test, kernel, Cs, folds)
        assert fits == 3 * len(Cs) * 5
        for k, C in enumerate(Cs):
            pred = OneVsRestClassifier(SVC(C=C, **own)).fit(X[train], y[train]).predict(X)
            assert tr[k] == (pred[train] == y[train]).sum() and te[k] == (pred[test] == y[test]).sum()
            held = [(OneVsRestClassifier(SVC(C=C, **own)).fit(X[a], y[a]).predict(X[b]) == y[b]).sum()
                    for a, b in folds]
            assert cv[k] == sum(held)
    rec = run_split(_task("iris", "svc-linear", 0, Protocol()))["result"]
    assert np.asarray(rec["train_correct"]).shape == (len(ALPHAS), 1, 1)
    assert 80 <= select(rec).test_acc <= 100


def test_cli_reproduce_runs_and_reuses_its_store(tmp_path, capsys):
    out = tmp_path / "rep"
    args = ["reproduce", "--no-checks", "--dataset", "iris", "--runs", "2", "--jobs", "1", "--out-dir", str(out),
            "--quiet"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "Table 3 (2 runs; --runs 100 for the full protocol)" in text and "92.08 ± 3.71" in text
    assert {p.name for p in out.iterdir()} >= {"table3.md", "table3.csv", "table3.jsonl"}
    assert main(args) == 0 and "0 splits computed, 14 reused" in capsys.readouterr().out


# ----------------------------------------------------------------- the cross-validation protocol (issue 8, errata 11)


def test_cv_folds_partition_the_training_split_stratified_and_seeded():
    X, y, _ = dataset_arrays("wine")
    train, test = split_indices(y, 3, Protocol())
    folds = cv_folds(y, train, 5, cv_seed(SEED, 3))
    held = np.concatenate([b for _, b in folds])
    assert len(folds) == 5 and np.array_equal(np.sort(held), train)  # every training point held out once
    for fit, out in folds:
        assert not set(fit) & set(out) and set(fit) | set(out) == set(train) and not set(out) & set(test)
        # stratified: each class's share of a held-out fold is within one point of its share of the split
        for c in range(3):
            assert abs((y[out] == c).sum() - (y[train] == c).sum() / 5) < 1
    again = cv_folds(y, train, 5, cv_seed(SEED, 3))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    other = cv_folds(y, train, 5, cv_seed(SEED, 4))
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))


@pytest.mark.parametrize("dataset, cell, ratio, param", [
    ("iris", "gaussian", 0.3, 2.0**-1),
    ("wine", "linear", 0.7, None),
])
def test_cv_counts_equal_pyomo_pipeline(dataset, cell, ratio, param):
    """The held-out counts of one grid point: per fold, build_dual_19 + PIQP + recover_17 + predict_18 fitted on
    the fold's fit part, counted on its held-out part, summed over the folds."""
    protocol = Protocol(cv_folds=4)
    rec = run_split(_task(dataset, cell, 2, protocol))["result"]
    X, y, _ = dataset_arrays(dataset)
    train, _ = split_indices(y, 2, protocol)
    kernel = CELLS[cell].kernels()[KERNEL_PARAMS.index(param) if param else 0]
    alpha = 0.5
    held = 0
    for fit, out in cv_folds(y, train, 4, cv_seed(protocol.seed, 2)):
        dual = [build_dual_19(X[fit], y[fit], c, ratio * alpha, alpha, kernel=kernel) for c in range(3)]
        planes = [recover_17(X[fit], y[fit], c, solve(dual[c], "piqp").values["lam"], ratio * alpha, alpha, kernel)
                  for c in range(3)]
        held += int((predict_18(planes, X[out]) == y[out]).sum())
    cv = np.asarray(rec["cv_correct"])
    assert rec["cv_folds"] == 4 and cv.shape == np.asarray(rec["train_correct"]).shape
    assert cv[0, RATIOS.index(ratio), KERNEL_PARAMS.index(param) if param else 0] == held


def test_select_by_cv_and_its_errors():
    shape = (1, len(RATIOS), 2)
    tr, te, cv = np.full(shape, 10), np.zeros(shape, int), np.zeros(shape, int)
    cv[0, 4, 1] = cv[0, 6, 0] = 9  # the CV winners tie; the training accuracy is 100 % everywhere
    te[0, 4, 1], te[0, 6, 0] = 2, 4
    rec = {"n_train": 10, "n_test": 4, "train_correct": tr.tolist(), "test_correct": te.tolist(),
           "cv_correct": cv.tolist()}
    first, last = select(rec, "first", by="cv"), select(rec, "last", by="cv")
    assert first.index == (0, 4, 1) and first.score == 90.0 and first.train_acc == 100.0 and first.test_acc == 50.0
    assert last.index == (len(ALPHAS) - 1, 6, 0) and last.test_acc == 100.0 and first.n_tied == 2 * len(ALPHAS)
    assert select(rec, "first").index == (0, 0, 0)  # the paper's rule: everything ties at 100 %
    with pytest.raises(ValueError, match="selection"):
        select(rec, by="test")
    del rec["cv_correct"]
    with pytest.raises(ValueError, match="cross-validation"):
        select(rec, by="cv")
    with pytest.raises(ValueError, match="cv_folds"):
        Protocol(cv_folds=1)


def test_cv_shortcuts_exact_and_inhom_linear_is_linear_under_every_protocol():
    """Errata 7 and 10 under the CV protocol: every alpha and every gamma solved give the counts of the
    shortcuts, and the inhom.-linear column equals the linear one under both selections and tie rules."""
    full, short = Protocol(shortcuts=False, cv_folds=5), Protocol(cv_folds=5)
    lin_full = run_split(_task("iris", "linear", 0, full))["result"]
    lin_short = run_split(_task("iris", "linear", 0, short))["result"]
    inhom_full = run_split(_task("iris", "inhom-linear", 0, full))["result"]
    assert len(inhom_full["alphas_solved"]) == len(ALPHAS) and inhom_full["derived"] is None
    for part in ("train_correct", "test_correct", "cv_correct"):
        lin = np.asarray(lin_full[part])
        assert np.array_equal(np.broadcast_to(np.asarray(lin_short[part]), lin.shape), lin)
        assert np.array_equal(np.asarray(inhom_full[part]), np.repeat(lin, len(KERNEL_PARAMS), axis=-1))
    run = run_table3(["wine"], ["linear", "inhom-linear"], runs=2, protocol=Protocol(cv_folds=3), progress=False)
    lin, inh = summarize(run)
    assert set(lin.mean) == {"first", "last", "cv", "cv-last"} and lin.mean == inh.mean and lin.std == inh.std


def test_check_rows_kernel_shift_and_inhom_linear():
    from tpm_models.experiments.ties import check_inhomogeneous_linear_protocols, check_kernel_shift

    X, y, _ = dataset_arrays("iris")
    rows = check_kernel_shift(X, y, "iris") + check_inhomogeneous_linear_protocols(X, y, "iris", split=1, folds=3)
    assert len(rows) == 10 and all(r.passed for r in rows), [r for r in rows if not r.passed]
    # the shift check measures: a shift of the kernel that is not a constant changes the distances
    from tpm_models.learn.fastqp import fit_classes
    from tpm_models.solvers.compare import rel_dist

    K = Kernel("linear").gram(X, X)
    everything = np.arange(len(y))
    a, _ = fit_classes(K, everything, y, 3, [0.5], [1.0])
    b, _ = fit_classes(K + 2.5 * np.eye(len(y)), everything, y, 3, [0.5], [1.0])
    assert rel_dist(b[0].distance(K + 2.5 * np.eye(len(y))), a[0].distance(K)) > 1e-3


def test_config_of_the_paper_protocol_is_unchanged_and_cv_runs_resume(tmp_path):
    X, y, sha = dataset_arrays("iris")
    assert "cv_folds" not in config_of(sha, CELLS["linear"], Protocol())  # stores written before CV stay valid
    assert config_of(sha, CELLS["linear"], Protocol(cv_folds=5))["cv_folds"] == 5
    store = tmp_path / "cv.jsonl"
    first = run_table3(["iris"], ["linear"], runs=2, protocol=Protocol(cv_folds=5), store=store, progress=False)
    again = run_table3(["iris"], ["linear"], runs=2, protocol=Protocol(cv_folds=5), store=store, resume=True,
                       progress=False)
    assert again.reused == 2 and _results(again) == _results(first)
    paper = run_table3(["iris"], ["linear"], runs=2, store=store, resume=True, progress=False)
    assert paper.computed == 2 and paper.stale == 2  # CV records are never taken for a paper-protocol run


def test_cli_table3_selection_cv(tmp_path, capsys):
    out = tmp_path / "res"
    args = ["table3", "--dataset", "iris", "--kernel", "linear", "svc-linear", "--runs", "2", "--jobs", "1",
            "--selection", "cv", "--folds", "3", "--no-store", "--quiet", "--out-dir", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "ours (CV, first)" in text
    md = (out / "table3.md").read_text()
    assert "--selection cv --folds 3" in md and "## Selected configurations" in md and "CV protocol" in md
    assert "CV: − SVC linear" in md
    import csv

    rows = list(csv.DictReader((out / "table3.csv").open()))
    assert rows[0]["kernel"] == "linear" and float(rows[0]["mean_cv"]) > 80 and rows[0]["selected_cv"]
    assert main(args[:-2] + ["--folds", "1"]) == 2
    assert "cv_folds must be 0" in capsys.readouterr().err


def test_run_metadata_names_a_package_that_is_not_installed():
    """``gurobipy`` is an optional extra: a report names what is missing instead of failing on it."""
    from tpm_models.experiments.run_info import package_versions, run_metadata

    text = package_versions(["numpy", "no_such_package_27"])
    assert text.startswith("numpy ") and text.endswith("no_such_package_27 not installed")
    meta = run_metadata((0.0, 0.0, 0.0), computed=0, reused=3, packages=["no_such_package_27"])
    assert "no_such_package_27 not installed" in meta["machine"]
    assert "load average (1, 5, 15 min) before / after" not in meta  # nothing computed: no load to report
    assert meta["records reused from the store"].startswith("3 of 3")


def test_a_worker_reuses_gram_matrices_and_splits_without_changing_them():
    """cached_gram / cached_split (what one worker keeps between the splits and cells of Table 3) equal
    Kernel.gram and split_indices, are read-only (a caller cannot change what the next split gets), and the
    Gram cache keeps at most GRAM_CACHE matrices, keyed by kernel and points."""
    from tpm_models.experiments.table3 import grid
    from tpm_models.experiments.table3.protocol import Protocol, dataset_arrays, split_indices

    X, y, _ = dataset_arrays("iris")
    for sigma in (0.5, 2.0):
        k = Kernel("gaussian", sigma=sigma)
        K = grid.cached_gram(k, X)
        assert np.array_equal(K, k.gram(X, X)) and not K.flags.writeable
        assert grid.cached_gram(k, X) is K
    assert not np.array_equal(grid.cached_gram(Kernel("gaussian", sigma=0.5), X),
                              grid.cached_gram(Kernel("gaussian", sigma=0.5), X[::-1]))
    first = grid.cached_gram(Kernel("linear"), X)
    for g in range(grid.GRAM_CACHE):  # the least recently used goes first
        grid.cached_gram(Kernel("inhom-poly", degree=2, gamma=1.0 + g), X[:10])
    assert grid.cached_gram(Kernel("linear"), X) is not first
    for split in (0, 7):
        for protocol in (Protocol(), Protocol(seed=3, test_size=0.4)):
            train, test = grid.cached_split(y, split, protocol)
            want_train, want_test = split_indices(y, split, protocol)
            assert np.array_equal(train, want_train) and np.array_equal(test, want_test)
            assert not train.flags.writeable and not test.flags.writeable
            assert grid.cached_split(y.copy(), split, protocol)[0] is train


def test_paired_difference_is_mean_and_standard_error_of_the_differences():
    """By hand: differences 1, 2, 3 have mean 2 and standard error 1/sqrt(3) = 0.577 (2 > 2 x 0.577: bold)."""
    assert paired_difference([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]) == "**+2.00 ± 0.58**"
    assert paired_difference([1.0, -1.0], [0.0, 0.0]) == "+0.00 ± 1.00"  # within 2 standard errors: plain
    assert paired_difference([1.0, 2.0], [0.0]) == "—"  # not the same splits
