"""The convex atoms a conic form reads, one module an atom (after cvxpy's canonicalisers: ``perspective``, ``absolute``,
``square_root``, ``pnorm``; their cones: ``docs/solvers.md``, "How a row becomes a cone"). Each recognises its node of
a Pyomo expression and returns :math:`\\tau`'s column with the cones of its epigraph :math:`\\tau \\ge \\phi(x)` (or
hypograph) as plain :class:`~tpm_models.solvers.atoms.terms.Piece` s, which the conic form adds.

A new atom is one module with a function ``epigraph(reader, expr, where) -> (column, pieces) | None`` (no pieces
for an atom met before, ``reader.atoms``; ``None``: not its node; :class:`~tpm_models.solvers.cones.NotConicError`: its
node, but not convex or not of its form) and one entry of :data:`ATOMS`, in the order they are tried.
"""

from __future__ import annotations

from collections.abc import Callable

from tpm_models.solvers.atoms import absolute, perspective, pnorm, square_root

ATOMS: tuple[Callable, ...] = (perspective.epigraph, absolute.epigraph, square_root.epigraph, pnorm.epigraph)
"""The atoms' canonicalisers, in the order :meth:`~tpm_models.solvers.conic_shapes.ShapeReader.decompose` tries
them on a node that is not linear: the first that returns a column reads it (``E**0.5`` is a square root if ``E`` is a
convex quadratic, else a p-norm at :math:`q = 2`)."""
