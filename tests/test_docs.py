"""The documentation site: its code runs as written, its names exist, it builds in strict mode.

Truths: the dual constant computed by hand from the data; an external solver (ripopt) on the
exported ``.nl`` file; the primal's ``w`` against the classifier's recovered ``w``; the fast
path (numpy + DAQP) against the Pyomo classifier; the norms of the oracle's perturbations;
Theorem 1 through cutting planes that never write the dual norm; and KaTeX itself on every
formula of the built site.
"""

import html
import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HAND_WRITTEN = ("index", "tour", "equations", "derivations", "solvers", "robust", "formulations", "api", "verify",
                "robustify", "wasserstein")


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of a page, in order (blocks indented inside lists are examples, not run)."""
    return re.findall(r"^```python\n(.*?)^```", (DOCS / f"{page}.md").read_text(), flags=re.S | re.M)


def run_blocks(page: str, namespace: dict) -> None:
    for k, code in enumerate(python_blocks(page)):
        exec(compile(code, f"docs/{page}.md, python block {k + 1}", "exec"), namespace)


def printed(text: str) -> list[list[float]]:
    """Every printed line as the floats on it (words and brackets ignored)."""
    number = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf)"
    return [[float(x) for x in re.findall(number, line)] for line in text.strip().split("\n")]


def test_tour_runs_and_its_numbers_hold(capsys):
    namespace: dict = {}
    run_blocks("index", namespace)  # Home has no code today; any it gets runs first
    assert len(python_blocks("tour")) == 5
    run_blocks("tour", namespace)
    out = capsys.readouterr().out
    ns = namespace
    X, y, p, q = ns["X"], ns["y"], ns["p"], ns["q"]

    # 1. the solve: optimal, and the value the text quotes (-1.19978e-3)
    assert p.optimal and p.solver == "piqp"
    assert abs(p.objective - -1.19978e-3) < 1e-8
    assert out.split("\n")[0].split()[:2] == ["piqp", "optimal"]

    # 2. strong duality with the constant computed here from the data, not by dual_constant
    other = X[y != 1]
    kappa = -0.5 * (0.3 / len(other)) ** 2 * float(np.sum(other.sum(axis=0) ** 2))
    assert abs(ns["kappa"] - kappa) <= 1e-14 * abs(kappa)
    assert abs(p.objective - (q.objective + kappa)) <= 1e-8 * abs(p.objective)
    primal_line = printed(out)[3]  # print(p.objective, q.objective + kappa)
    assert abs(primal_line[0] - primal_line[1]) <= 1e-8 * abs(primal_line[0])
    assert abs(q.objective - p.objective) > 20 * abs(p.objective)  # without kappa: a false gap, as the text says
    np.testing.assert_allclose(p.duals["margin"], q.values["lam"], atol=1e-8)  # the text's claim

    # 3. the .nl file: written, non-empty, cleaned up, and solved by an external solver to the same optimum
    assert ns["size"] > 1000 and not ns["path"].exists()
    assert ns["formats_for"](ns["primal"]) == ("lp", "mps", "nl", "gms", "cbf", "ptf")
    external = ns["external"]
    assert external.status == "Optimal"
    assert abs(external.objective - p.objective) <= 1e-6 * abs(p.objective)

    # 4. the classifier: the recovered w of versicolor is the primal's; the fast path predicts the same
    from tpm_models.learn.fastqp import FastOneVsAll

    clf, train, test, labels = ns["clf"], ns["train"], ns["test"], ns["labels"]
    fitted_on_all = type(clf)(nu=0.3, alpha=1.0).fit(X, labels)
    assert np.max(np.abs(fitted_on_all.coef_[1] - p.values["w"])) < 1e-10
    assert len(test) == 38
    predicted = clf.predict(X[test])
    fast = FastOneVsAll(nu=0.3, alpha=1.0).fit(X[train], y[train])
    np.testing.assert_array_equal(predicted, ns["d"].classes[fast.predict(X[test])])
    assert (predicted == labels[test]).sum() == 35  # "35 of the 38", as the text says
    assert printed(out)[-2] == [pytest.approx(35 / 38)]

    # 5. Theorem 1: (28) and (22) by cutting planes, and the value the text quotes (-6.8396e-4)
    socp, cp = ns["socp"], ns["cp"]
    assert abs(socp.objective - cp.objective) <= 1e-7 * abs(cp.objective)
    assert abs(cp.objective - -6.8396e-4) < 5e-9
    assert cp.lower_bound <= cp.objective + 1e-12


def test_derivations_run_and_hold(capsys):
    namespace: dict = {}
    run_blocks("derivations", namespace)
    capsys.readouterr()
    ns = namespace
    X, y, c, nu = ns["X"], ns["y"], ns["c"], ns["nu"]
    primal, dual = ns["primal"], ns["dual"]
    from tpm_models.models.norms import dual_norm, norm
    from tpm_models.models.shapes import dual_constant

    # the omitted constant: e'X'Xe written out as a double sum of inner products
    other = X[y != c]
    gram_sum = sum(float(a @ b) for a in other for b in other)
    kappa = -0.5 * (nu / len(other)) ** 2 * gram_sum
    assert abs(dual_constant(other, nu) - kappa) <= 1e-12 * abs(kappa)
    assert abs(primal.objective - (dual.objective + kappa)) <= 1e-8 * abs(primal.objective)
    assert abs(dual.duals["sum_lam"] - primal.values["theta"]) < 1e-8  # free SVs exist: theta is unique

    # nu/alpha invariance
    s = ns["s"]
    np.testing.assert_allclose(ns["scaled"].values["w"], s * primal.values["w"], rtol=1e-7)
    assert abs(ns["scaled"].objective - s**2 * primal.objective) <= 1e-8 * abs(s**2 * primal.objective)
    assert ns["same"]

    # Hoelder: the last oracle of the loop (p = inf) attains eps |w|_1 on the sphere
    w, delta = ns["w"], ns["delta"]
    assert abs(norm(delta, float("inf")) - 0.02) < 1e-15
    assert abs(delta @ w - 0.02 * np.abs(w).sum()) < 1e-15

    # Theorem 1 at p = 3, and the perspective rows tight at the optimum of (26)
    r23, cp, r26 = ns["r23"], ns["cp"], ns["r26"]
    assert abs(r23.objective - cp.objective) <= 1e-6 * abs(cp.objective)
    assert cp.lower_bound <= cp.objective + 1e-12
    assert abs(r26.objective - r23.objective) <= 1e-6 * abs(r23.objective)
    assert abs(r26.values["r"] - dual_norm(r26.values["w"], 3)) < 1e-7
    assert abs((r26.values["u"] - r26.values["v"]) - r26.values["t"] ** 2) < 1e-9


def page_commands(page: str) -> list[tuple[list[str], int]]:
    """The ``tpm-models`` commands of a page's ```bash blocks, each with the exit code its comment says (0 else)."""
    out = []
    for block in re.findall(r"^```bash\n(.*?)^```", (DOCS / f"{page}.md").read_text(), re.S | re.M):
        for line in block.strip().split("\n"):
            command, _, comment = line.partition("#")
            code = re.search(r"exit (\d+)", comment)
            out.append((command.split()[1:], int(code.group(1)) if code else 0))
    return out


def test_verify_page_runs_and_its_numbers_hold(tmp_path, monkeypatch, capsys):
    """docs/verify.md: the robust (2) written and registered outside the package (with its nominal model and
    uncertain data) is verified by both routes, the wrong variant is rejected at a delta that breaks its row, the
    model is exported, and the page's commands exit as it says. Truths: the closed form (25) of the semi-infinite
    objective of the robust (2), computed here with numpy, at the routes' points and at the counterpart solved by
    another solver (Clarabel); the row recomputed by hand at the printed delta."""
    from tpm_models import build, solve
    from tpm_models.models.registry import REGISTRY

    blocks = python_blocks("verify")
    assert len(blocks) == 5
    (tmp_path / "robust_2.py").write_text(blocks[0])
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("robust_2", None)
    for key in ("2RP", "2RW"):
        monkeypatch.delitem(REGISTRY, key, raising=False)
    namespace: dict = {}
    try:
        for k, code in enumerate(blocks[1:], start=2):
            exec(compile(code, f"docs/verify.md, python block {k}", "exec"), namespace)
        out = capsys.readouterr().out
        ns = namespace
        X, y, c, nu, alpha, eps = ns["X"], ns["y"], ns["c"], ns["nu"], ns["alpha"], ns["eps"]

        def closed(Xd, yd, w, theta):  # (2) under (21), p = 2: the worst cases by (25), optimal xi
            plus, minus = yd == c, yd != c
            xi = np.maximum(0.0, -(Xd[plus] @ w + theta - eps * np.linalg.norm(w)))
            return (0.5 * w @ w + nu / minus.sum() * (Xd[minus] @ w + theta + eps * np.linalg.norm(w)).sum()
                    + alpha / plus.sum() * xi.sum())

        v, vp, wrong = ns["v"], ns["vp"], ns["wrong"]
        assert ns["info"].nominal == 2 and ns["info"].verifiable
        assert v.verified and "VERIFIED" in out
        si = v.semi_infinite
        assert abs(si.objective - closed(X, y, si.values["w"], si.values["theta"])) <= 1e-12
        # another solver on the registered counterpart: its optimum is the closed form at its point, and the
        # cutting planes' optimum (CLOSED_TOL: Clarabel's 1e-9 gap on an objective of order 1e-3)
        other = solve(build("2RP", X, y, c, nu, alpha, p=2.0, eps=eps), "clarabel")
        truth = closed(X, y, other.values["w"], other.values["theta"])
        assert abs(other.objective - truth) <= 1e-7 * abs(truth)
        assert abs(si.objective - truth) <= 1e-7 * abs(truth)
        assert abs(v.counterpart_objective - truth) <= 1e-7 * abs(truth)
        keep = ns["keep"]
        assert vp.semi_infinite.termination == "robust_optimal" and vp.verified
        sp = vp.semi_infinite
        assert abs(sp.objective - closed(X[keep], y[keep], sp.values["w"], sp.values["theta"])) <= 1e-12
        small = solve(build("2RP", X[keep], y[keep], c, nu, alpha, p=2.0, eps=eps), "clarabel")
        assert abs(sp.objective - small.objective) <= 1e-6 * abs(small.objective)
        # the wrong norm: rejected, its row broken at the printed delta (by hand), its optimum below the truth
        assert not wrong.verified and "NOT a counterpart" in wrong.table() and "violating point" in wrong.table()
        delta = wrong.violating_delta
        assert abs(np.linalg.norm(delta) - eps) <= 1e-12
        i = int(wrong.violating_row.split("[")[1].rstrip("]"))
        cv = wrong.counterpart_values
        k = int(np.flatnonzero(np.flatnonzero(y == c) + 1 == i)[0])
        row = (X[i - 1] + delta) @ cv["w"] + cv["theta"] + cv["xi"][k]
        assert row < -1e-4 and abs(row + wrong.violation) <= 1e-9
        assert wrong.counterpart_objective < truth - 1e-6
        assert ns["size"] > 1000 and "nl" in ns["formats_for"](ns["counterpart"])
        # the page's commands, as written, each in a process of its own (the plugin is the file saved above)
        commands = page_commands("verify")
        assert len(commands) == 5
        outputs = []
        for argv, expected in commands:
            done = subprocess.run([sys.executable, "-m", "tpm_models.cli", *argv], cwd=tmp_path, capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == expected, (argv, done.stdout[-2000:], done.stderr[-2000:])
            assert "Traceback" not in done.stderr
            outputs.append(done.stdout)
        assert "VERIFIED" in outputs[0] and "robust (2) under (21), p=2" in outputs[0]
        printed_si = float(next(line for line in outputs[0].splitlines()
                                if line.startswith("semi-infinite optimum")).split()[-1])
        assert abs(printed_si - truth) <= 1e-7 * abs(truth)
        assert "robust_optimal" in outputs[1] and "VERIFIED" in outputs[1]
        assert "NOT a counterpart" in outputs[2] and "violating point: row margin[" in outputs[2]
        assert "VERIFIED" in outputs[3]
        assert (tmp_path / "robust_2.nl").stat().st_size > 1000
    finally:
        for key in ("2RP", "2RW"):
            REGISTRY.pop(key, None)
        for name in ("robust_2", "tpm_models_plugin_robust_2"):
            sys.modules.pop(name, None)


def test_robustify_page_runs_and_its_numbers_hold(tmp_path, monkeypatch, capsys):
    """docs/robustify.md: a production LP made robust under a box, an ellipsoid and a budget set, and the paper's
    15R. Truths: the nominal LP and the box's counterpart (every time 10% up, x >= 0) by scipy's linprog; the
    budget set's counterpart as an LP over every point of {0, 1/2, 1}^3 in the set (its vertices among them), by
    linprog; the inclusions box > ellipsoid, box > budget set; the verifier's own semi-infinite solves; the
    hand-written (23), (27)-(29); the page's commands' exit codes."""
    import itertools

    from scipy.optimize import linprog

    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    run_blocks("robustify", namespace)
    out = capsys.readouterr().out
    ns = namespace
    profit, hours, capacity = ns["profit"], ns["hours"], ns["capacity"]

    def lp(rows, rhs):
        r = linprog(-profit, A_ub=rows, b_ub=rhs, bounds=[(0, None)] * 3, method="highs")
        assert r.status == 0
        return r.fun

    assert abs(ns["plain"].objective - lp(hours, capacity)) <= 1e-8 * abs(lp(hours, capacity))
    results = ns["results"]
    box = lp(1.1 * hours, capacity)
    assert abs(results["box"].objective - box) <= 1e-8 * abs(box)
    points = [z for z in itertools.product((0.0, 0.5, 1.0), repeat=3) if sum(z) <= 1.5]
    rows = [hours[k] * (1 + 0.1 * np.array(z)) for k in range(3) for z in points]
    budget = lp(np.array(rows), np.repeat(capacity, len(points)))
    assert abs(results["budget"].objective - budget) <= 1e-8 * abs(budget)
    assert results["box"].objective > results["ellipsoid"].objective + 1e-3
    assert results["box"].objective > results["budget"].objective + 1e-3
    assert results["ellipsoid"].objective > ns["plain"].objective + 1e-3
    for name, v in ns["checks"].items():
        assert v.verified and v.gap <= 1e-9, (name, v.table())
    assert "production plan" in str(ns["nominal"].name) and ns["nominal"].component("abs_x") is None
    assert (tmp_path / "production_ellipsoid.lp").stat().st_size > 500
    lines = [line for line in out.splitlines() if line.startswith("p=")]
    assert len(lines) == 4
    for line in lines:
        _, _, derived, _, written = printed(line)[0]  # p, 15, 15R's optimum, the twin's key, its optimum
        assert abs(derived - written) <= 2e-10  # printed to 1e-10; the solves agree to 1e-8 relative or better
    robustify_page_sets(ns, out)
    commands = page_commands("robustify")
    assert len(commands) == 6
    for argv, expected in commands:
        done = subprocess.run([sys.executable, "-m", "tpm_models.cli", *argv], cwd=tmp_path, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == expected, (argv, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr
        if expected == 0:
            assert "VERIFIED" in done.stdout
        else:
            assert "the form is ball:P:R" in done.stderr or "--p" in done.stderr, done.stderr
    for name in ("rc_budget.mps", "rc_rows.nl", "rc_symmetric.lp", "rc_cut.mps"):
        assert (tmp_path / name).stat().st_size > 1000, name


def robustify_page_sets(ns: dict, out: str) -> None:
    """Sections 10 and 11 of docs/robustify.md. Truths: each set's support at g by its closed form, computed here
    (the vertices of the polyhedron and of the factor model enumerated; the ball cut by the box by the KKT root,
    Brent's method); the row forms' LP worked out by hand, solved by scipy's HiGHS; the joint budget's optimum
    that of the separate budgets of section 2 (its projections)."""
    import itertools

    from scipy.optimize import brentq, linprog

    g = ns["g"]
    printed_values = {line.split("sigma(g) =")[0].strip(): float(line.split("sigma(g) =")[1].split()[0])
                      for line in out.splitlines() if "sigma(g) =" in line}

    def vertices(A, b):
        out_ = []
        for rows in itertools.combinations(range(len(b)), A.shape[1]):
            M = A[list(rows)]
            if abs(np.linalg.det(M)) > 1e-12:
                v = np.linalg.solve(M, b[list(rows)])
                if np.all(A @ v <= b + 1e-10):
                    out_.append(v)
        return np.array(out_)

    def greedy(gains, gamma):
        gains, left, total = np.sort(gains)[::-1], gamma, 0.0
        for x in gains:
            if x <= 0 or left <= 0:
                break
            total += min(1.0, left) * x
            left -= min(1.0, left)
        return total

    d = np.array([0.1, 0.2, 0.3])
    psi = np.array([[0.3, 0.0], [0.1, 0.2], [0.0, 0.4]])
    xi = vertices(np.vstack([np.eye(2), -np.eye(2), np.ones((1, 2)), -np.ones((1, 2))]), np.r_[np.ones(4), 1.0, 1.0])
    poly = vertices(np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3))]), np.r_[np.full(6, 0.2), 0.3])

    def ball_in_box(lam):  # the ball of 0.25 cut by the box of 0.2: delta = clip(g / lam), |delta| = 0.25
        return np.linalg.norm(np.clip(g / lam, -0.2, 0.2)) - 0.25

    lam = brentq(ball_in_box, 1e-6, 1e3, xtol=1e-15)
    closed = {
        "NormBall(2, 0.3)": 0.3 * np.linalg.norm(g), "NormBall(1, 0.3)": 0.3 * np.abs(g).max(),
        "Box(-0.1, 0.2)": float(np.maximum(-0.1 * g, 0.2 * g).sum()),
        "Ellipsoid(diag(.04, .09, .01), 1.5)": 1.5 * np.sqrt(g @ np.diag([0.04, 0.09, 0.01]) @ g),
        "Budget(d, 1.5)": greedy(d * g, 1.5), "SymmetricBudget(d, 1.5)": greedy(d * np.abs(g), 1.5),
        "Polyhedron(box 0.2, sum <= 0.3)": float((poly @ g).max()),
        "Scenarios(3 points)": float((np.array([[0.3, -0.1, 0.2], [-0.2, 0.4, 0.1], [0.1, 0.1, -0.3]]) @ g).max()),
        "FactorModel(Psi, 0.5)": float((xi @ (psi.T @ g)).max()),
        "Intersection(box 0.2, ball 0.25)": float(g @ np.clip(g / lam, -0.2, 0.2)),
        "CartesianProduct(box, ellipsoid)": float(np.maximum([-0.1 * g[0], 0.0], [0.2 * g[0], 0.3 * g[1]]).sum()
                                                  + 0.2 * abs(g[2])),
    }
    assert set(printed_values) == set(closed)
    for name, value in closed.items():
        assert abs(ns["catalogue"][name].support(g)[0] - value) <= 1e-9, name  # HiGHS's vertices, the KKT root
        assert abs(printed_values[name] - value) <= 5e-7, name  # printed to 6 decimals
    # section 11: the row forms' LP, each worst case by hand (x >= 0)
    lp = linprog([-2.5, -2.0], A_ub=[[-0.9, 1.1], [1.1, -0.9], [1.0, 1.0], [0.0, -1.0]], b_ub=[-1.0, 4.0, 7.0, -1.25],
                 bounds=[(0, 10)] * 2, method="highs")
    assert lp.status == 0 and abs(ns["r"].objective - -lp.fun) <= 1e-8 * abs(lp.fun)
    assert ns["robust_lp"].component("blend_upper") is not None and ns["lp"].component("abs_x") is None
    joint = solve_of(ns["robust_counterpart"](ns["nominal"], ns["joint"]))
    assert abs(joint - ns["results"]["budget"].objective) <= 1e-8 * abs(joint)


def solve_of(model) -> float:
    from tpm_models import solve

    return solve(model).objective


@pytest.mark.parametrize("page", HAND_WRITTEN)
def test_every_dotted_name_exists(page):
    """Every ``tpm_models.x.y`` the pages name is a real module, function, class or attribute."""
    missing = []
    for name in sorted(set(re.findall(r"\btpm_models(?:\.[A-Za-z_]\w*)+", (DOCS / f"{page}.md").read_text()))):
        parts = name.split(".")
        for k in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:k]))
            except ImportError:
                continue
            break
        try:
            for attribute in parts[k:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            missing.append(name)
    assert not missing, f"docs/{page}.md names what does not exist: {missing}"


MKDOCS = all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built by ``mkdocs build --strict`` into a temporary directory: (directory, log)."""
    if not MKDOCS:
        pytest.skip("mkdocs, mkdocs-material or mkdocstrings-python is not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return out, proc


def test_site_builds_in_strict_mode_without_warnings(site):
    out, proc = site
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert "WARNING" not in log, log[-3000:]
    for page in ("index.html", "tour/index.html", "equations/index.html", "derivations/index.html",
                 "solvers/index.html", "api/index.html", "results/table3/index.html", "figures/index.html"):
        assert (out / page).is_file(), page
    api = (out / "api" / "index.html").read_text()
    assert 'id="tpm_models.models.multiclass.build_primal_15"' in api and 'id="tpm_models.export.writers.write"' in api
    assert ":math:" not in api and ".. math::" not in api  # the docstrings' RST became Markdown
    assert not list(out.rglob("*.py")) and not (out / "hooks").exists()  # the griffe extension is not published
    # inline names in the pages link to their API entries (docs/hooks/api_links.py), all resolved
    equations = (out / "equations" / "index.html").read_text()
    assert 'href="../api/#tpm_models.models.multiclass.build_primal_15"' in equations
    assert not any("<autoref" in page.read_text() for page in out.rglob("*.html"))
    # offline: the pages load nothing from another host (no fonts, no CDN)
    assert not re.search(r'(src|href)="https?://[^"]*\.(js|css|woff2?)"', (out / "tour" / "index.html").read_text())


def test_every_formula_renders_with_katex(site):
    """KaTeX (the vendored copy the site uses) renders every formula of every page without an error."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the KaTeX check runs the vendored katex.min.js under node")
    out, proc = site
    assert proc.returncode == 0
    formulas = []
    for page in sorted(out.rglob("*.html")):
        for m in re.finditer(r'<(span|div) class="arithmatex">(.*?)</\1>', page.read_text(), flags=re.S):
            tex = html.unescape(m.group(2)).strip()
            display = tex.startswith("\\[")
            formulas.append([str(page.relative_to(out)), tex[2:-2], display])
    assert len(formulas) > 500
    script = (
        "const katex = require(process.argv[1]);"
        "const items = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const bad = [];"
        "for (const [page, tex, display] of items) {"
        "  try { katex.renderToString(tex, {displayMode: display, throwOnError: true}); }"
        "  catch (e) { bad.push(page + ': ' + tex.slice(0, 80) + ': ' + e.message.slice(0, 120)); } }"
        "console.log(JSON.stringify(bad));"
    )
    proc = subprocess.run([node, "-e", script, str(DOCS / "javascripts" / "katex" / "katex.min.js")],
                          input=json.dumps(formulas), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == []


def test_rst_docstrings_extension():
    """The griffe extension's rewriting, on the constructs the package's docstrings use."""
    if importlib.util.find_spec("griffe") is None:
        pytest.skip("griffe (mkdocstrings-python) is not installed")
    module = _hook("rst_docstrings")
    text = "\n".join([
        "Solve :math:`\\|w\\|_2` with :func:`~tpm_models.solvers.dispatch.solve`::",
        "",
        "==========  ==================",
        "name        value",
        "==========  ==================",
        ":math:`p`   :math:`|w_j|` first",
        "            and continued",
        "==========  ==================",
        "",
        ".. math::",
        "    \\min\\ \\tfrac12\\|w\\|^2",
        "",
        ">>> 1 + 1",
        "2",
    ])
    md = module.rst_to_markdown(text)
    assert md.startswith("Solve $\\|w\\|_2$ with `tpm_models.solvers.dispatch.solve`:\n")
    assert "| name | value |" in md and "|---|---|" in md
    assert "| $p$ | $\\vert w_j\\vert$ first and continued |" in md
    assert "$$\n\\min\\ \\tfrac12\\|w\\|^2\n$$" in md
    assert "```pycon\n>>> 1 + 1\n2\n```" in md


def _hook(name: str):
    spec = importlib.util.spec_from_file_location(name, DOCS / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_links_hook():
    """Inline package names become optional autorefs; code blocks and paths are left alone."""
    link_names = _hook("api_links").link_names
    md = "\n".join([
        "Code: `tpm_models.models.multiclass.build_primal_15(X, y, c, nu, alpha)`, see `tpm_models/solvers.py`.",
        "```python",
        "x = `tpm_models.solvers.dispatch.solve`",
        "```",
        "``tpm_models.a``",
    ])
    lines = link_names(md).split("\n")
    assert lines[0] == (
        'Code: <autoref identifier="tpm_models.models.multiclass.build_primal_15" optional>'
        "<code>tpm_models.models.multiclass.build_primal_15(X, y, c, nu, alpha)</code></autoref>, "
        "see `tpm_models/solvers.py`."
    )
    assert lines[1:] == md.split("\n")[1:]


def test_adding_a_formulation_runs_as_written(tmp_path, monkeypatch, capsys):
    """docs/adding-a-formulation.md from outside the package: its module registers "2RU", its code and its
    commands run. Truths: (2) solved by another solver at eps = 0; the robust objective recomputed from the
    solution by the closed form (25) of the worst case, which the page never writes."""
    from tpm_models.models.registry import REGISTRY

    blocks = python_blocks("adding-a-formulation")
    assert len(blocks) == 2
    (tmp_path / "my_models.py").write_text(blocks[0])
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("my_models", None)  # imported afresh by the page
    monkeypatch.delitem(REGISTRY, "2RU", raising=False)
    namespace: dict = {}
    try:
        exec(compile(blocks[1], "docs/adding-a-formulation.md, python block 2", "exec"), namespace)
        ns = namespace
        robust, nominal, at_zero = ns["robust"], ns["nominal"], ns["at_zero"]
        assert robust.optimal and robust.solver == "clarabel"  # the default of SOCP and of a conic NLP
        assert abs(at_zero.objective - nominal.objective) <= 1e-7 * max(abs(nominal.objective), 1e-3)
        assert robust.objective > nominal.objective
        X, y = ns["X"], ns["y"]
        w, theta, eps, nu, alpha = robust.values["w"], robust.values["theta"], 0.02, 0.3, 1.0
        plus, minus = X[y == 1], X[y != 1]
        worst = (0.5 * w @ w + nu / len(minus) * np.sum(minus @ w + theta + eps * np.linalg.norm(w))
                 + alpha / len(plus) * np.sum(np.maximum(0.0, -(plus @ w + theta - eps * np.linalg.norm(w)))))
        assert abs(worst - robust.objective) <= 1e-7 * abs(robust.objective)
        assert ns["path"].is_file() and "t" in ns["path"].read_text()
        # the page's commands, as written (the plugin is the file saved above)
        bash = re.search(r"^```bash\n(.*?)^```", (DOCS / "adding-a-formulation.md").read_text(), re.S | re.M)
        commands = [line.split("#")[0].split()[1:] for line in bash.group(1).strip().split("\n")]
        outputs = []
        for argv in commands:  # in a process of their own, as a user runs them (and no solver's state leaks)
            done = subprocess.run([sys.executable, "-m", "tpm_models.cli", *argv], cwd=tmp_path, capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == 0, (argv, done.stderr[-2000:])
            outputs.append(done.stdout)
        assert "(2RU)" in outputs[0] and "SOCP" in outputs[0]
        assert "optimal" in outputs[1]
        assert (tmp_path / "2ru.nl").stat().st_size > 1000
        assert ", 0 failed" in outputs[3] and "cross-solver" in outputs[3]
    finally:
        REGISTRY.pop("2RU", None)
        for name in ("my_models", "tpm_models_plugin_my_models"):
            sys.modules.pop(name, None)


def test_every_image_of_a_page_exists():
    """Each ``![...](path)`` of a page names a file that is in docs/ (the figures are committed, not drawn at build)."""
    missing, seen = [], 0
    for page in DOCS.rglob("*.md"):
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text()):
            if "://" in target:
                continue
            seen += 1
            if not (page.parent / target).resolve().is_file():
                missing.append(f"{page.relative_to(DOCS)}: {target}")
    assert seen > 5 and not missing, missing


def test_the_table3_page_shows_its_chart():
    """docs/results/table3.md shows the chart that ``tpm-models plot table3`` draws from its CSV, inside the
    discussion the report keeps when it writes the page again."""
    page = (DOCS / "results" / "table3.md").read_text()
    assert "](../figures/table3.svg)" in page and (DOCS / "figures" / "table3.svg").is_file()
    assert page.index("<!-- discussion: kept") < page.index("](../figures/table3.svg)")
    assert "tpm-models plot table3" in page


def test_pages_are_laid_out_for_1280_px():
    """The contents sidebar is folded into the navigation (toc.integrate) and the text column is not capped below the
    window, so that at 1280 px it is about 1000 px wide; what is wider still (display math, tables) scrolls inside its
    own box, and Material's 5rem minimum of a header cell is lifted (headless Chromium measured every page: Table 3 and
    every equation fit at 1280 px; only a few wide data tables of the notes pages scroll)."""
    config = (ROOT / "mkdocs.yml").read_text()
    assert "- toc.integrate" in config and "stylesheets/extra.css" in config
    css = (DOCS / "stylesheets" / "extra.css").read_text()
    for rule in (r"\.md-grid \{\s*max-width: 90rem;", r"\.katex-display \{\s*overflow-x: auto;",
                 r"\.md-typeset__scrollwrap \{\s*overflow-x: auto;", r"th \{\s*min-width: 0;"):
        assert re.search(rule, css), rule
