"""A built model's objects and Python's cyclic collector (:mod:`tpm_models.collector`, called by every builder):
a large model is left in the collector's oldest generation, and dropped models are still freed.

Truth: the collector's own lists (``gc.get_objects(generation)``), frozen objects (in no generation), and weak
references to models (dead once freed). The thresholds are lowered so that models of 40 points count as large.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from tpm_models import collector
from tpm_models.models.registry import build


def _data(m: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.random((m, 3)), np.arange(m) % 2


def _build(kind: int = 28):
    X, y = _data()
    return build(kind, X, y, 1, 0.3, 1.0, **({"eps": 0.02} if kind != 15 else {}))


@pytest.fixture
def collector_state():
    """The collector enabled and nothing frozen, as a process starts; restored afterwards."""
    enabled = gc.isenabled()
    assert gc.get_freeze_count() == 0, "a test left objects frozen"
    gc.enable()
    gc.collect()
    yield
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


moves = pytest.mark.skipif(not collector.MOVES, reason="the move is made on CPython 3.11-3.13 only")


@pytest.fixture
def small_is_large(monkeypatch, collector_state):
    monkeypatch.setattr(collector, "YOUNG_TO_MOVE", 50)


def _generation_of(obj) -> int | None:
    for generation in range(3):
        if any(o is obj for o in gc.get_objects(generation)):
            return generation
    return None


@moves
def test_a_large_model_is_built_into_the_oldest_generation(small_is_large):
    before = collector.unwalked()
    model = _build()
    row = next(iter(model.margin.values()))
    # the model, its rows and its expressions (the objective; a margin row's is made when first read,
    # tpm_models.models.lazy_rows): none left in a young generation to be walked again
    assert (_generation_of(model), _generation_of(row), _generation_of(model.obj.expr)) == (2, 2, 2)
    assert not row.made
    assert gc.get_count()[0] < 50  # not counted as new objects either
    assert collector.unwalked() > before  # but counted here, towards a full collection


@moves
def test_a_small_model_is_left_to_the_collector(collector_state):
    before = collector.unwalked()
    model = _build()
    assert collector.unwalked() == before  # Iris-sized: nothing moved (YOUNG_TO_MOVE = 10^5 objects)
    gc.collect(0)
    assert _generation_of(model) == 1  # the collector's own promotion, as before the builders moved anything


@moves
def test_a_dropped_model_is_freed_by_a_full_collection(small_is_large):
    model = _build(15)
    gone = weakref.ref(model)
    del model
    assert gone() is not None  # its rows hold reference cycles: reference counts alone do not free it
    gc.collect()
    assert gone() is None  # in the oldest generation, not frozen: a full collection frees it
    assert collector.unwalked() == 0  # and the moved objects count as walked


@moves
def test_a_loop_of_builds_frees_the_models_it_drops(small_is_large, monkeypatch):
    monkeypatch.setattr(collector, "UNWALKED_LIMIT", 1)  # a full collection at each build after a move
    refs = []
    for _ in range(4):
        model = _build()
        refs.append(weakref.ref(model))
        del model
    # no gc.collect() here: the builds' own full collections freed all but the last one or two
    assert sum(r() is not None for r in refs) <= 2
    assert refs[0]() is None and refs[1]() is None


def test_the_processes_own_frozen_objects_stay_frozen(small_is_large):
    kept = [{"a": 1}]
    gc.freeze()
    assert gc.get_freeze_count() > 0 and _generation_of(kept) is None  # frozen: in no generation
    model = _build(15)
    assert _generation_of(kept) is None  # still frozen: the builder unfroze nothing
    assert _generation_of(model) is not None  # and froze nothing of its own
    assert not collector.to_oldest_generation(young_to_move=0)


def test_a_paused_collector_stays_paused(small_is_large):
    gc.disable()
    before = collector.unwalked()
    _build(15)
    assert not gc.isenabled()  # the user's pause is the user's: the builder re-enables nothing
    assert collector.unwalked() == before  # and moves nothing
