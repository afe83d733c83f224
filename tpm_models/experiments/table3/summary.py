"""Table 3's numbers from a run: one :class:`CellSummary` per (data set, cell) under every protocol column
(:data:`PROTOCOLS`), ``table3.csv`` (:func:`write_csv`), and the table on the terminal (:func:`print_summary`)."""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from tpm_models.experiments.counts import FALLBACK_QPS
from tpm_models.experiments.table3.grid import has_cv, select
from tpm_models.experiments.table3.protocol import ALL_CELLS, CELLS, KERNEL_PARAMS, PAPER_TABLE3, RATIOS, SVC_C, Cell
from tpm_models.experiments.table3.run import RunResult
from tpm_models.files import replacing

PROTOCOLS: dict[str, tuple[str, str]] = {
    "first": ("train", "first"), "last": ("train", "last"), "cv": ("cv", "first"), "cv-last": ("cv", "last"),
}
"""The columns of the results: (selection, tie rule). ``first``/``last`` are the paper's protocol under the two
tie rules; ``cv`` is the cross-validation protocol (tie rule ``first``), ``cv-last`` the same with ``last``."""


@dataclass(frozen=True)
class CellSummary:
    dataset: str
    cell: str
    runs: int
    mean: dict[str, float]  # by protocol column (PROTOCOLS)
    std: dict[str, float]
    seconds: float  # sum of the splits' compute time (one core)
    qps: int
    mean_tied: float  # mean number of configurations tied at the best training accuracy
    perfect_train: float  # fraction of splits whose best training accuracy is 100 %
    selected: dict[str, str]  # most frequent selected configuration, by protocol column
    theta_midpoint: float  # fraction of recovered surfaces whose theta is the KKT-interval midpoint
    acc: dict[str, tuple[float, ...]] = field(default_factory=dict)  # test accuracy of every split, by column
    distribution: dict[str, tuple[tuple[str, float], ...]] = field(default_factory=dict)
    """The selected configurations (alpha left out) and their frequencies, most frequent first, by column."""
    mean_tied_cv: float | None = None  # mean number of configurations tied at the best cross-validated accuracy

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(k for k in PROTOCOLS if k in self.mean)

    @property
    def paper(self) -> tuple[float | None, float | None, float | None]:
        return PAPER_TABLE3.get((self.dataset, self.cell), (None, None, None))

    def diff(self, rule: str) -> float | None:
        p = self.paper[0]
        return None if p is None else self.mean[rule] - p

    def z(self, rule: str) -> float | None:
        """Difference in standard errors: :math:`(\\bar a - \\bar b)/\\sqrt{s_a^2/n + s_b^2/100}`."""
        p_mean, p_std, _ = self.paper
        if p_mean is None or p_std is None:
            return None
        se = math.sqrt(self.std[rule] ** 2 / self.runs + p_std**2 / 100)
        return (self.mean[rule] - p_mean) / se if se > 0 else math.inf


def _describe(cell: Cell, index: tuple[int, int, int]) -> str:
    a, r, p = index
    if cell.family == "svc":
        text = f"C=2^{int(math.log2(SVC_C[a]))}"
    else:  # alpha changes no prediction (errata 7): it is left out
        text = f"nu/alpha={RATIOS[r]:g}"
    if cell.param:
        text += f", {cell.param}=2^{int(math.log2(KERNEL_PARAMS[p]))}"
    return text


def summarize(run: RunResult) -> list[CellSummary]:
    """One :class:`CellSummary` per (data set, cell) of the run; the ``cv`` columns when every record has them."""
    out = []
    for d in run.datasets:
        for c in run.cells:
            recs = [run.records[(d, c, s)] for s in range(run.runs)]
            cv = all(has_cv(r["result"]) for r in recs)
            mean, std, selected, distribution, sels = {}, {}, {}, {}, {}
            for column, (by, rule) in PROTOCOLS.items():
                if by == "cv" and not cv:
                    continue
                sels[column] = [select(r["result"], rule, by) for r in recs]
                acc = np.array([s.test_acc for s in sels[column]])
                mean[column] = float(acc.mean())
                std[column] = float(acc.std(ddof=1)) if len(acc) > 1 else 0.0
                # alpha is irrelevant with the shortcut (errata 7): report nu/alpha and the kernel parameter
                counts = Counter(_describe(ALL_CELLS[c], s.index) for s in sels[column])
                distribution[column] = tuple((k, v / len(recs)) for k, v in counts.most_common())
                selected[column] = distribution[column][0][0]
            rules: Counter[str] = Counter()
            for r in recs:
                rules.update(r["result"]["theta_rules"])
            out.append(CellSummary(
                d, c, run.runs, mean, std,
                seconds=float(sum(r["timing"]["seconds"] for r in recs)),
                qps=int(sum(r["result"]["qps"] for r in recs)),
                mean_tied=float(np.mean([s.n_tied for s in sels["first"]])),
                perfect_train=float(np.mean([s.train_acc == 100.0 for s in sels["first"]])),
                selected=selected,
                theta_midpoint=rules.get("midpoint of KKT interval", 0) / max(1, sum(
                    v for k, v in rules.items() if k != FALLBACK_QPS)),
                acc={column: tuple(x.test_acc for x in v) for column, v in sels.items()},
                distribution=distribution,
                mean_tied_cv=float(np.mean([s.n_tied for s in sels["cv"]])) if cv else None,
            ))
    return out


def dash_or(x: float | None, spec: str = ".2f") -> str:
    """``x`` formatted by ``spec``, or ``—`` for ``None`` (a number the paper does not give)."""
    return "—" if x is None else format(x, spec)


CSV_HEADER = ("dataset", "kernel", "runs", "mean_first", "std_first", "mean_last", "std_last", "paper_mean",
              "paper_std", "diff_first", "z_first", "diff_last", "z_last", "compute_s", "paper_cpu_s", "qps",
              "mean_tied_configs", "frac_train_100", "selected_first", "selected_last", "frac_theta_midpoint",
              "mean_cv", "std_cv", "diff_cv", "z_cv", "mean_cv_last", "std_cv_last", "mean_tied_configs_cv",
              "selected_cv")
"""The columns of ``table3.csv``; the ``*_cv*`` ones are empty for a run without cross-validation."""


def write_csv(summaries: Sequence[CellSummary], path: str | Path) -> None:
    import csv

    def num(x: float | None, spec: str) -> str:
        return "" if x is None else format(x, spec)

    with replacing(path, newline="") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_HEADER)
        for s in summaries:
            pm, ps, pc = s.paper
            cv = "cv" in s.mean
            w.writerow([s.dataset, s.cell, s.runs, f"{s.mean['first']:.4f}", f"{s.std['first']:.4f}",
                        f"{s.mean['last']:.4f}", f"{s.std['last']:.4f}", num(pm, ""), num(ps, ""),
                        num(s.diff("first"), ".4f"), num(s.z("first"), ".3f"), num(s.diff("last"), ".4f"),
                        num(s.z("last"), ".3f"), f"{s.seconds:.3f}", num(pc, ""), s.qps,
                        f"{s.mean_tied:.2f}", f"{s.perfect_train:.2f}", s.selected["first"], s.selected["last"],
                        f"{s.theta_midpoint:.4f}",
                        *([f"{s.mean['cv']:.4f}", f"{s.std['cv']:.4f}", num(s.diff("cv"), ".4f"),
                           num(s.z("cv"), ".3f"), f"{s.mean['cv-last']:.4f}", f"{s.std['cv-last']:.4f}",
                           f"{s.mean_tied_cv:.2f}", s.selected["cv"]] if cv else [""] * 8)])



def print_summary(summaries: Sequence[CellSummary], rule: str = "first", stream: TextIO | None = None,
                  selection: str = "train") -> None:
    """Table 3 on the terminal: the paper's number, ours under the paper's protocol (tie rule ``rule``, then the
    other rule) and, for a cross-validation run, ours under the CV protocol."""
    stream = stream or sys.stdout
    other = "last" if rule == "first" else "first"
    cv = selection == "cv" and all("cv" in s.mean for s in summaries)
    cv_rule = "cv" if rule == "first" else "cv-last"
    width = max([16, *(len(s.cell) for s in summaries)])
    print(f"{'data':<5} {'kernel':<{width}} {'paper':>14} {'ours (' + rule + ')':>15} {'z':>6} "
          f"{'ours (' + other + ')':>15}" + (f" {'ours (CV, ' + rule + ')':>17} {'z':>6}" if cv else "")
          + f" {'compute s':>9} {'paper CPU s':>11}", file=stream)
    for s in summaries:
        pm, ps, pc = s.paper
        paper = ("to be done" if pm is None else f"{pm:.2f} ± {ps:.2f}") if s.cell in CELLS else "not in paper"
        line = (f"{s.dataset:<5} {s.cell:<{width}} {paper:>14} {s.mean[rule]:>7.2f} ± {s.std[rule]:<5.2f} "
                f"{dash_or(s.z(rule), '+.2f'):>6} {s.mean[other]:>7.2f} ± {s.std[other]:<5.2f}")
        if cv:
            line += f" {s.mean[cv_rule]:>9.2f} ± {s.std[cv_rule]:<5.2f} {dash_or(s.z(cv_rule), '+.2f'):>6}"
        print(line + f" {s.seconds:>9.2f} {dash_or(pc):>11}", file=stream)

