"""``table3.md``: Table 3 beside the paper's under both selection protocols and tie rules, the SVC baseline, the
other decision functions, times, the selected configurations and the per-cell diagnostics
(:func:`table3_markdown`); :func:`write_table3` writes it with ``table3.csv``, keeping a discussion already
written between the markers of :mod:`tpm_models.experiments.run_info`."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tpm_models.experiments.run_info import DISCUSSION_END, DISCUSSION_START, kept_discussion
from tpm_models.experiments.table3.protocol import ALL_CELLS, CELLS
from tpm_models.experiments.table3.run import RunResult
from tpm_models.experiments.table3.summary import PROTOCOLS, CellSummary, dash_or, summarize, write_csv
from tpm_models.files import write_text

COLUMN_TITLES = {"first": "paper's protocol, first", "last": "paper's protocol, last", "cv": "CV",
                 "cv-last": "CV, last"}


def _flagged(s: CellSummary, column: str) -> str:
    """``diff (z)``, bold when |z| > 2; ``—`` where the paper has no number."""
    z = s.z(column)
    if z is None:
        return "—"
    text = f"{s.diff(column):+.2f} ({z:+.1f})"
    return f"**{text}**" if abs(z) > 2 else text


def table3_markdown(summaries: Sequence[CellSummary], run: RunResult, command: str, meta: dict,
                    discussion: str | None = None, experiments_link: str = "../experiments.md") -> str:
    """Table 3 beside the paper's under both selection protocols and tie rules, the SVC baseline, the other
    decision functions, times, the selected configurations and the per-cell diagnostics."""
    cv = bool(summaries) and all("cv" in s.mean for s in summaries)
    columns = [c for c in PROTOCOLS if cv or not c.startswith("cv")]
    lines = _protocol_markdown(run, command, meta, cv, experiments_link)
    lines += _accuracy_markdown(summaries, columns)
    lines += _selected_markdown(summaries, columns)
    lines += _time_markdown(summaries, run, cv)
    lines += _diagnostics_markdown(summaries, cv)
    lines += ["", "## Discussion", "", DISCUSSION_START, discussion or "(not written yet)", DISCUSSION_END, ""]
    return "\n".join(lines)


def _protocol_markdown(run: RunResult, command: str, meta: dict, cv: bool, experiments_link: str) -> list[str]:
    """The title, the command and the protocol's description, up to the accuracy table's heading."""
    k = run.protocol.cv_folds
    return [
        "# Table 3 reproduced" + (", and a sound selection protocol beside it" if cv else ""),
        "",
        f"Produced by `{command}`",
        "",
        f"- protocol: {run.runs} stratified 75/25 splits (seed {run.protocol.seed}: split k uses "
        f"SeedSequence([{run.protocol.seed}, k])), whole data set "
        "min-max scaled, grid alpha in 2^-8..2^8 x nu/alpha in 0.1..0.9 x (gamma or sigma in 2^-4..2^4), "
        "mean ± sample std (ddof=1) of the test accuracy (%);",
        "- **paper's protocol**: the configuration with the best **training** accuracy; tie rule `first` / `last`: "
        "the first / last configuration in grid order (alpha, nu/alpha, kernel parameter) among those with the "
        f"best training accuracy ([experiments.md]({experiments_link}));",
        *([f"- **CV protocol**: the configuration with the best {k}-fold stratified cross-validated accuracy "
           "inside the training split (folds of split k seeded by SeedSequence([seed, k, 1])), same tie rules "
           "(`CV` = `first`), refitted on the whole training split and tested on the test split;"] if cv else []),
        f"- solver {run.protocol.solver} on the fast path; shortcuts (errata 7, 10): "
        f"{'on' if run.protocol.shortcuts else 'off'};",
        *(f"- {key}: {value}" for key, value in meta.items()),
        "- `diff (z)`: ours − paper, and z = (ours − paper) / sqrt(s_ours²/n + s_paper²/100); |z| > 2 is **bold**.",
        "",
        "## Test accuracy (%), ours beside the paper's",
        "",
    ]


def _accuracy_markdown(summaries: Sequence[CellSummary], columns: Sequence[str]) -> list[str]:
    """The accuracy table of the TPM cells, then the SVC baseline's and the other decision functions' sections."""
    header = ["data", "kernel", "paper"] + [COLUMN_TITLES[c] for c in columns] + [
        f"diff (z), {COLUMN_TITLES[c]}" for c in columns if c != "cv-last"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    tpm = [s for s in summaries if ALL_CELLS[s.cell].family == "tpm"]
    svc = [s for s in summaries if ALL_CELLS[s.cell].family == "svc"]
    for s in tpm:
        pm, ps, _ = s.paper
        paper = "to be done" if pm is None else f"{pm:.2f} ± {ps:.2f}"
        cells = [f"{s.mean[c]:.2f} ± {s.std[c]:.2f}" for c in columns]
        lines.append(f"| {s.dataset} | {CELLS[s.cell].label} | {paper} | " + " | ".join(cells) + " | "
                     + " | ".join(_flagged(s, c) for c in columns if c != "cv-last") + " |")
    if svc:
        lines += _baseline_markdown(tpm, svc, columns)
    others = [s for s in summaries if ALL_CELLS[s.cell].family in ("ovo-vote", "ovr-maxdist")]
    if others:
        lines += _decisions_markdown(tpm, others, columns)
    return lines


def _time_markdown(summaries: Sequence[CellSummary], run: RunResult, cv: bool) -> list[str]:
    """Our compute time per cell beside the paper's CPU time."""
    k = run.protocol.cv_folds
    lines = [
        "",
        "## Time: our compute time beside the paper's CPU time",
        "",
        "`compute s` is the sum over the splits of each split's wall time in its worker (one core)"
        + (f", the {k} cross-validation fits included" if cv else "")
        + f"; the whole run took {run.wall_seconds:.1f} s of wall time ({run.computed} splits computed, "
        f"{run.reused} reused from the store).",
        "",
        "| data | kernel | QPs solved | compute s | QPs/s | paper CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for s in summaries:
        pc = s.paper[2]
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | {s.qps} | {s.seconds:.2f} | "
                     f"{s.qps / s.seconds if s.seconds > 0 else math.inf:.0f} | {dash_or(pc)} |")
    return lines


def _diagnostics_markdown(summaries: Sequence[CellSummary], cv: bool) -> list[str]:
    """Ties, perfect training accuracy and midpoint thetas per cell."""
    lines = [
        "",
        "## Diagnostics",
        "",
        "`tied` is the mean number of configurations (of the full grid, 17 alpha values included) sharing the "
        "best training accuracy" + (" (`tied, CV`: the best cross-validated accuracy)" if cv else "")
        + "; `train 100%` the fraction of splits whose best training accuracy is 100 %; "
        "`theta midpoint` the fraction of recovered surfaces whose theta is the midpoint of the KKT interval "
        "(errata 5).",
        "",
        "| data | kernel | tied | " + ("tied, CV | " if cv else "") + "train 100% | theta midpoint |",
        "|---|---|---|---|" + ("---|" if cv else "") + "---|",
    ]
    for s in summaries:
        tied_cv = f"{s.mean_tied_cv:.1f} | " if cv else ""
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | {s.mean_tied:.1f} | {tied_cv}"
                     f"{s.perfect_train:.2f} | {s.theta_midpoint:.3f} |")
    return lines


def _top(dist: tuple[tuple[str, float], ...], n: int = 3) -> str:
    text = "; ".join(f"{name} ({100 * f:.0f}%)" for name, f in dist[:n])
    return text + (f"; {len(dist) - n} more" if len(dist) > n else "")


def _selected_markdown(summaries: Sequence[CellSummary], columns: Sequence[str]) -> list[str]:
    """The distribution of the selected configurations over the splits, by protocol column."""
    shown = [c for c in columns if c != "cv-last"]
    lines = [
        "",
        "## Selected configurations",
        "",
        "The configurations selected over the splits, most frequent first, with the fraction of splits (alpha is "
        "left out: it changes no prediction, errata 7; on a tie `first` takes the smallest alpha, `last` the "
        "largest).",
        "",
        "| data | kernel | " + " | ".join(COLUMN_TITLES[c] for c in shown) + " |",
        "|---|---|" + "---|" * len(shown),
    ]
    for s in summaries:
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | "
                     + " | ".join(_top(s.distribution[c]) for c in shown) + " |")
    return lines


def paired_difference(acc: Sequence[float], base: Sequence[float]) -> str:
    """``acc - base`` on the same splits as ``mean ± standard error`` (**bold** beyond 2 standard errors), or ``—``
    when the two were not run on the same splits."""
    if len(base) != len(acc):
        return "—"
    d = np.array(acc) - np.array(base)
    se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else 0.0
    text = f"{d.mean():+.2f} ± {se:.2f}"
    return f"**{text}**" if se > 0 and abs(d.mean()) > 2 * se else text


def _baseline_markdown(tpm: Sequence[CellSummary], svc: Sequence[CellSummary], columns: Sequence[str]) -> list[str]:
    """The SVC baseline under the same protocols, and the paired differences TPM − SVC on the same splits."""
    lines = [
        "",
        "## Baseline: scikit-learn SVC (one-vs-rest) on the same splits",
        "",
        "`OneVsRestClassifier(SVC(kernel='precomputed', C))` on the same Gram matrices, C in 2^-8..2^8 (x sigma in "
        "2^-4..2^4 for the Gaussian kernel), selected by the same protocols and tie rules (grid order C, then "
        "sigma) on the same splits and folds. Not in the paper.",
        "",
        "| data | baseline | " + " | ".join(COLUMN_TITLES[c] for c in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for b in svc:
        lines.append(f"| {b.dataset} | {ALL_CELLS[b.cell].label} | "
                     + " | ".join(f"{b.mean[c]:.2f} ± {b.std[c]:.2f}" for c in columns) + " |")
    names = list(dict.fromkeys(b.cell for b in svc))
    paired = [c for c in ("first", "cv") if c in columns]
    lines += [
        "",
        "Paired difference TPM − SVC on the same splits, mean ± standard error, under "
        + " and ".join(f"`{COLUMN_TITLES[c]}`" for c in paired) + " (**bold**: more than 2 standard errors):",
        "",
        "| data | TPM kernel | " + " | ".join(f"{COLUMN_TITLES[c]}: − {ALL_CELLS[n].label}"
                                              for c in paired for n in names) + " |",
        "|---|---|" + "---|" * (len(paired) * len(names)),
    ]
    for s in tpm:
        cols = []
        for c in paired:
            for n in names:
                base = next((x for x in svc if x.dataset == s.dataset and x.cell == n), None)
                cols.append("—" if base is None else paired_difference(s.acc[c], base.acc[c]))
        lines.append(f"| {s.dataset} | {CELLS[s.cell].label} | " + " | ".join(cols) + " |")
    return lines


def _decisions_markdown(tpm: Sequence[CellSummary], others: Sequence[CellSummary], columns: Sequence[str]
                        ) -> list[str]:
    """The other decision functions (:data:`DECISIONS`) under the same protocols, and the paired differences
    rule − (18)/(20) with the same kernel on the same splits."""
    lines = [
        "",
        "## Other decision functions on the same splits",
        "",
        "Max-voting over one-versus-one binary TPMSVMs (2)-(3)/(12)-(13) and max-distance over one-versus-rest ones, "
        "decision (8)/(14) per binary model (`tpm_models.experiments.decisions`), same grid (alpha, nu/alpha, "
        "kernel parameter), "
        "protocols, tie rules, splits and folds. Not in the paper, which only names them.",
        "",
        "| data | rule | " + " | ".join(COLUMN_TITLES[c] for c in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for s in others:
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | "
                     + " | ".join(f"{s.mean[c]:.2f} ± {s.std[c]:.2f}" for c in columns) + " |")
    paired = [c for c in ("first", "cv") if c in columns]
    lines += [
        "",
        "Paired difference rule − one-versus-all (18)/(20) with the same kernel, on the same splits, mean ± standard "
        "error, under " + " and ".join(f"`{COLUMN_TITLES[c]}`" for c in paired)
        + " (**bold**: more than 2 standard errors; — : that (18)/(20) cell is not in the run):",
        "",
        "| data | rule | " + " | ".join(f"{COLUMN_TITLES[c]}: − (18)/(20)" for c in paired) + " |",
        "|---|---|" + "---|" * len(paired),
    ]
    for s in others:
        base = next((b for b in tpm if b.dataset == s.dataset and b.cell == s.cell.split("-", 1)[1]), None)
        cols = ["—" if base is None else paired_difference(s.acc[c], base.acc[c]) for c in paired]
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | " + " | ".join(cols) + " |")
    return lines


def _experiments_link(out: Path) -> str:
    """The relative link from a table written to ``out`` to ``experiments.md`` of the ``docs`` folder holding it
    (``../experiments.md`` from ``docs/results``, ``../../experiments.md`` one folder deeper); outside ``docs``,
    ``../experiments.md``."""
    out = out.resolve()
    for folder in (out, *out.parents):
        if folder.name == "docs" and (folder / "experiments.md").is_file():
            return Path(os.path.relpath(folder / "experiments.md", out)).as_posix()
    return "../experiments.md"


def write_table3(run: RunResult, out_dir: str | Path, command: str, meta: dict | None = None) -> list[CellSummary]:
    """Write ``table3.md`` and ``table3.csv`` to ``out_dir``; a discussion already in ``table3.md`` is kept."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summaries = summarize(run)
    md = out / "table3.md"
    discussion = kept_discussion(md)
    write_text(md, table3_markdown(summaries, run, command, meta or {}, discussion, _experiments_link(out)))
    write_csv(summaries, out / "table3.csv")
    return summaries

