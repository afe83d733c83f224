"""Kernels of Table 1, their Gram matrices, and exact finite feature maps.

=========================  ===================================  ========================
kernel                     :math:`k(x, x')`                     parameters
=========================  ===================================  ========================
``linear``                 :math:`x^\\top x'`                    --
``hom-poly``               :math:`(x^\\top x')^d`                 ``degree`` d >= 1
``inhom-poly``             :math:`(\\gamma + x^\\top x')^d`        ``gamma`` >= 0, ``degree``
``gaussian``               :math:`\\exp(-\\|x-x'\\|^2 / (2\\sigma^2))`  ``sigma`` > 0
``sigmoid``                :math:`\\tanh(a\\, x^\\top x' + b)`     ``a``, ``b`` real
=========================  ===================================  ========================

``Kernel.gram(A, B)`` takes points as rows and returns ``K[i, j] = k(A[i], B[j])``;
the paper's :math:`K(X_c, X_{-c})` (points as columns) is ``gram(X[y == c], X[y != c])``.

The polynomial kernels have exact finite feature maps (``Kernel.feature_map``):
:math:`\\varphi(x)_\\beta = \\sqrt{d!/\\prod_j \\beta_j!}\\ \\prod_j x_j^{\\beta_j}` over the
multi-indices :math:`|\\beta| = d`, so that :math:`\\varphi(x)^\\top\\varphi(x') = (x^\\top x')^d`
(multinomial theorem); the inhomogeneous kernel is the homogeneous one of
:math:`(\\sqrt\\gamma, x)`. They let the feature-space primals (10)/(11) be solved.
"""

from __future__ import annotations

import itertools
import math
import os
import resource
from dataclasses import dataclass

import numpy as np

KERNELS = ("linear", "hom-poly", "inhom-poly", "gaussian", "sigmoid")


GRAM_ARRAYS = 3
"""Arrays of the Gram matrix's size alive at once while :meth:`Kernel.gram` computes it (the Gaussian kernel: the
squared distances, the product ``A @ B.T``, the exponential)."""

DENSE_MEMORY_FRACTION = 0.5
"""The share of the memory available (``MemAvailable``) a dense matrix may take before it is refused."""


DENSE_CHECK_MIN_BYTES = 64 * 2**20
"""Estimates of at most this many bytes (64 MiB) are not held against the memory available: reading it
(``/proc/meminfo``) costs more than computing a small Gram block, and such a block fits on any machine that runs
the library. Larger ones are checked by :func:`check_dense_memory` before their allocation."""


class TooLargeError(ValueError):
    """A dense matrix that cannot fit in memory, refused before its allocation (the message says what to do)."""


def machine_available_memory() -> int | None:
    """Bytes the machine has free for a new allocation (Linux ``MemAvailable``; else the free physical pages), or
    None when the system does not say."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def address_space_left() -> int | None:
    """Bytes the process may still map under its ``RLIMIT_AS`` (``ulimit -v``): the limit less the address space
    mapped now (``VmSize`` of ``/proc/self/status``); None without a limit."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = 0
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    mapped = int(line.split()[1]) * 1024
    except OSError:
        pass
    return max(soft - mapped, 0)


CGROUP_ROOT = "/sys/fs/cgroup"
"""Where the cgroup (v2) file system is mounted."""


def cgroup_memory_left(root: str = CGROUP_ROOT) -> int | None:
    """Bytes the process's cgroup (v2) may still use: ``memory.max`` less ``memory.current`` of its cgroup
    (``/proc/self/cgroup``'s ``0::`` line); None without a limit (``max``) or without cgroup v2."""
    try:
        with open("/proc/self/cgroup") as fh:
            line = next((row for row in fh if row.startswith("0::")), None)
        if line is None:
            return None
        folder = os.path.join(root, line.strip()[3:].lstrip("/"))
        with open(os.path.join(folder, "memory.max")) as fh:
            limit = fh.read().strip()
        if limit == "max":
            return None
        with open(os.path.join(folder, "memory.current")) as fh:
            current = int(fh.read().strip())
    except (OSError, ValueError):
        return None
    return max(int(limit) - current, 0)


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation of this process: the least of what the machine has free
    (:func:`machine_available_memory`), what its address-space limit leaves (:func:`address_space_left`,
    ``ulimit -v``) and what its cgroup's ``memory.max`` leaves (:func:`cgroup_memory_left`); None when none of
    them says."""
    known = [b for b in (machine_available_memory(), address_space_left(), cgroup_memory_left()) if b is not None]
    return min(known) if known else None


def check_dense_memory(rows: int, cols: int, what: str, arrays: int = 1, instead: str = "",
                       available: int | None = None) -> int:
    """Refuse (:class:`TooLargeError`) a dense ``rows x cols`` float64 matrix whose computation needs more than
    :data:`DENSE_MEMORY_FRACTION` of the memory available: its size, the estimate (``arrays`` of them alive at
    once), and what to do ``instead``. Returns the estimate in bytes. ``available``: the bytes to hold it
    against (default :func:`available_memory`, what the machine has free now, read only for an estimate above
    :data:`DENSE_CHECK_MIN_BYTES`)."""
    need = int(rows) * int(cols) * 8 * int(arrays)
    if available is None and need <= DENSE_CHECK_MIN_BYTES:
        return need
    have = available_memory() if available is None else available
    if have is not None and need > DENSE_MEMORY_FRACTION * have:
        raise TooLargeError(
            f"{what} would be {rows:,} x {cols:,} ({rows * cols * 8 / 2**30:.1f} GiB; about {need / 2**30:.1f} GiB "
            f"while it is computed) and {have / 2**30:.1f} GiB are available: refused before the allocation"
            + (f"; {instead}" if instead else ""))
    return need


@dataclass(frozen=True)
class Kernel:
    """A kernel of Table 1 with its parameters (validated on construction)."""

    name: str = "linear"
    degree: int | None = None
    gamma: float | None = None
    sigma: float | None = None
    a: float | None = None
    b: float | None = None

    def __post_init__(self) -> None:
        if self.name not in KERNELS:
            raise ValueError(f"unknown kernel {self.name!r}; choose one of {KERNELS}")
        needed = {
            "linear": (),
            "hom-poly": ("degree",),
            "inhom-poly": ("degree", "gamma"),
            "gaussian": ("sigma",),
            "sigmoid": ("a", "b"),
        }[self.name]
        for field in ("degree", "gamma", "sigma", "a", "b"):
            value = getattr(self, field)
            if field in needed and value is None:
                raise ValueError(f"kernel {self.name!r} needs the parameter {field!r}")
            if field not in needed and value is not None:
                raise ValueError(f"kernel {self.name!r} takes no parameter {field!r} (got {value})")
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
            ):
                raise ValueError(f"kernel parameter {field} must be a real number, got {value!r}")
            if value is not None and not np.isfinite(value):
                raise ValueError(f"kernel parameter {field} must be finite, got {value}")
        if self.degree is not None and (int(self.degree) != self.degree or self.degree < 1):
            raise ValueError(f"degree must be an integer >= 1, got {self.degree}")
        if self.gamma is not None and self.gamma < 0:
            raise ValueError(f"gamma must be >= 0 (Table 1), got {self.gamma}")
        if self.sigma is not None and self.sigma <= 0:
            raise ValueError(f"sigma must be > 0 (Table 1), got {self.sigma}")

    def param(self, name: str) -> float:
        """The parameter ``name`` (``"degree"``, ``"gamma"``, ``"sigma"``, ``"a"``, ``"b"``) of a kernel that takes
        it (given, as ``__post_init__`` requires); ``ValueError`` naming it when it is not set."""
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"the {self.name} kernel has no parameter {name}")
        return float(value)

    def __str__(self) -> str:
        params = {k: getattr(self, k) for k in ("degree", "gamma", "sigma", "a", "b")}
        shown = ", ".join(f"{k}={v:g}" for k, v in params.items() if v is not None)
        return f"{self.name}({shown})" if shown else self.name

    def gram(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Gram matrix ``K[i, j] = k(A[i], B[j])`` for points as rows. Refused before any allocation when it
        cannot fit (:func:`check_dense_memory`)."""
        A = np.atleast_2d(np.asarray(A, dtype=float))
        B = np.atleast_2d(np.asarray(B, dtype=float))
        if A.shape[1] != B.shape[1]:
            raise ValueError(f"points have {A.shape[1]} and {B.shape[1]} features; they must agree")
        check_dense_memory(len(A), len(B), f"the {self.name} kernel's Gram matrix", GRAM_ARRAYS,
                           "use fewer points (a subsample: every point is a row and a column of it), or a kernel with "
                           "a finite feature map (linear, hom-poly, inhom-poly: Kernel.feature_map) in a primal model "
                           "built by tpm_models.build, whose size grows with the points, not their square")
        if self.name == "gaussian":
            sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
            return np.exp(-np.maximum(sq, 0.0) / (2.0 * self.param("sigma") ** 2))
        inner = A @ B.T
        if self.name == "linear":
            return inner
        if self.name == "hom-poly":
            return inner ** int(self.param("degree"))
        if self.name == "inhom-poly":
            return (self.param("gamma") + inner) ** int(self.param("degree"))
        return np.tanh(self.a * inner + self.b)

    def gram_sum(self, A: np.ndarray, B: np.ndarray, chunk: int | None = None) -> float:
        """:math:`e^\\top K(A, B)\\, e = \\sum_{i,j} k(a^i, b^j)` without the whole Gram matrix: the linear kernel's
        :math:`(A^\\top e)^\\top (B^\\top e)`, any other kernel's :meth:`gram` summed over blocks of ``chunk`` rows of
        ``A`` (:math:`O(\\text{chunk}\\cdot|B|)` memory, 32 MB a block by default: at :math:`10^5` points the whole
        matrix is 80 GB)."""
        A = np.atleast_2d(np.asarray(A, dtype=float))
        B = np.atleast_2d(np.asarray(B, dtype=float))
        if A.shape[1] != B.shape[1]:
            raise ValueError(f"points have {A.shape[1]} and {B.shape[1]} features; they must agree")
        if self.name == "linear":
            return float(A.sum(axis=0) @ B.sum(axis=0))
        chunk = chunk or max(1, 2**22 // max(len(B), 1))
        return float(sum(self.gram(A[k:k + chunk], B).sum() for k in range(0, len(A), chunk)))

    def diagonal(self, X: np.ndarray, chunk: int = 256) -> np.ndarray:
        """:math:`k(x^i, x^i)` for every row of ``X``: the diagonal of :meth:`gram` (same formula), computed
        on blocks of ``chunk`` rows so that it costs :math:`O(m)` memory."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return np.concatenate([np.diag(self.gram(X[s:s + chunk], X[s:s + chunk]))
                               for s in range(0, len(X), chunk)])

    @property
    def has_feature_map(self) -> bool:
        """True for the kernels with an exact finite feature map (linear, polynomial)."""
        return self.name in ("linear", "hom-poly", "inhom-poly")

    def feature_map(self, X: np.ndarray) -> np.ndarray:
        """Exact finite feature map: rows ``phi(x)`` with ``phi(x) @ phi(x') == k(x, x')``.

        Raises ``ValueError`` for the Gaussian and sigmoid kernels, which have none.
        """
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if self.name == "linear":
            return X.copy()
        if self.name == "hom-poly":
            return _homogeneous_monomials(X, int(self.param("degree")))
        if self.name == "inhom-poly":
            lifted = np.hstack([np.full((X.shape[0], 1), math.sqrt(self.param("gamma"))), X])
            return _homogeneous_monomials(lifted, int(self.param("degree")))
        raise ValueError(
            f"the {self.name} kernel has no finite feature map; use the kernel duals (12), (13), (19)"
        )


def _homogeneous_monomials(X: np.ndarray, d: int) -> np.ndarray:
    """Weighted degree-``d`` monomials: ``sqrt(d!/prod(beta!)) * prod(x**beta)``."""
    n = X.shape[1]
    columns = []
    for combo in itertools.combinations_with_replacement(range(n), d):
        beta = np.bincount(combo, minlength=n)
        weight = math.factorial(d) / math.prod(math.factorial(int(b)) for b in beta)
        columns.append(math.sqrt(weight) * np.prod(X[:, list(combo)], axis=1))
    return np.column_stack(columns)
