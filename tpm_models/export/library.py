"""The ``formulations/`` library: canonical instances of every model written in every format that
holds it, with a manifest of optimal values verified by two solvers (:mod:`tpm_models.export.verification`), checked
against a fresh export by :mod:`tpm_models.export.differences` (``docs/formulations.md``)."""

from __future__ import annotations

import csv
import io
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyomo.environ as pyo

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.export.differences import text_difference
from tpm_models.export.verification import verify
from tpm_models.export.writers import formats_for, gzip_bytes, model_texts, read_text
from tpm_models.files import FileLock, write_bytes
from tpm_models.kernels import Kernel
from tpm_models.models.registry import build
from tpm_models.solvers.structure import model_class

LIBRARY_DATASETS = ("iris", "wine")


LIBRARY_NU, LIBRARY_ALPHA = 0.3, 1.0
"""The one (nu, alpha) point of the library: nu/alpha = 0.3, where free support vectors exist."""


LIBRARY_EPS = 0.02
"""Radius of every uncertainty set (21) in the robust instances."""


LIBRARY_P = (1.0, 2.0, math.inf, 3.0)
"""Norms of (21) for (23) and (26): the three of (27)-(29) and one general p."""


LIBRARY_KERNELS = (
    Kernel("hom-poly", degree=2),
    Kernel("inhom-poly", degree=2, gamma=1.0),
    Kernel("gaussian", sigma=1.0),
)
"""Kernels of (12), (13), (19); (10), (11) take the polynomial ones (exact finite feature maps)."""


OBJECTIVE_DIGITS = 10


MANIFEST = "manifest.csv"


MANIFEST_COLUMNS = (
    "file", "format", "model", "dataset", "class", "label", "nu", "alpha", "kernel", "p", "eps",
    "model_class", "n_variables", "n_constraints", "sense", "objective", "objective_scale",
    "verified_by", "max_rel_disagreement", "note",
)


STRUCTURAL_COLUMNS = MANIFEST_COLUMNS[: MANIFEST_COLUMNS.index("objective")]
"""Columns that do not depend on a solve."""


def _p_text(p: float | None) -> str:
    return "" if p is None else ("inf" if math.isinf(p) else f"{p:g}")


def _kernel_tag(k: Kernel) -> str:
    short = {"degree": "d", "gamma": "g", "sigma": "s", "a": "a", "b": "b"}
    return k.name + "".join(f"-{short[n]}{getattr(k, n):g}" for n in short if getattr(k, n) is not None)


@dataclass(frozen=True)
class Instance:
    """One canonical instance: model ``eq`` on a shipped data set, class ``c``, fixed parameters."""

    eq: int
    dataset: str
    c: int
    kernel: Kernel | None = None
    p: float | None = None
    nu: float = LIBRARY_NU
    alpha: float = LIBRARY_ALPHA
    eps: float | None = None

    @property
    def stem(self) -> str:
        """Path of its files below the library root, without the extension."""
        variant = _kernel_tag(self.kernel) if self.kernel else ("p" + _p_text(self.p) if self.p else "")
        return f"{self.dataset}/eq{self.eq:02d}{'_' + variant if variant else ''}_c{self.c}"

    def build(self, X: np.ndarray, y: np.ndarray) -> pyo.ConcreteModel:
        return build(self.eq, X, y, self.c, self.nu, self.alpha, kernel=self.kernel, p=self.p, eps=self.eps)


def library_instances(datasets: Sequence[str] = LIBRARY_DATASETS) -> list[Instance]:
    """Every instance of the library, in manifest order (data set, equation, variant, class).

    (22) is included (it has no file; its manifest rows point to (23)).
    """
    out = []
    for name in datasets:
        classes = range(load_dataset(name).n_classes)
        specs: list[tuple[int, Kernel | None, float | None]] = []
        specs += [(eq, None, None) for eq in (2, 3, 4, 5)]
        specs += [(eq, k, None) for eq in (10, 11) for k in LIBRARY_KERNELS if k.name.endswith("poly")]
        specs += [(eq, k, None) for eq in (12, 13) for k in LIBRARY_KERNELS]
        specs += [(eq, None, None) for eq in (15, 16)]
        specs += [(19, k, None) for k in LIBRARY_KERNELS]
        specs += [(eq, None, p) for eq in (22, 23, 26) for p in LIBRARY_P]
        specs += [(27, None, 1.0), (28, None, 2.0), (29, None, math.inf)]
        for eq, k, p in specs:
            for c in classes:
                out.append(Instance(eq, name, c, kernel=k, p=p, eps=LIBRARY_EPS if p is not None else None))
    return out


def _counts(nl_text: bytes) -> tuple[int, int]:
    """Variables and rows as written: the counts in the ``.nl`` header (Pyomo's writers all drop
    the variables that appear in no active row or objective)."""
    head = nl_text.split(b"\n", 2)[1].split()
    return int(head[0]), int(head[1])


def _cbf_counts(cbf_text: bytes) -> dict[str, str]:
    """A ``.cbf`` file's own counts: its columns (``VAR``) and scalar rows (``CON``, every cone's rows),
    which include the conic form's auxiliary columns and its bound rows."""
    lines = cbf_text.decode("utf-8").split("\n")
    head = {lines[k]: lines[k + 1].split()[0] for k in range(len(lines) - 1) if lines[k] in ("VAR", "CON")}
    return {"n_variables": head["VAR"], "n_constraints": head.get("CON", "0")}


def _fmt_number(x: float, digits: int = OBJECTIVE_DIGITS) -> str:
    return f"{x:.{digits}g}"


def _structure(inst: Instance, label: str, model: pyo.ConcreteModel | None, nl_text: bytes = b"") -> dict[str, str]:
    row = {
        "model": str(inst.eq), "dataset": inst.dataset, "class": str(inst.c), "label": label,
        "nu": f"{inst.nu:g}", "alpha": f"{inst.alpha:g}", "kernel": str(inst.kernel) if inst.kernel else "",
        "p": _p_text(inst.p), "eps": "" if inst.eps is None else f"{inst.eps:g}",
    }
    if model is None:
        row.update({"model_class": "semi-infinite", "n_variables": "", "n_constraints": "", "sense": "min"})
        return row
    n_var, n_con = _counts(nl_text)
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    row.update({
        "model_class": model_class(model), "n_variables": str(n_var), "n_constraints": str(n_con),
        "sense": "min" if objective.sense == pyo.minimize else "max",
    })
    return row


def _note_22(inst: Instance) -> str:
    twin = Instance(23, inst.dataset, inst.c, p=inst.p, eps=inst.eps).stem
    return (f"not a finite program (one row per point of each uncertainty set (21)), so no file; "
            f"by Theorem 1 its optimum is that of (23) with the same data and parameters: {twin}.*")


@dataclass
class LibraryFile:
    """One file of the library: its path below the root and its (uncompressed) content."""

    path: str
    fmt: str
    content: bytes


LIBRARY_FORMATS = ("lp", "mps", "nl", "gms")
"""The formats of every instance (those that hold it)."""


ROBUST_FORMATS = ("cbf",)
"""The conic formats, for the robust instances only ((23), (26)-(29): the models a conic solver is for).
``ptf`` is not in the library: its writer is the optional ``mosek`` package, and the library must be
the same wherever it is regenerated or checked."""


def instance_files(inst: Instance, model: pyo.ConcreteModel) -> list[LibraryFile]:
    """The files of one instance: every format of :data:`LIBRARY_FORMATS` that holds it, and for a robust
    instance :data:`ROBUST_FORMATS`; gzip-compressed in the library."""
    holds = formats_for(model)
    wanted = LIBRARY_FORMATS + (ROBUST_FORMATS if inst.p is not None else ())
    formats = [f for f in wanted if f in holds]
    return [LibraryFile(f"{inst.stem}.{fmt}.gz", fmt, text) for fmt, text in model_texts(model, formats).items()]


def _library_rows(
    verify_solutions: bool, progress: Callable[[str], None] | None, instances: Sequence[Instance] | None = None
) -> tuple[list[dict[str, str]], list[LibraryFile]]:
    rows: list[dict[str, str]] = []
    files: list[LibraryFile] = []
    data = {}
    for inst in library_instances() if instances is None else instances:
        if inst.dataset not in data:
            d = load_dataset(inst.dataset)
            data[inst.dataset] = (min_max_scale(d.X), d.y, [str(x) for x in d.classes])
        X, y, labels = data[inst.dataset]
        if inst.eq == 22:
            rows.append({"file": "", "format": "", **_structure(inst, labels[inst.c], None),
                         "objective": "", "objective_scale": "", "verified_by": "", "max_rel_disagreement": "",
                         "note": _note_22(inst)})
            continue
        model = inst.build(X, y)
        these = instance_files(inst, model)
        structure = _structure(inst, labels[inst.c], model, next(f.content for f in these if f.fmt == "nl"))
        files += these
        solved = {"objective": "", "objective_scale": "", "verified_by": "", "max_rel_disagreement": "", "note": ""}
        if verify_solutions:
            if progress:
                progress(f"{inst.stem} ({structure['model_class']})")
            v = verify(model, structure["model_class"])
            solved = {
                "objective": _fmt_number(v.objective), "objective_scale": _fmt_number(v.scale, 3),
                "verified_by": ";".join(v.solvers), "max_rel_disagreement": f"{v.disagreement:.1e}",
                "note": "; ".join(v.notes),
            }
        for f in these:
            counts = _cbf_counts(f.content) if f.fmt == "cbf" else {}
            rows.append({"file": f.path, "format": f.fmt, **structure, **counts, **solved})
    return rows, files


def _manifest_bytes(rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def read_manifest(root: str | os.PathLike) -> list[dict[str, str]]:
    """The rows of ``root/manifest.csv``."""
    with open(Path(root) / MANIFEST, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def manifest_files(root: str | os.PathLike) -> set[str]:
    """The files (paths below ``root``) that ``root/manifest.csv`` says the library wrote; empty without one.

    A ``manifest.csv`` that is not the library's (its columns are not the manifest's: a user's table of that name)
    and a listed path that leaves ``root`` (absolute, or with ``..``) are refused (``ValueError``): the library
    never replaces that file, nor removes a file by such a listing."""
    root = Path(root)
    path = root / MANIFEST
    if not path.is_file():
        return set()
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        header = next(csv.reader(fh), [])
    if not header or header[0] != "file" or not set(STRUCTURAL_COLUMNS) <= set(header) \
            or not set(header) <= set(MANIFEST_COLUMNS):
        raise ValueError(f"{path} is not the library's manifest (its columns are {', '.join(header[:5]) or 'none'}"
                         f"{', ...' if len(header) > 5 else ''}): it is not the library's to replace; move it away, "
                         "or give another --root")
    listed = {row["file"] for row in read_manifest(root) if row.get("file")}
    outside = sorted(f for f in listed if Path(f).is_absolute() or ".." in Path(f).parts)
    if outside:
        raise ValueError(f"{path} lists {outside[0]}, which is not below {root}: it is not the library's manifest "
                         "(the library writes only below its folder); move it away, or give another --root")
    return listed


def generate_library(root: str | os.PathLike, progress: Callable[[str], None] | None = None) -> dict[str, object]:
    """Build every instance of the library, verify every optimum, and :func:`write_library` it to ``root``.

    Deterministic: the same code and solvers give the same bytes. Returns a summary (``files``, ``instances``,
    ``bytes``, ``seconds``, ``removed``: the paths removed).
    """
    start = time.perf_counter()
    rows, files = _library_rows(True, progress)
    summary = write_library(root, rows, files)
    return {**summary, "seconds": time.perf_counter() - start}


def write_library(root: str | os.PathLike, rows: list[dict[str, str]], files: Sequence[LibraryFile]) -> dict:
    """Write ``files`` (gzip-compressed) and the manifest of ``rows`` to ``root``, touching only the library's files.

    Under the lock of ``root/manifest.csv`` (:class:`tpm_models.files.FileLock`, taken before anything is written
    or removed): every file is written by :func:`tpm_models.files.write_bytes`; a file the old manifest lists and
    the new library does not have is removed (and named in ``removed``); every other file of ``root`` (a user's
    ``notes.md`` in ``root/iris/``) is left as it is. A file of the new library's names that the old manifest does
    not list and that differs from the new content is the user's: the write is refused (``ValueError`` naming it)
    before anything is written. The manifest is written last. Returns ``files``, ``instances``, ``bytes`` (of the
    library's files) and ``removed``."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(root / MANIFEST, "formulations library"):
        owned = manifest_files(root)
        contents = {f.path: gzip_bytes(f.content) for f in files}
        foreign = [path for path, data in contents.items()
                   if path not in owned and (root / path).exists() and (root / path).read_bytes() != data]
        if foreign:
            raise ValueError(f"{root / foreign[0]} (and {len(foreign) - 1} more) is not listed in {root / MANIFEST}: "
                             "it is not the library's to replace; move it away, or give another --root")
        for path, data in contents.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            write_bytes(root / path, data)
        removed = []
        for path in sorted(owned - set(contents)):
            target = root / path
            if target.is_file() and not target.is_symlink():
                target.unlink()
                removed.append(target)
        write_bytes(root / MANIFEST, _manifest_bytes(rows))
    size = sum((root / path).stat().st_size for path in contents) + (root / MANIFEST).stat().st_size
    instances = len({r["file"].rsplit(".", 2)[0] for r in rows if r["file"]})
    return {"files": len(files), "instances": instances, "bytes": size, "removed": removed}


def _key(row: dict[str, str]) -> tuple[str, ...]:
    """What identifies an instance in the manifest."""
    return tuple(row[k] for k in ("model", "dataset", "class", "kernel", "p"))


def check_library(root: str | os.PathLike, select: Callable[[Instance], bool] | None = None) -> list[str]:
    """Differences between the library at ``root`` and a fresh export, without solving (empty: equal).

    Always: the manifest lists the instances of :func:`library_instances` in order, and the files
    present are exactly the manifest's. For the instances ``select`` accepts (default: all), every
    file's decompressed text equals a fresh export by :func:`text_difference` (structure to the
    character, numbers to :data:`COEFFICIENT_RTOL`, so the check holds on every CPU) and the
    manifest's :data:`STRUCTURAL_COLUMNS` equal the fresh ones.
    """
    root = Path(root)
    if not (root / MANIFEST).is_file():
        return [f"missing {root / MANIFEST}"]
    problems = []
    committed = read_manifest(root)
    instances = library_instances()
    fresh_keys = []
    for inst in instances:
        key = (str(inst.eq), inst.dataset, str(inst.c), str(inst.kernel) if inst.kernel else "", _p_text(inst.p))
        if key not in fresh_keys:
            fresh_keys.append(key)
    committed_keys = list(dict.fromkeys(_key(r) for r in committed))
    if committed_keys != fresh_keys:
        problems.append(f"{MANIFEST}: its instances are not those of library_instances() "
                        f"({len(committed_keys)} vs {len(fresh_keys)})")
    listed = {r["file"] for r in committed if r["file"]}
    present = {p.relative_to(root).as_posix() for name in LIBRARY_DATASETS if (root / name).is_dir()
               for p in (root / name).rglob("*") if p.is_file()}
    problems += [f"missing file {p}" for p in sorted(listed - present)]
    problems += [f"file not in {MANIFEST}: {p}" for p in sorted(present - listed)]
    chosen = [inst for inst in instances if select is None or select(inst)]
    rows, files = _library_rows(False, None, chosen)
    by_file = {r["file"]: r for r in committed if r["file"]}
    by_key = {_key(r): r for r in committed if not r["file"]}
    for f in files:
        if f.path in present:
            difference = text_difference(read_text(root / f.path), f.content, statements=".gms" in f.path)
            if difference:
                problems.append(f"{f.path}: content differs from a fresh export ({difference})")
    for new in rows:
        old = by_file.get(new["file"]) if new["file"] else by_key.get(_key(new))
        if old is None:
            problems.append(f"{MANIFEST}: no row for {new['file'] or _key(new)}")
            continue
        diff = [k for k in STRUCTURAL_COLUMNS if old.get(k) != new[k]]
        if diff:
            problems.append(f"{MANIFEST} row {new['file'] or _key(new)}: {', '.join(diff)} differ from a fresh export")
    return problems
