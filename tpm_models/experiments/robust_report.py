"""The reports of the robust experiments (:mod:`tpm_models.experiments.robust`): ``robust.md`` with its table
(:func:`robust_markdown`), the (23K) section that ``robust-kernel-table`` writes into the same file between
:data:`KERNEL_START` and :data:`KERNEL_END` (:func:`robust_kernel_markdown`), and the writers of both
(:func:`write_robust_table`, :func:`write_robust_kernel_table`).

Contract: each command rewrites only its own part of ``robust.md``. ``robust-table`` keeps the (23K) section and
the hand-written discussion (:func:`tpm_models.experiments.run_info.kept_discussion`); ``robust-kernel-table``
replaces only the (23K) section (or puts it before ``## Discussion``), and writes a minimal file if there is none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tpm_models.experiments.run_info import DISCUSSION_END, DISCUSSION_START, kept_discussion, package_versions
from tpm_models.files import write_text
from tpm_models.validation import json_safe


def robust_markdown(rows: Sequence[dict], command: str, meta: dict, discussion: str | None = None) -> str:
    """``robust.md``: the table of :func:`tpm_models.experiments.robust.summarize_robust` rows, the command and the
    metadata lines above it, the discussion (kept between its markers) below."""
    lines = [
        "# Robust experiments: clean and adversarial test accuracy",
        "",
        f"Produced by `{command}`",
        "",
        "- Section 5's splits, whole data set min-max scaled, alpha = 1 (errata 7), nu/alpha in 0.1..0.9 selected "
        "by clean training accuracy (first in grid order among ties);",
        "- robust: (23) with one radius eps for every training point (norm epigraph of (26); solver below), "
        "theta by the rule of `tpm_models.models.recovery` on the KKT interval, decision (18); deterministic: the "
        "same with eps = 0, i.e. (15);",
        "- attacked: every test point perturbed by the worst delta with ||delta||_p <= eps for the fitted "
        "classifier (exact, see `tpm_models.experiments.robust`); the deterministic model is attacked with the "
        "same (p, eps) as the robust model in its row;",
        *(f"- {k}: {v}" for k, v in meta.items()),
        "",
        "- gain: robust attacked − deterministic attacked, paired on the same splits, mean ± standard error;",
        "",
        "| data | p | eps | robust clean | robust attacked | deterministic clean | deterministic attacked | gain |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        def cell(k, r=r):
            return f"{r[k + ' mean']:.2f} ± {r[k + ' std']:.2f}"
        lines.append(f"| {r['dataset']} | {r['p']} | {r['eps']:g} | {cell('robust clean')} | "
                     f"{cell('robust attacked')} | {cell('det clean')} | {cell('det attacked')} | "
                     f"{r['attacked gain mean']:+.2f} ± {r['attacked gain se']:.2f} |")
    lines += ["", "## Discussion", "", DISCUSSION_START, discussion or "(not written yet)", DISCUSSION_END, ""]
    return "\n".join(lines)



KERNEL_START = "<!-- robust kernel table: written by `tpm-models robust-kernel-table`, kept by `robust-table` -->"
KERNEL_END = "<!-- end of robust kernel table -->"


def robust_kernel_markdown(rows: Sequence[dict], command: str, meta: dict) -> str:
    """The (23K) section of ``robust.md``, between :data:`KERNEL_START` and :data:`KERNEL_END`."""
    lines = [
        KERNEL_START,
        "## Robust kernel model (23K)",
        "",
        f"Produced by `{command}`",
        "",
        "- (23K) ([derivation](../robust_kernel.md)): (23) with p = 2 in the feature space of the Gaussian kernel, "
        "one radius eps for every training point, feature-space radius rho = sqrt(2 - 2 exp(-R^2/(2 sigma^2))) with "
        "R = eps n^max(0, 1/2 - 1/p) (the same model for p = 1 and p = 2); deterministic: (19), i.e. rho = 0; both "
        "solved by Clarabel on the coordinates of the span of the training points (the builder's data), theta by "
        "the rule of `tpm_models.models.recovery`, decision (20); Section 5's splits, nu/alpha in 0.1..0.9 selected "
        "by clean training accuracy (first in grid order), alpha = 1;",
        "- attacked: the exact worst case of decision (20) is not computed, but bracketed: *certified* counts a test "
        "point when no point of the feature-space ball of radius rho around phi(x) changes its decision (exact "
        "attack of `tpm_models.experiments.robust` on the coordinates; a lower bound on the attacked accuracy), "
        "*search* when a projected-gradient attack in input space (`decision_attack_search`) does not move it (an "
        "upper bound); cells read certified – search;",
        f"- certified points that the search moved (a contradiction; must be 0): "
        f"{sum(r['contradictions'] for r in rows)};",
        *(f"- {k}: {v}" for k, v in meta.items()),
        "- gain: (23K) − (19) under the same attack, paired on the same splits, mean ± standard error, by the search "
        "and by the certified counts;",
        "",
        "| data | p | eps | rho | (23K) clean | (23K) attacked | (19) clean | (19) attacked | gain, search | "
        "gain, certified |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        def cell(k, r=r):
            return f"{r[k + ' mean']:.2f} ± {r[k + ' std']:.2f}"

        def bracket(who, r=r):
            return f"{r[who + ' certified mean']:.2f} – {r[who + ' search mean']:.2f}"

        lines.append(f"| {r['dataset']} | {r['p']} | {r['eps']:g} | {r['rho']:.4f} | {cell('robust clean')} | "
                     f"{bracket('robust')} | {cell('det clean')} | {bracket('det')} | "
                     f"{r['gain search mean']:+.2f} ± {r['gain search se']:.2f} | "
                     f"{r['gain certified mean']:+.2f} ± {r['gain certified se']:.2f} |")
    return "\n".join([*lines, "", KERNEL_END])


def kernel_section(text: str) -> str | None:
    """The (23K) section of a ``robust.md`` text, markers included (``None`` if it has none)."""
    if KERNEL_START in text and KERNEL_END in text:
        return KERNEL_START + text.split(KERNEL_START, 1)[1].split(KERNEL_END, 1)[0] + KERNEL_END
    return None


def with_kernel_section(text: str, section: str | None) -> str:
    """``text`` with its (23K) section replaced by ``section``, or ``section`` put before ``## Discussion``."""
    if section is None:
        return text
    old = kernel_section(text)
    if old is not None:
        return text.replace(old, section)
    head, sep, tail = text.partition("\n## Discussion\n")
    return f"{head.rstrip()}\n\n{section}\n{sep}{tail}" if sep else f"{text.rstrip()}\n\n{section}\n"



def solver_note(records: Sequence[dict]) -> str:
    """The ``solver`` line of ``robust.md``: the backend, its version, and the class models it solved per data
    set (each for every nu/alpha), from the records' ``"solvers"`` counts."""
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        for backend, k in r.get("solvers", {}).items():
            counts.setdefault(backend, {}).setdefault(r["dataset"], 0)
            counts[backend][r["dataset"]] += k
    parts = [f"{package_versions([backend])}: " + ", ".join(f"{d} {k}" for d, k in sorted(per.items()))
             for backend, per in sorted(counts.items())]
    return f"Clarabel (dense conic form, no licence); class models solved (each for every nu/alpha): {'; '.join(parts)}"


def _write_records(records: Sequence[dict], path: str | Path | None) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(json_safe(records), allow_nan=False))


def write_robust_table(out_dir: str | Path, rows: Sequence[dict], records: Sequence[dict], command: str, meta: dict,
                       records_path: str | Path | None = None) -> list[Path]:
    """Write ``robust.md`` (keeping its (23K) section and its discussion) and ``robust.json`` (``rows``) to
    ``out_dir``, and every split's counts (``records``) to ``records_path``; the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md = out / "robust.md"
    kept = kernel_section(md.read_text()) if md.exists() else None
    write_text(md, with_kernel_section(robust_markdown(rows, command, meta, kept_discussion(md)), kept))
    write_text(out / "robust.json", json.dumps(json_safe(rows), indent=1, allow_nan=False))
    _write_records(records, records_path)
    return [md, out / "robust.json"]


def write_robust_kernel_table(out_dir: str | Path, rows: Sequence[dict], records: Sequence[dict], command: str,
                              meta: dict, records_path: str | Path | None = None) -> list[Path]:
    """Write the (23K) section of ``robust.md`` and ``robust_kernel.json`` (``rows``) to ``out_dir``, and every
    split's counts to ``records_path``; the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md = out / "robust.md"
    text = md.read_text() if md.exists() else "# Robust experiments: clean and adversarial test accuracy\n"
    write_text(md, with_kernel_section(text, robust_kernel_markdown(rows, command, meta)))
    write_text(out / "robust_kernel.json", json.dumps(json_safe(rows), indent=1, allow_nan=False))
    _write_records(records, records_path)
    return [md, out / "robust_kernel.json"]
