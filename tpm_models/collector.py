"""Python's cyclic garbage collector and a large model: its objects moved past the young generations when it is
built (:func:`to_oldest_generation`).

A model of :math:`10^5` points is millions of small objects, all alive. Left in the youngest generation (the
builders pause the collector, as Pyomo's writers do), the first collection after the build walked all of them
(0.14 s at :math:`10^5` points, at the start of the solve that follows) and the next one walked them again, only to
find them alive. Moved to the oldest generation, they are walked by a full collection only; the collector does
not count objects moved this way towards its next one, so this module does (:data:`UNWALKED_LIMIT`), and a loop
that builds and drops large models still frees them (their rows hold reference cycles: only the collector frees
them). Measured in ``docs/notes/bench-scale-history.md``, "the collector, the refinement and the certificate's
objective".
"""

from __future__ import annotations

import gc
import sys

MOVES = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
"""Whether :func:`to_oldest_generation` moves anything: on CPython 3.11-3.13, whose collector has the three
generations that ``gc.freeze()`` and ``gc.unfreeze()`` move objects between as described here (3.14's incremental
collector splits the old generation in two; not measured, so left to it)."""

YOUNG_TO_MOVE = 100_000
"""A build that leaves at least this many new objects moves them (:func:`to_oldest_generation`); a smaller one
(Iris, Wine, an estimator's many small fits) leaves them to the collector's own generations."""

UNWALKED_LIMIT = 2_000_000
"""Objects moved and not yet walked by a full collection, at or above which the next large build ends with one
(``gc.collect()``): a loop that builds large models and drops them keeps at most about this many objects of dropped
models (plus the last model's)."""


class _Unwalked:
    count = 0  # objects moved to the oldest generation since the last full collection
    full_collections = 0  # the collector's count of full collections (gc.get_stats()) when it was last read


def _full_collections() -> int:
    return gc.get_stats()[-1]["collections"]


def unwalked() -> int:
    """The number of objects moved to the oldest generation by :func:`to_oldest_generation` since the last full
    collection (the collector's own or this module's)."""
    if _full_collections() != _Unwalked.full_collections:
        _Unwalked.count, _Unwalked.full_collections = 0, _full_collections()
    return _Unwalked.count


def to_oldest_generation(young_to_move: int | None = None, unwalked_limit: int | None = None) -> bool:
    """Move every object the collector tracks to its oldest generation when at least ``young_to_move`` are new
    (``gc.get_count()[0]``): ``gc.freeze()`` then ``gc.unfreeze()``, two list splices whatever the number of
    objects. ``True`` when moved; ``False``, and nothing moved, for fewer new objects, off CPython 3.11-3.13
    (:data:`MOVES`), when the process keeps frozen objects of its own (``gc.get_freeze_count() > 0``: those stay
    frozen), or when earlier moves reached ``unwalked_limit``: then a full collection (``gc.collect()``) walks them,
    and these new objects with them.
    ``None``: :data:`YOUNG_TO_MOVE`, :data:`UNWALKED_LIMIT`."""
    young_to_move = YOUNG_TO_MOVE if young_to_move is None else young_to_move
    unwalked_limit = UNWALKED_LIMIT if unwalked_limit is None else unwalked_limit
    young = gc.get_count()[0]
    if not MOVES or young < young_to_move or gc.get_freeze_count():
        return False
    if unwalked() >= unwalked_limit:
        gc.collect()
        unwalked()  # 0 again: the collection counted
        return False
    gc.freeze()
    gc.unfreeze()
    _Unwalked.count += young
    return True
