"""BLAS on one thread for the scalable path (:mod:`tpm_models.learn.blas_threads`), and what the fit path's
speed-ups of issue 25 change in a fit: nothing but rounding.

Truths: ``threadpoolctl``'s own reading of the thread pools (a library search independent of ours), and the fit
computed the way it was before (the Gaussian kernel sums in one block, BLAS threads left alone).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from benchmarks.bench_estimators import make_model, scaled_data
from tpm_models.learn import blas_threads, expansion, kernel_sums


def _numpy_blas_threads() -> list[int]:
    """Threads of numpy's BLAS as ``threadpoolctl`` reads them (the libraries in numpy's wheel directory or, for
    another install, every BLAS)."""
    info = [i for i in threadpool_info() if i["user_api"] == "blas"]
    own = [i for i in info if "numpy" in i["filepath"]]
    return [i["num_threads"] for i in (own or info)]


def test_one_blas_thread_limits_numpys_blas_and_restores_it():
    before = _numpy_blas_threads()
    with blas_threads.one_blas_thread():
        assert _numpy_blas_threads() == [1] * len(before)
    assert _numpy_blas_threads() == before


def test_the_cheap_limit_is_found_for_numpys_openblas():
    """numpy built on OpenBLAS (the wheels) gets the direct calls, not ``threadpoolctl``'s search."""
    if not blas_threads.numpy_blas_is_openblas():
        pytest.skip("numpy's BLAS is not OpenBLAS here: threadpoolctl is the path")
    assert blas_threads.cheap_blas_limit()
    get, put = blas_threads.openblas_controls()[0]
    before = get()
    put(1)
    try:
        assert get() == 1 and _numpy_blas_threads()[0] == 1
    finally:
        put(before)


def test_without_openblas_the_limit_goes_through_threadpoolctl(monkeypatch):
    monkeypatch.setattr(blas_threads, "openblas_controls", lambda: None)
    assert not blas_threads.cheap_blas_limit()
    before = _numpy_blas_threads()
    with blas_threads.one_blas_thread():
        assert _numpy_blas_threads() == [1] * len(before)
    assert _numpy_blas_threads() == before
    # and below ONE_THREAD_MIN_POINTS the fit path then leaves BLAS alone (threadpoolctl's search costs a fit)
    assert isinstance(expansion.one_blas_thread(expansion.ONE_THREAD_MIN_POINTS - 1), contextlib.nullcontext)


@pytest.mark.parametrize("kernel", ["gaussian", "linear"])
def test_blocked_sums_and_one_blas_thread_change_only_rounding(monkeypatch, kernel):
    """The benchmark's 1,000 points (``bench estimators --sizes 1000``): the fit as it is (sums by blocks of
    :data:`~tpm_models.learn.kernel_sums.SUM_BLOCK_ROWS` rows, BLAS on one thread) against the fit as it was (one
    block, BLAS threads left alone). Same subproblems, :math:`\\lambda` within 1e-10 of its bound :math:`u`
    (measured: 3e-13 u; the decomposition stops at a gap of 1e-9 nu kappa, so rounding moves lambda far less),
    :math:`\\theta` within 1e-12, the same predictions."""
    X_train, X_test, y_train, _ = scaled_data(1000)
    # the kernel decomposition by name: with the linear kernel backend="auto" now takes the linear path
    new = make_model("tpmsvm", kernel).set_params(backend="decomposition").fit(X_train, y_train)
    monkeypatch.setattr(kernel_sums, "SUM_BLOCK_ROWS", 10**9)
    monkeypatch.setattr(expansion, "one_blas_thread", lambda m: contextlib.nullcontext())
    old = make_model("tpmsvm", kernel).set_params(backend="decomposition").fit(X_train, y_train)
    assert new.fit_backend_ == old.fit_backend_ == "decomposition"
    for a, b in zip(new.planes_, old.planes_):
        u = 1.0 / len(a.lam)  # alpha = 1
        assert a.result.iterations == b.result.iterations
        np.testing.assert_allclose(a.lam, b.lam, rtol=0, atol=1e-10 * u)
        assert a.theta == pytest.approx(b.theta, rel=0, abs=1e-12)
        assert a.theta_rule == b.theta_rule
    np.testing.assert_array_equal(new.predict(X_test), old.predict(X_test))


def test_the_wheels_openblas_is_what_glob_finds():
    """The directory listing of ``numpy.libs`` finds the files ``glob('*openblas*.so*')`` finds (the truth), or
    the ``/proc/self/maps`` fallback runs when numpy came without that directory."""
    import glob
    import os

    wheel_libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    globbed = sorted(glob.glob(os.path.join(glob.escape(wheel_libs), "*openblas*.so*")))
    if not globbed:
        pytest.skip("numpy did not come as a wheel with numpy.libs here")
    assert blas_threads._openblas_paths() == globbed
