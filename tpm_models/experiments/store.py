"""The results store of the experiments: JSON lines, one checksummed record per finished task.

Contract (every experiment that keeps results across runs uses this module, today ``tpm-models table3`` and
``reproduce``: :mod:`tpm_models.experiments.table3.run`):

* a record is a JSON object with the fields of :data:`RECORD_FIELDS` (``key``: the task, e.g. (data set, cell,
  split); ``config``: what the result depends on, compared as a whole on resume; ``result``; ``timing``) and
  ``sha256``, the SHA-256 of those four (:func:`checksum`); a record whose checksum does not match, or whose
  ``result`` lacks one of the store's ``result_fields``, is not a record;
* a file is *recognised* as a store before anything is written to it (:meth:`ResultStore.check_recognised`):
  it is empty, or at least one of its lines is a record. A file none of whose lines is a record
  (``notes.txt``) is refused and left as it is;
* lines that are not records (a run killed mid-line) are moved to ``<store>.dropped``, never deleted;
* while a run writes, the store is locked (``<real store>.lock``: the path resolved, ``fcntl.flock``, the lock
  file checked by inode, holding the run's pid); a second run, through any name of the store, is refused with
  :class:`StoreLocked`, naming that pid; ``--fresh`` removes the store only under that lock;
* records are appended one at a time, flushed and synced, never through a symbolic link; a rewrite goes
  through :func:`tpm_models.files.replacing` (atomic, the file's mode kept, a read-only store refused).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from tpm_models.files import FileLock, Locked, append_line, replacing, writable_target


def checksum(record: dict) -> str:
    """The SHA-256 (hex) of a record's ``key``, ``config``, ``result`` and ``timing``, as canonical JSON."""
    body = {k: record[k] for k in ("key", "config", "result", "timing")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


RECORD_FIELDS = {"key": list, "config": dict, "result": dict, "timing": dict}
"""A store record's fields and their types (with ``sha256``, its checksum)."""


def record_problem(rec: object, key_names: Sequence[str] = (), result_fields: Sequence[str] = ()) -> str:
    """What is wrong with a line of a store, read as JSON ("" when it is a valid record): not an object, a missing
    field, a key of another length than ``key_names`` (when given), a checksum that does not match, a ``result``
    without one of ``result_fields`` or with one of them null. A record with a valid checksum but a missing or null
    field is refused too."""
    if not isinstance(rec, dict):
        return f"not a JSON object ({type(rec).__name__})"
    for name, kind in RECORD_FIELDS.items():
        if not isinstance(rec.get(name), kind):
            return f"no {name!r} field" if name not in rec else f"its {name!r} is not a {kind.__name__}"
    if key_names and len(rec["key"]) != len(key_names):
        return f"its key {rec['key']!r} is not ({', '.join(key_names)})"
    if rec.get("sha256") != checksum(rec):
        return "its checksum does not match its content"
    missing = [f for f in result_fields if f not in rec["result"]]
    if missing:
        return f"its result has no {', '.join(missing)}"
    null = [f for f in result_fields if rec["result"][f] is None]
    if null:
        return f"its result's {', '.join(null)} is null"
    return ""


class StoreLocked(Locked):
    """Another run writes to the store (its pid is in the message)."""


class ResultStore:
    """JSON lines, one record per task, each with its SHA-256 (``"sha256"``): the rules of the module docstring.

    An experiment names its records' key and result fields in a subclass (:attr:`key_names`,
    :attr:`result_fields`; :class:`tpm_models.experiments.table3.run.Table3Store`)."""

    key_names: tuple[str, ...] = ()
    """What the parts of a record's ``key`` are (its length is checked when given)."""
    result_fields: tuple[str, ...] = ()
    """The fields every record's ``result`` holds."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock: FileLock | None = None

    @classmethod
    def problem(cls, rec: object) -> str:
        """:func:`record_problem` with this store's key and result fields."""
        return record_problem(rec, cls.key_names, cls.result_fields)

    def read(self) -> tuple[list[dict], int]:
        """The valid records, and the number of corrupt or truncated lines."""
        valid, bad = self._read()
        return valid, len(bad)

    def _read(self) -> tuple[list[dict], list[tuple[int, str, str]]]:
        """The valid records, and each other line: (line number, text, what is wrong)."""
        if not self.path.exists():
            return [], []
        valid, bad = [], []
        with self.path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                line = raw.decode("utf-8", errors="replace").strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                    problem = self.problem(rec)
                except ValueError as exc:
                    problem = f"not JSON ({exc.__class__.__name__})"
                if problem:
                    bad.append((number, line, problem))
                else:
                    valid.append(rec)
        return valid, bad

    def check_recognised(self) -> tuple[list[dict], list[tuple[int, str, str]]]:
        """The store's records and its other lines, after checking it is a store: a file with lines of which none
        is a record (``notes.txt``) is refused (``ValueError``), and nothing is written to it."""
        if self.path.exists() and not self.path.is_file():
            raise ValueError(f"the results store {self.path} is not a regular file")
        valid, bad = self._read()
        if bad and not valid:
            number, _, problem = bad[0]
            raise ValueError(f"{self.path} is not a results store: none of its {len(bad)} line(s) is a record "
                             f"(line {number}: {problem}); it is left as it is: give another --store")
        return valid, bad

    def remove(self) -> list[Path]:
        """Delete the store (``--fresh``), after recognising it as one, under its lock (taken here when not held:
        a store another run writes is refused with :class:`StoreLocked` and left as it is); a file of other lines
        is refused (``ValueError``) and left as it is. The files removed: the store itself (``<store>.dropped``,
        lines set aside, is the user's to read and stays)."""
        if not self.path.exists():
            return []
        took = self._lock is None or not self._lock.held
        if took:
            self.lock()
        try:
            self.check_recognised()
            if not self.path.exists():
                return []
            self.path.unlink()
            return [self.path]
        finally:
            if took:
                self.unlock()

    def lock(self) -> None:
        """Hold ``<real store>.lock`` (:class:`tpm_models.files.FileLock`: the resolved path, checked by inode)
        until :meth:`unlock`; ``StoreLocked`` with the holder's pid."""
        lock = FileLock(self.path, "results store")
        try:
            lock.acquire()
        except Locked as exc:
            raise StoreLocked(f"{exc} (--store)") from None
        self._lock = lock

    def unlock(self) -> None:
        """Release the lock of :meth:`lock` (nothing if it is not held)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def set_aside(self, bad: Sequence[tuple[int, str, str]]) -> Path:
        """Append the lines that are not records to ``<store>.dropped`` (line number, problem, text): kept. A line
        already there (the same number, problem and text: a run stopped before the store's rewrite, then run again)
        is not appended twice."""
        aside = self.path.with_name(self.path.name + ".dropped")
        there = set()
        if aside.is_file():
            with aside.open(encoding="utf-8", errors="replace") as fh:
                there = {raw.strip() for raw in fh}
        entries = [json.dumps({"line": number, "problem": problem, "text": line}) for number, line, problem in bad]
        new = "".join(entry + "\n" for entry in entries if entry not in there)
        if new:
            append_line(aside, new)
        return aside

    def rewrite(self, records: Sequence[dict]) -> None:
        """Replace the file by ``records`` (:func:`tpm_models.files.replacing`: a temporary file, synced, then a
        rename; the file's mode kept; a read-only store refused before anything is written)."""
        with replacing(self.path) as fh:
            for rec in records:
                fh.write(json.dumps(rec, separators=(",", ":")) + "\n")

    def check_writable(self) -> None:
        """Refuse (``FileRefused``) a store the run could not append to, before anything is rewritten."""
        writable_target(self.path)

    def append(self, record: dict) -> None:
        """Append one record, checksummed, flushed and synced to disk."""
        record = {**record, "sha256": checksum(record)}
        append_line(self.path, json.dumps(record, separators=(",", ":")) + "\n")
