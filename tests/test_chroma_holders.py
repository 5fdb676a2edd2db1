"""The process's holds on embedded stores and their task caches: let go with the last holder,
and never a deadlock when the collector lets one go on a thread already inside the registry."""

from __future__ import annotations

import fcntl
import gc
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory.chroma import connect
from memory.chroma.connect import CacheHold, Holders, StoreLock, shared_cache
from memory.chroma.tasks import TaskCache


def finishes(work: Callable[[], Any], seconds: float = 20.0) -> Any:
    """What `work` returns, run on a thread that must end within `seconds` (a deadlock fails
    the test instead of hanging the run)."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "deadlocked: the thread never left the registry"
    return out[0]


class Orphan:
    """An object in a reference cycle: only the cyclic collector frees it (as a ChromaMemory
    nobody closed is), and its finalizer then runs on whichever thread the collector runs."""

    def __init__(self, hold: object) -> None:
        self.hold, self.me = hold, self


def test_a_holder_let_go_by_the_thread_inside_is_counted_when_it_leaves() -> None:
    closed: list[str] = []
    reg = Holders(closed.append)
    reg.take("old", lambda: "old file")

    def make_new() -> str:
        reg.let_go("old")  # as a finalizer run by the collector inside `take` would
        assert closed == []  # not yet: this thread is still inside
        return "new file"

    assert finishes(lambda: reg.take("new", make_new)) == "new file"
    assert closed == ["old file"]
    assert reg.get("old") is None and reg.get("new") == "new file"


class CollectingLock:
    """A registry's lock that runs the collector as it is released: on Python 3.11 the release
    allocates (its arguments' tuple), and an allocation may start a collection."""

    def __init__(self, lock: Any) -> None:
        self._lock, self.armed = lock, True

    def __enter__(self) -> Any:
        return self._lock.__enter__()

    def __exit__(self, *exc: object) -> Any:
        if self.armed:
            self.armed = False
            gc.collect()
        return self._lock.__exit__(*exc)


def test_a_holder_collected_as_the_registry_lets_go_of_its_lock_is_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[str] = []
    reg = Holders(closed.append)  # its own registry: a deadlock here leaves the shared ones be
    reg.take("old", lambda: "old file")
    gc.disable()
    try:
        weakref.finalize(Orphan(None), reg.let_go, "old")
        monkeypatch.setattr(reg, "_lock", CollectingLock(reg._lock))
        assert finishes(lambda: reg.get("other")) is None
    finally:
        gc.enable()
    assert closed == ["old file"] and reg.get("old") is None


def test_a_cache_nobody_closed_collected_while_another_opens_is_let_go(tmp_path: Path) -> None:
    gc.disable()  # the collection must come where the test puts it
    try:
        Orphan(CacheHold(tmp_path, "old", TaskCache))
        assert shared_cache(tmp_path, "old") is not None

        def make() -> TaskCache:
            gc.collect()  # the orphan's finalizer runs here, inside the registry
            return TaskCache()

        hold = finishes(lambda: CacheHold(tmp_path, "new", make))
    finally:
        gc.enable()
    assert shared_cache(tmp_path, "old") is None
    assert shared_cache(tmp_path, "new") is hold.cache
    hold.close()
    assert shared_cache(tmp_path, "new") is None


def test_a_store_nobody_closed_collected_inside_the_registry_is_unlocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    take = connect._take_store

    def take_collecting(path: Path) -> Any:
        gc.collect()
        return take(path)

    gc.disable()
    try:
        Orphan(StoreLock(old))
        monkeypatch.setattr(connect, "_take_store", take_collecting)
        lock = finishes(lambda: StoreLock(new))
    finally:
        gc.enable()
    with (tmp_path / ".old.lock").open("a") as other:  # another run's open of the old store
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if the orphan still held it
    with (tmp_path / ".new.lock").open("a") as other, pytest.raises(BlockingIOError):
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    lock.close()
