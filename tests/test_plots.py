"""The figures of ``tpm_models.plots`` checked against independent truths.

* fig1-linear: the drawn H+, H- and f = 0 lie on the lines of (w, theta) from the *primals* (2)/(3)
  solved by Ipopt -- not the dual QPs (4)/(5) + recovery (6)/(7) with PIQP that the figure uses.
  theta is unique here (nu m/alpha = 20.5 is not an integer, errata 5), so the two routes must agree;
  Ipopt and PIQP agree on (w, theta) to ~1e-9, LINE_TOL = 1e-6 leaves three orders of margin.
* fig1-gaussian: the decision function (14), rebuilt from the kernel duals (12)/(13) solved by Ipopt,
  vanishes on the drawn contours up to the grid's resolution (bound in the test).
* the CLI writes PNG (signature bytes) and SVG (parses as XML) files, and fails clearly.
* the Table 3 chart's bars and error bars are the CSV's numbers.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tpm_models import Kernel, available_solvers, build, solve
from tpm_models.cli import main
from tpm_models.models.binary import decision_8, recover_minus, recover_plus
from tpm_models.plots import (
    FIGURES,
    fig1_gaussian,
    fig1_linear,
    iris_data,
    iris_regions,
    line_points,
    table3_chart,
    toy_data,
)
from tpm_models.plots.fig1 import FIG1_ALPHA, FIG1_NU, FIG1_SIGMA, TOY_POINTS
from tpm_models.plots.iris import IRIS_CIRCLES, IRIS_EPS

pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LINE_TOL = 1e-6
"""Relative residual of a drawn point in the line equation of the independent solve (module docstring)."""
SOLVER_TOL = 1e-6
"""Bound on |f_ipopt - f_piqp| for the Gaussian decision values (the solvers agree to ~1e-9 on lambda)."""

TEST_GRID = 100
"""Grid points per axis of the figures drawn here (the figures use plots.drawing.GRID = 300; a coarser grid keeps the
tests fast and makes the contour bound below looser, not wrong)."""

needs_ipopt = pytest.mark.skipif("ipopt" not in available_solvers(), reason="Ipopt is not installed")


@pytest.fixture(scope="module")
def linear_fig():
    return fig1_linear(grid=TEST_GRID)


@pytest.fixture(scope="module")
def gaussian_fig():
    return fig1_gaussian(grid=TEST_GRID)


@pytest.fixture(scope="module")
def iris_fig():
    return iris_regions(grid=TEST_GRID)


def by_gid(artists, gid):
    found = [a for a in artists if a.get_gid() == gid]
    assert len(found) == 1, f"expected one artist with gid {gid!r}, found {len(found)}"
    return found[0]


def test_toy_theta_is_unique():
    """The premise of the comparison: nu m/alpha is not an integer, so theta_+- is unique (errata 5)."""
    X, y = toy_data()
    assert X.shape == (2 * TOY_POINTS, 2) and (y == 1).sum() == (y == -1).sum() == TOY_POINTS
    k = FIG1_NU * TOY_POINTS / FIG1_ALPHA
    assert abs(k - round(k)) > 0.1
    assert np.array_equal(toy_data()[0], X)  # seeded


@needs_ipopt
def test_fig1_linear_lines_are_those_of_the_primal(linear_fig):
    X, y = toy_data()
    planes = {}
    for eq, gid in ((2, "H_plus"), (3, "H_minus")):
        r = solve(build(eq, X, y, 1, FIG1_NU, FIG1_ALPHA), "ipopt")
        planes[gid] = (np.asarray(r.values["w"]), float(r.values["theta"]))
    (w_p, t_p), (w_m, t_m) = planes["H_plus"], planes["H_minus"]
    n_p, n_m = np.linalg.norm(w_p), np.linalg.norm(w_m)
    planes["f_zero"] = (w_p / n_p + w_m / n_m, t_p / n_p + t_m / n_m)  # (8) before the sign, a line

    ax = linear_fig.axes[0]
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert ax.get_aspect() == 1.0
    for gid, (w, theta) in planes.items():
        xy = by_gid(ax.lines, gid).get_xydata()
        scale = np.abs(xy) @ np.abs(w) + abs(theta)
        np.testing.assert_array_less(np.abs(xy @ w + theta), LINE_TOL * scale)
        # the segment crosses the whole visible box: its ends are on the box's sides (or beyond)
        ends_x, ends_y = np.sort(xy[:, 0]), np.sort(xy[:, 1])
        spans_x = ends_x[0] <= x0 + 1e-9 and ends_x[1] >= x1 - 1e-9
        assert spans_x or (ends_y[0] <= y0 + 1e-9 and ends_y[1] >= y1 - 1e-9)
    # the positive points lie mostly on the positive side of H+: (2) has X_+^T w_+ + e theta_+ >= -xi_+
    assert np.mean(X[y == 1] @ w_p + t_p >= -1e-9) >= 0.5
    assert ax.get_legend() is None and len(ax.figure.legends) == 1
    labels = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert any("H_+" in s for s in labels) and any("H_-" in s for s in labels) and any("f_" in s for s in labels)


def test_line_points_are_on_the_line():
    box = (-1.0, 2.0, -3.0, 4.0)
    for w, theta in (((1.0, 2.0), 0.5), ((3.0, -0.1), -1.0), ((0.0, 1.0), 2.0), ((1.0, 0.0), 0.3)):
        pts = line_points(np.array(w), theta, box)
        np.testing.assert_allclose(pts @ np.array(w) + theta, 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="w != 0"):
        line_points(np.zeros(2), 1.0, box)


@needs_ipopt
def test_fig1_gaussian_contours_are_zero_sets(gaussian_fig):
    """matplotlib draws a zero contour of g through points v on the grid's edges [a, b] (step h) where the
    linear interpolant of g on the edge vanishes, so |g(v)| <= |v-a||v-b|/2 max|g''| <= h^2/8 max|g''|.
    For g = <w, phi(x)> + theta = sum_i coef_i k(x, x^i) + theta with the Gaussian kernel, the second
    derivative of k along a line is at most 1/sigma^2, and sum_i |coef_i| = e'lambda + nu = 2 nu, so
    |g''| <= 2 nu / sigma^2; (14) divides S+ and S- by their norms and adds them. The decision values
    here come from an independent solve (Ipopt on (12)/(13)), hence + SOLVER_TOL."""
    X, y = toy_data()
    kernel = Kernel("gaussian", sigma=FIG1_SIGMA)
    lam_p = solve(build(12, X, y, 1, FIG1_NU, FIG1_ALPHA, kernel), "ipopt").values["lam"]
    lam_m = solve(build(13, X, y, 1, FIG1_NU, FIG1_ALPHA, kernel), "ipopt").values["lam"]
    plus = recover_plus(X, y, lam_p, FIG1_NU, FIG1_ALPHA, kernel)
    minus = recover_minus(X, y, lam_m, FIG1_NU, FIG1_ALPHA, kernel)

    ax = gaussian_fig.axes[0]
    assert ax.get_aspect() == 1.0
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    h = max(x1 - x0, y1 - y0) / (TEST_GRID - 1)  # the grid spans the axes box
    curvature = 2 * FIG1_NU / FIG1_SIGMA**2
    cases = {
        "S_plus": (plus.score, curvature),
        "S_minus": (minus.score, curvature),
        "f_zero": (lambda V: decision_8(plus, minus, V), curvature * (1 / plus.norm_w + 1 / minus.norm_w)),
    }
    for gid, (g, second_derivative) in cases.items():
        cs = by_gid(ax.collections, gid)
        vertices = np.vstack([seg for level in cs.allsegs for seg in level])
        assert len(vertices) > 20, gid
        bound = h**2 / 8 * second_derivative + SOLVER_TOL
        worst = np.abs(g(vertices)).max()
        assert worst <= bound, (gid, worst, bound)
    # S+ encloses positive points (its positive side), S- negative ones
    assert np.mean(plus.score(X[y == 1]) >= 0) >= 0.4 and np.mean(minus.score(X[y == -1]) <= 0) >= 0.4


def test_iris_regions_uncertainty_sets(iris_fig):
    axes = iris_fig.axes[:3]
    X, y, classes, _ = iris_data()
    circles = [p for p in axes[2].patches if (p.get_gid() or "").startswith("U-")]
    assert len(circles) == IRIS_CIRCLES * len(classes)
    for c in circles:
        i = int(c.get_gid()[2:])
        assert c.radius == IRIS_EPS
        np.testing.assert_array_equal(c.center, X[i])
    centers = np.array([c.center for c in circles])
    gaps = np.linalg.norm(centers[:, None] - centers[None, :], axis=2)[np.triu_indices(len(centers), 1)]
    assert gaps.min() >= 3 * IRIS_EPS - 1e-12  # the circles do not overlap
    assert all(ax.get_aspect() == 1.0 for ax in axes)  # circles look round
    assert not any(p.get_gid() for ax in axes[:2] for p in ax.patches)  # only the robust panel has them
    for k, ax in enumerate(axes):
        by_gid(ax.collections, f"regions-{k}")
        assert [t.get_text() for t in ax.get_legend().get_texts()][:3] == [str(c) for c in classes]


TABLE3_COLUMNS = "dataset,kernel,runs,mean_first,std_first,mean_last,std_last,paper_mean,paper_std"


def write_table3(path, with_cv: bool):
    rows = [
        "iris,linear,100,92.8158,3.9203,92.6579,3.7830,92.08,3.71",
        "iris,gaussian,100,90.9474,4.1028,88.0526,3.9658,90.7,4.71",
        "wine,linear,100,97.1778,2.5826,97.4000,2.1666,97.02,2.28",
        "wine,gaussian,100,40.0000,0.0000,65.7333,17.2022,,",  # the paper: "to be done"
    ]
    cv = ["91.5,4.25", "93.25,3.5", "", "96.0,2.0"]  # wine linear: no CV numbers in this row
    with open(path, "w") as fh:
        fh.write(TABLE3_COLUMNS + (",mean_cv,std_cv" if with_cv else "") + "\n")
        for row, extra in zip(rows, cv):
            fh.write(row + ((("," + extra) if extra else ",,") if with_cv else "") + "\n")
    expected = {}
    for row, extra in zip(rows, cv):
        f = row.split(",")
        for key, m, s in (("first", f[3], f[4]), ("last", f[5], f[6]), ("paper", f[7], f[8])):
            if m:
                expected[f"{f[0]}.{f[1]}.{key}"] = (float(m), float(s))
        if with_cv and extra:
            m, s = extra.split(",")
            expected[f"{f[0]}.{f[1]}.cv"] = (float(m), float(s))
    return expected


def bars_and_errors(fig):
    """gid -> (bar height, error bar low, error bar high, bar centre, error bar x)."""
    out = {}
    for ax in fig.axes:
        for container in ax.containers:
            if not hasattr(container, "patches"):
                continue
            segments = container.errorbar.lines[2][0].get_segments()
            assert len(segments) == len(container.patches)
            for patch, seg in zip(container.patches, segments):
                assert patch.get_y() == 0.0
                out[patch.get_gid()] = (patch.get_height(), seg[:, 1].min(), seg[:, 1].max(),
                                        patch.get_x() + patch.get_width() / 2, seg[0, 0])
    return out


@pytest.mark.parametrize("with_cv", [False, True])
def test_table3_bars_are_the_csv_numbers(tmp_path, with_cv):
    expected = write_table3(tmp_path / "t3.csv", with_cv)
    drawn = bars_and_errors(table3_chart(tmp_path / "t3.csv"))
    assert set(drawn) == set(expected)  # the paper's "to be done" cell and CV-less rows have no bar
    assert ("wine.gaussian.paper" not in drawn) and ("wine.gaussian.first" in drawn)
    for gid, (mean, std) in expected.items():
        height, low, high, x_bar, x_err = drawn[gid]
        assert height == pytest.approx(mean, abs=1e-12)
        assert (low, high) == (pytest.approx(mean - std, abs=1e-12), pytest.approx(mean + std, abs=1e-12))
        assert x_err == pytest.approx(x_bar)
    assert any(k.endswith(".cv") for k in drawn) == with_cv


def test_table3_unreadable_csv(tmp_path):
    with pytest.raises(ValueError, match="cannot read the Table 3 CSV"):
        table3_chart(tmp_path / "missing.csv")
    (tmp_path / "bad.csv").write_text("dataset,kernel,mean_first\niris,linear,90\n")
    with pytest.raises(ValueError, match=r"lacks the column\(s\)"):
        table3_chart(tmp_path / "bad.csv")
    (tmp_path / "nan.csv").write_text(TABLE3_COLUMNS + "\niris,linear,100,ninety,1,2,3,4,5\n")
    with pytest.raises(ValueError, match="line 2: column mean_first is not a number"):
        table3_chart(tmp_path / "nan.csv")


def check_png_svg(png, svg):
    assert png.read_bytes()[:8] == PNG_SIGNATURE and png.stat().st_size > 10_000
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert b"<dc:date>" not in svg.read_bytes()


def test_cli_plot_all_writes_every_figure(tmp_path, capsys, monkeypatch, linear_fig, gaussian_fig, iris_fig):
    """Every NAME through ``plot all``. The three model figures are the ones drawn above by the same
    functions (at TEST_GRID, to keep this fast); ``table3`` is drawn by the command from ``--csv``."""
    import tpm_models.plots as plots

    csv_path = tmp_path / "t3.csv"
    write_table3(csv_path, with_cv=True)
    for name, fig in (("fig1-linear", linear_fig), ("fig1-gaussian", gaussian_fig), ("iris-regions", iris_fig)):
        monkeypatch.setitem(plots.FIGURES, name, (lambda fig=fig: fig, plots.FIGURES[name][1]))
    assert main(["plot", "all", "--out-dir", str(tmp_path / "figs"), "--csv", str(csv_path)]) == 0
    for name in FIGURES:
        check_png_svg(tmp_path / "figs" / f"{name}.png", tmp_path / "figs" / f"{name}.svg")
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == sorted(
        f"{n}.{ext}" for n in FIGURES for ext in ("png", "svg"))
    assert capsys.readouterr().out.count("wrote") == len(FIGURES)


def test_cli_plot_one_strips_the_suffix_and_is_reproducible(tmp_path):
    csv_path = tmp_path / "t3.csv"
    write_table3(csv_path, with_cv=False)
    assert main(["plot", "table3", "--out", str(tmp_path / "a" / "chart.svg"), "--csv", str(csv_path)]) == 0
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["chart.png", "chart.svg"]
    check_png_svg(tmp_path / "a" / "chart.png", tmp_path / "a" / "chart.svg")
    assert main(["plot", "table3", "--out", str(tmp_path / "b" / "chart"), "--csv", str(csv_path)]) == 0
    for ext in ("png", "svg"):
        assert (tmp_path / "a" / f"chart.{ext}").read_bytes() == (tmp_path / "b" / f"chart.{ext}").read_bytes()


def test_cli_plot_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plot", "fig2", "--out", str(tmp_path / "x")])
    assert exc.value.code != 0
    err = capsys.readouterr().err
    assert "invalid choice" in err and "fig2" in err and "fig1-linear" in err

    assert main(["plot", "table3", "--out", str(tmp_path / "x"), "--csv", str(tmp_path / "none.csv")]) == 2
    assert "cannot read the Table 3 CSV" in capsys.readouterr().err
    assert main(["plot", "all", "--out-dir", str(tmp_path / "d"), "--csv", str(tmp_path / "none.csv")]) == 2
    assert "cannot read the Table 3 CSV" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()  # failed before drawing anything

    assert main(["plot", "fig1-linear"]) == 2
    assert "give --out PATH" in capsys.readouterr().err
    assert main(["plot", "all", "--out", str(tmp_path / "x")]) == 2
    assert "give --out-dir DIR" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_matplotlib_is_imported_inside_functions_only():
    """Importing the package (or the CLI) does not load matplotlib: the modules of ``plots/`` import it inside
    their functions (and under ``if TYPE_CHECKING``) only, no other module imports it at all."""
    import ast
    from pathlib import Path

    import tpm_models

    def imported(nodes):
        names = []
        for n in nodes:
            if isinstance(n, ast.Import):
                names += [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                names.append(n.module or "")
        return {name.split(".")[0] for name in names}

    package = Path(tpm_models.__file__).parent
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        nodes = tree.body if path.parent == package / "plots" else list(ast.walk(tree))
        assert "matplotlib" not in imported(nodes), path.name


def test_cli_plot_all_from_another_folder_draws_the_figures_and_says_how_to_draw_the_chart(
        tmp_path, capsys, monkeypatch, linear_fig, gaussian_fig, iris_fig):
    """Outside a clone of the repository (no ``docs/results/table3.csv`` under the current folder) and without
    ``--csv``: the figures of the models are drawn, the chart is not, and stderr says how to draw it."""
    import tpm_models.plots as plots

    for name, fig in (("fig1-linear", linear_fig), ("fig1-gaussian", gaussian_fig), ("iris-regions", iris_fig)):
        monkeypatch.setitem(plots.FIGURES, name, (lambda fig=fig: fig, plots.FIGURES[name][1]))
    monkeypatch.chdir(tmp_path)
    assert main(["plot", "all", "--out-dir", "figs"]) == 0
    drawn = [n for n in FIGURES if n != "table3"]
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == sorted(
        f"{n}.{ext}" for n in drawn for ext in ("png", "svg"))
    out, err = capsys.readouterr()
    assert out.count("wrote") == len(drawn)
    assert err.count("\n") == 1 and "table3 not drawn" in err and "--csv PATH" in err

    assert main(["plot", "table3", "--out", "chart"]) == 2
    err = capsys.readouterr().err
    assert "none was given" in err and "--csv PATH" in err and "tpm-models table3 --out-dir DIR" in err
    assert not (tmp_path / "chart.png").exists()


def test_cli_plot_table3_reads_the_repositorys_csv_from_its_root(tmp_path, monkeypatch):
    csv_path = tmp_path / "docs" / "results" / "table3.csv"
    csv_path.parent.mkdir(parents=True)
    write_table3(csv_path, with_cv=False)
    monkeypatch.chdir(tmp_path)
    assert main(["plot", "table3", "--out", "chart"]) == 0
    check_png_svg(tmp_path / "chart.png", tmp_path / "chart.svg")
