"""``python -m benchmarks bench backends``: every installed backend that takes the model, on the paper's linear
models at a user's size (the survey behind the defaults by size, ``docs/solvers.md``).

The data are those of ``python -m benchmarks bench scale`` (:func:`~benchmarks.bench_scale.scale_data`: the
synthetic set, class 1 against the rest, ``nu = 0.3``, ``alpha = 1``, ``eps = 0.02``). For each model of
:data:`SURVEY_MODELS` (the primals (15), (23) at :math:`p \\in \\{1, 1.5, 2, 3, \\infty\\}`, (26)-(29); the duals
(16), (23D), (27D)-(29D); and (22) by cutting planes, :func:`tpm_models.checks.solve_22_cutting_plane`, whose masters
each backend solves in turn), each size and each installed backend that takes the model's class
(:func:`~tpm_models.solvers.backends.registry.available_solvers`), a **fresh process** builds the model and runs
``solve(model, backend, time_limit=...)`` (PIQP and DAQP honour no time limit: the process is ended after
``time_limit`` plus the build's allowance, and the row says "timeout"). A row: the status (``optimal``, a
failure, ``refused`` with the backend's reason, ``licence limit``, ``timeout``), ``certified``
(:attr:`~tpm_models.solvers.SolveResult.certified`: the certificate on the model as written), the build and solve
seconds (wall, ``solve()`` alone), the process's peak memory, and, against the **certified default** of the same model
and size (the first of :func:`~tpm_models.solvers.backends.registry.default_candidates` with a row that is not
refused, as ``solve(model)`` would pick, when it is certified), the objective's difference relative to
:math:`\\max(|f^{\\rm def}|, 10^{-4})` (:data:`OBJ_FLOOR`, as ``bench scale``'s accuracy table) and
:math:`\\max_j |w_j - w^{\\rm def}_j|`. The cutting planes' reference is the certified default of (23) at the
same :math:`p` (Theorem 1: the same optimum).

**What is not run, and why (a row says so):** (16) and (23D) hold the dense :math:`m_c \\times m_c` Gram block
:math:`X_c X_c^\\top` as Pyomo quadratic terms (:math:`m_c^2/2`: 3.1e6 at 10^4 points, where reading the model's class
alone took 92 s), so they run up to :data:`DENSE_DUAL_MAX_POINTS` points only; a backend that timed out, ran out of
memory or hit its licence's size limit at a smaller size is not run at a larger one.

With a results store (:class:`BackendStore`, the rules of :mod:`tpm_models.experiments.store`) every finished row is
appended at once, and ``resume`` reuses the rows of the same configuration: the survey runs in short pieces.
"""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from benchmarks import child_env
from benchmarks.bench_scale import SCALE_ALPHA, SCALE_CLASS, SCALE_EPS, SCALE_NU, scale_data
from benchmarks.pages import fmt
from tpm_models.checks import solve_22_cutting_plane
from tpm_models.experiments.store import ResultStore
from tpm_models.models.registry import build
from tpm_models.solvers import NoOptimalSolutionError, SolverUnavailableError
from tpm_models.solvers.backends.registry import available_solvers, default_candidates, honoured_time_limit, model_size
from tpm_models.solvers.dispatch import is_licence_limit, solve
from tpm_models.solvers.structure import model_class

SURVEY_MODELS: tuple[tuple[int | str, float | None], ...] = (
    (15, None), (23, 1.0), (23, 1.5), (23, 2.0), (23, 3.0), (23, math.inf), (26, 1.5), (27, None), (28, None),
    (29, None), (16, None), ("23D", 1.0), ("23D", 2.0), ("27D", None), ("28D", None), ("29D", None), (22, 2.0),
)
"""``(registry key, p)`` of the survey: the models of ``bench scale``, the duals that exist as builders, (22) by
cutting planes."""

DENSE_DUALS = (16, "23D")
"""The duals written with the dense Gram block :math:`X_c X_c^\\top` (:func:`tpm_models.models.shapes.dual`)."""

DENSE_DUAL_MAX_POINTS = 2_000
"""The largest size at which the dense duals are built (module docstring)."""

TIME_LIMIT = 120.0
"""Seconds per solve (``solve(..., time_limit=)``); the process gets :data:`BUILD_ALLOWANCE` more."""

BUILD_ALLOWANCE = 120.0
"""Seconds for the process's imports, data and build beyond the solve's time limit."""

MEMORY_LIMIT_GB = 12.0
"""Address-space limit of each process (``RLIMIT_AS``): a backend that wants more ends with a memory error, a row,
instead of the machine's out-of-memory killer."""

OBJ_FLOOR = 1e-4
"""The least denominator of an objective's relative difference: the primal objectives here are 1e-5 to 1e-4, and 0 at
:math:`p = \\infty` (:math:`w = 0`, :math:`\\theta = 0`: every term vanishes), where a difference relative to the
objective would be noise."""

HOPELESS = ("timeout", "memory", "licence limit")
"""Statuses after which a backend is not run on the same model at a larger size."""


class BackendStore(ResultStore):
    """The rows of :func:`bench_backends`: key ``(model, m, backend)``."""

    key_names = ("model", "m", "backend")
    result_fields = ("status", "certified", "objective")


def label(key: int | str, p: float | None) -> str:
    """``(23) p=1.5``, ``(16)``, ``(22) p=2 cutting planes``."""
    text = f"({key})" + ("" if p is None else f" p={p:g}")
    return text + " cutting planes" if key == 22 else text


def parse_models(specs: Sequence[str]) -> tuple[tuple[int | str, float | None], ...]:
    """``["15", "23:1.5", "23D:2", "22:2"]`` -> ``((15, None), (23, 1.5), ("23D", 2.0), (22, 2.0))``; a model must
    be one of :data:`SURVEY_MODELS`' keys and take a p when it needs one."""
    keys = {str(k): k for k, _ in SURVEY_MODELS}
    needs_p = {str(k) for k, p in SURVEY_MODELS if p is not None}
    out = []
    for spec in specs:
        key, _, p = spec.partition(":")
        if key not in keys or (key in needs_p) != bool(p):
            raise ValueError(f"model {spec!r}: give one of 15, 23:P, 26:P, 27, 28, 29, 16, 23D:P, 27D, 28D, 29D, "
                             "22:P (P a number >= 1 or inf)")
        out.append((keys[key], float(p) if p else None))
    return tuple(out)


def _options(key: int | str, p: float | None) -> dict:
    if key in (15, 16):
        return {}
    return {"eps": SCALE_EPS, **({"p": p} if p is not None else {})}


def model_kind(key: int | str, p: float | None) -> str:
    """The model's class (:func:`~tpm_models.solvers.structure.model_class`, which does not depend on the size: read
    on 60 points); ``"QP"`` for (22), whose masters are (15) with cuts."""
    if key == 22:
        return "QP"
    X, y = scale_data(60)
    return model_class(build(key, X, y, SCALE_CLASS, SCALE_NU, SCALE_ALPHA, **_options(key, p)))


def backend_row(key: int | str, p: float | None, m: int, backend: str, time_limit: float) -> dict:
    """Build the model on :func:`scale_data` (``m`` points) and solve it with ``backend`` (run in a fresh process by
    :func:`run_backend_row`); (22): :func:`tpm_models.checks.solve_22_cutting_plane` with ``backend`` for the
    masters."""
    X, y = scale_data(m)
    if key == 22:
        return _cutting_planes(X, y, p, backend)
    start = time.perf_counter()
    model = build(key, X, y, SCALE_CLASS, SCALE_NU, SCALE_ALPHA, **_options(key, p))
    row = {"build": time.perf_counter() - start, "variables": model_size(model)}
    start = time.perf_counter()
    try:
        r = solve(model, backend, time_limit=honoured_time_limit(backend, time_limit), raise_on_failure=False)
    except SolverUnavailableError as exc:
        return {**row, "status": "refused", "certified": False, "objective": None, "message": str(exc)[:300]}
    except MemoryError:
        return {**row, "status": "memory", "certified": False, "objective": None, "message": "MemoryError"}
    seconds = time.perf_counter() - start
    status = "licence limit" if is_licence_limit(r) else r.termination.value
    w = r.values.get("w") if r.optimal else None
    return {**row, "solve": seconds, "status": status, "certified": r.certified,
            "objective": r.objective, "message": r.message[:300],
            "w": None if w is None else np.asarray(w, dtype=float).tolist()}


def _cutting_planes(X: np.ndarray, y: np.ndarray, p: float, backend: str) -> dict:
    start = time.perf_counter()
    try:
        r = solve_22_cutting_plane(X, y, SCALE_CLASS, SCALE_NU, SCALE_ALPHA, p, SCALE_EPS, solver=backend)
    except SolverUnavailableError as exc:
        return {"status": "refused", "certified": False, "objective": None, "message": str(exc)[:300]}
    except NoOptimalSolutionError as exc:
        status = "licence limit" if is_licence_limit(exc.result) else exc.result.termination.value
        return {"status": status, "certified": False, "objective": None, "solve": time.perf_counter() - start,
                "message": f"a master failed: {exc.result.message[:250]}"}
    except RuntimeError as exc:
        return {"status": "max rounds", "certified": False, "objective": None, "solve": time.perf_counter() - start,
                "message": str(exc)[:300]}
    return {"solve": r.seconds, "status": "optimal", "certified": False, "objective": r.objective,
            "rounds": r.rounds, "message": f"{r.message}; max violation {r.max_violation:.1e}",
            "w": np.asarray(r.w, dtype=float).tolist()}


def _limit_memory(gigabytes: float) -> Callable[[], None]:
    def limit() -> None:
        size = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return limit


def run_backend_row(key: int | str, p: float | None, m: int, backend: str, time_limit: float = TIME_LIMIT,
                    memory_gb: float = MEMORY_LIMIT_GB) -> dict:
    """:func:`backend_row` in a fresh interpreter, with its peak memory; ``timeout`` after ``time_limit`` plus
    :data:`BUILD_ALLOWANCE` seconds, ``memory`` when it ran out of its ``memory_gb``, ``error`` otherwise."""
    code = ("import json, logging, sys, warnings\n"
            "logging.disable(logging.WARNING); warnings.filterwarnings('ignore')\n"
            "from benchmarks.bench_backends import backend_row\n"
            "from tpm_models.experiments.run_info import peak_rss_mb\n"
            "key, p, m, backend, limit = json.loads(sys.argv[1])\n"
            "out = backend_row(key, p, m, backend, limit)\n"
            "out['peak_mb'] = peak_rss_mb()\n"
            "print('RESULT' + json.dumps(out))")
    spec = json.dumps([key, p, m, backend, time_limit])  # p = inf is written Infinity, which json.loads reads
    try:
        done = subprocess.run([sys.executable, "-c", code, spec], capture_output=True, text=True, env=child_env(),
                              timeout=time_limit + BUILD_ALLOWANCE, preexec_fn=_limit_memory(memory_gb))
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "certified": False, "objective": None,
                "message": f"process ended after {time_limit + BUILD_ALLOWANCE:g} s"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[6:])
    tail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1][:200]
    status = "memory" if "MemoryError" in done.stderr or "bad_alloc" in done.stderr else "error"
    return {"status": status, "certified": False, "objective": None, "message": tail}


def _config(time_limit: float, memory_gb: float) -> dict:
    return {"nu": SCALE_NU, "alpha": SCALE_ALPHA, "eps": SCALE_EPS, "class": SCALE_CLASS, "time_limit": time_limit,
            "memory_gb": memory_gb}


def _open_store(path: str, resume: bool) -> tuple[BackendStore, list[dict]]:
    store = BackendStore(path)
    if store.path.exists() and not resume:
        raise ValueError(f"the results store {store.path} exists: pass --resume to reuse its rows, or remove it")
    store.check_recognised()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.lock()
    records, bad = store.check_recognised()
    if bad:
        store.set_aside(bad)
        store.rewrite(records)
    return store, records


def bench_backends(sizes: Sequence[int] = (1_000, 10_000, 100_000),
                   models: Sequence[tuple[int | str, float | None]] = SURVEY_MODELS,
                   solvers: Sequence[str] | None = None, time_limit: float = TIME_LIMIT,
                   memory_gb: float = MEMORY_LIMIT_GB, store: str | None = None, resume: bool = False,
                   progress: Callable[[str], None] | None = print, run: bool = True) -> list[dict]:
    """One row per (model, size, backend) (module docstring), sizes in increasing order; ``solvers``: only these
    (default: every installed backend that takes the model's class); ``run=False``: only the rows ``store`` holds."""
    config = _config(time_limit, memory_gb)
    if store and not run:  # read only: no lock, nothing written
        result_store, records = None, BackendStore(store).check_recognised()[0]
    else:
        result_store, records = _open_store(store, resume) if store else (None, [])
    have = {tuple(r["key"]): r for r in records if r["config"] == config}
    rows: list[dict] = []
    try:
        for m in sorted(sizes):
            for key, p in models:
                name, kind = label(key, p), model_kind(key, p)
                for backend in [s for s in available_solvers(kind) if solvers is None or s in solvers]:
                    row = {"model": name, "key": str(key), "p": p, "m": m, "backend": backend, "kind": kind}
                    rec = have.get((name, m, backend))
                    if rec is not None:
                        rows.append({**row, **rec["result"], "reused": True})
                        continue
                    skip = _skip_reason(key, m, backend, name, rows)
                    if not run and not skip:
                        continue
                    if progress:
                        progress(f"  {name} m={m} {backend}{': ' + skip if skip else ' ...'}")
                    result = ({"status": "not run", "certified": False, "objective": None, "message": skip} if skip
                              else run_backend_row(key, p, m, backend, time_limit, memory_gb))
                    rows.append({**row, **result})
                    if result_store is not None and not skip:
                        result_store.append({"key": [name, m, backend], "config": config, "result": result,
                                             "timing": {"solve": result.get("solve")}})
    finally:
        if result_store is not None:
            result_store.unlock()
    return rows


def _skip_reason(key: int | str, m: int, backend: str, name: str, rows: list[dict]) -> str:
    if key in DENSE_DUALS and m > DENSE_DUAL_MAX_POINTS:
        return (f"not built above {DENSE_DUAL_MAX_POINTS:,} points: the dense m_c x m_c Gram block as Pyomo quadratic "
                f"terms (about {(m / 4) ** 2 / 2:.1e})")
    for r in rows:
        if r["model"] == name and r["backend"] == backend and r["m"] < m and r["status"] in HOPELESS:
            return f"{r['status']} at {r['m']:,} points"
    return ""


def reference_rows(rows: list[dict]) -> dict[tuple[str, int], dict]:
    """The reference of each (model, size): the default's row (the first of ``default_candidates`` with a row that is
    not refused or not run, or the next after a failure, as ``solve(model)`` falls back) when it is optimal and
    certified (an uncertified default is no reference: the differences are left blank); for (22), that of (23) at the
    same p."""
    by = {(r["model"], r["m"], r["backend"]): r for r in rows}
    out = {}
    for (name, m, _), r in by.items():
        if (name, m) in out or r["key"] == "22":
            continue
        size = next((x["variables"] for x in rows if x["model"] == name and x["m"] == m and x.get("variables")), 0)
        for cand in default_candidates(r["kind"], size):
            row = by.get((name, m, cand))
            if row is None or row["status"] in ("refused", "not run"):
                continue
            if row["status"] == "optimal":  # the default's answer; a reference only when certified
                out[(name, m)] = {**row, "default": cand} if row["certified"] else {"default": cand}
                break
            out[(name, m)] = {"default": cand}  # the default failed: solve(model) falls back to the next candidate
    for r in rows:
        if r["key"] == "22":
            out[(r["model"], r["m"])] = out.get((label(23, r["p"]), r["m"]), {})
    return out


def _f(value, fmt: str = "{:.2f}") -> str:
    return "" if value is None else fmt.format(value)


def differences(r: dict, ref: dict) -> tuple[float | None, float | None]:
    """The objective's difference relative to the reference's (floor :data:`OBJ_FLOOR`) and :math:`\\max_j |w_j -
    w^{\\rm def}_j|`, for an optimal row beside a reference that has them (else ``None``)."""
    rel = dw = None
    if r["status"] == "optimal" and r.get("objective") is not None and ref.get("objective") is not None:
        rel = abs(r["objective"] - ref["objective"]) / max(abs(ref["objective"]), OBJ_FLOOR)
    if r["status"] == "optimal" and r.get("w") and ref.get("w") and len(r["w"]) == len(ref["w"]):
        dw = float(np.max(np.abs(np.asarray(r["w"]) - np.asarray(ref["w"]))))
    return rel, dw


def _certified(r: dict) -> str:
    return "n/a" if r["key"] == "22" and r["status"] == "optimal" else ("yes" if r.get("certified") else "no")


CSV_COLUMNS = ("model", "m", "variables", "backend", "default", "status", "certified", "build_s", "solve_s", "peak_mb",
               "obj_rel_diff", "max_w_diff")
"""The header of the page's CSV (``--csv``, :func:`csv_rows`): :func:`backends_table`'s columns without the note, and
``default`` (``yes`` for the certified default the differences are taken from)."""
CSV_TITLES = ("model", "m", "variables", "backend", "default", "status", "certified", "build s", "solve s", "peak MB",
              "obj. rel. diff", "max abs w diff")
"""The page's column titles, in the order of :data:`CSV_COLUMNS`."""


def csv_rows(rows: list[dict]) -> list[dict[str, str]]:
    """:func:`bench_backends`' rows as the cells of the page's CSV (:data:`CSV_COLUMNS`; the numbers in the
    table's formats, an empty cell where there is none)."""
    refs = reference_rows(rows)
    out = []
    for r in rows:
        ref = refs.get((r["model"], r["m"]), {})
        rel, dw = differences(r, ref)
        out.append({"model": r["model"], "m": str(r["m"]), "variables": fmt(r.get("variables"), "d"),
                    "backend": r["backend"], "default": "yes" if ref.get("default") == r["backend"] else "no",
                    "status": r["status"], "certified": _certified(r), "build_s": fmt(r.get("build")),
                    "solve_s": fmt(r.get("solve")), "peak_mb": fmt(r.get("peak_mb"), ".0f"),
                    "obj_rel_diff": fmt(rel, ".1e"), "max_w_diff": fmt(dw, ".1e")})
    return out


def backends_table(rows: list[dict]) -> str:
    """The Markdown table of :func:`bench_backends`' rows; the default's backend in bold."""
    refs = reference_rows(rows)
    lines = ["| model | m | variables | backend | status | certified | build s | solve s | peak MB | obj. rel. diff | "
             "max abs w diff | note |", "|" + "---|" * 12]
    for r in rows:
        ref = refs.get((r["model"], r["m"]), {})
        rel, dw = differences(r, ref)
        backend = f"**{r['backend']}**" if ref.get("default") == r["backend"] else r["backend"]
        note = r.get("message", "") or ""
        if r.get("rounds"):
            note = f"{r['rounds']} rounds, {r['solve'] / r['rounds']:.2f} s/round; " + note
        note = note.replace("|", "/").replace("\n", " ")[:160]
        certified = _certified(r)
        lines.append(f"| {r['model']} | {r['m']:,} | {_f(r.get('variables'), '{:,}')} | {backend} "
                     f"| {r['status']} | {certified} | {_f(r.get('build'))} | "
                     f"{_f(r.get('solve'))} | {_f(r.get('peak_mb'), '{:.0f}')} | {_f(rel, '{:.1e}')} | "
                     f"{_f(dw, '{:.1e}')} | {note} |")
    return "\n".join(lines)


MARKS = {"timeout": "timeout", "licence limit": "licence", "refused": "refused", "not run": "—", "memory": "memory"}
"""How :func:`pivot_table` writes a row that has no time to show."""


COLUMNS = ("piqp", "clarabel", "daqp", "highs", "ipopt", "scip", "cplex", "gurobi", "xpress", "mosek")
"""The columns of :func:`pivot_table`: the defaults first, then the others; a backend not named here comes last."""


def _cell(r: dict, ref: dict, default: str | None) -> str:
    if r["status"] in MARKS:
        return MARKS[r["status"]]
    if r["status"] != "optimal":
        return f"{_f(r.get('solve'), '{:.2f}')} {r['status']}".strip()
    text = _f(r.get("solve"))
    if not r.get("certified") and r["key"] != "22":
        text += " u"
    if r["backend"] != default and ref.get("objective") is not None and r.get("objective") is not None:
        rel = abs(r["objective"] - ref["objective"]) / max(abs(ref["objective"]), OBJ_FLOOR)
        if rel > 1e-7:
            text += f" ({rel:.0e})"
    return f"**{text}**" if default == r["backend"] else text


def pivot_table(rows: list[dict]) -> str:
    """One line per (model, size), one column per backend: the seconds of ``solve()``; the default in bold; ``u``:
    optimal but not certified; ``(3e-06)``: the objective's relative difference from the certified default when
    above 1e-7; else the status (``timeout``, ``licence``, ``refused``, a failure, ``—``: not run)."""
    refs = reference_rows(rows)
    seen = list(dict.fromkeys(r["backend"] for r in rows))
    backends = [b for b in COLUMNS if b in seen] + [b for b in seen if b not in COLUMNS]
    cases = list(dict.fromkeys((r["model"], r["m"]) for r in rows))
    lines = ["| model | m | variables | " + " | ".join(backends) + " |", "|" + "---|" * (3 + len(backends))]
    for name, m in cases:
        here = {r["backend"]: r for r in rows if r["model"] == name and r["m"] == m}
        size = next((r["variables"] for r in here.values() if r.get("variables")), None)
        ref = refs.get((name, m), {})
        default = ref.get("default") if "cutting" not in name else None
        cells = [_cell(here[b], ref, default) if b in here else "" for b in backends]
        lines.append(f"| {name} | {m:,} | {_f(size, '{:,}')} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
