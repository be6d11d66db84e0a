"""Ctrl-C's mark on a cancelled connection's session: kept on that session object, so a later
session of a long-lived process is never taken for it (CPython reuses the ids of freed
objects)."""

from __future__ import annotations

import pytest

from dbt.adapters.sparkcdc.connect import BoundSessionConnectionWrapper, was_cancelled

pytestmark = pytest.mark.unit


class _Session:
    """What cancel reads of a session: interruptAll (and stop, for a Connect session)."""

    _jsparkSession = object()  # a session of this process: cancel does not stop it

    def interruptAll(self) -> list[str]:
        return []


def test_a_later_session_at_a_reused_id_is_not_taken_for_a_cancelled_one():
    kept: list[_Session] = []  # allocated first: nothing else takes the freed block
    kept.extend(_Session() for _ in range(64))
    kept.clear()
    cancelled = _Session()
    BoundSessionConnectionWrapper(cancelled).cancel()
    assert was_cancelled(cancelled)
    freed = id(cancelled)
    del cancelled
    # allocate sessions until CPython hands out the freed id again (the first one, usually)
    reused = None
    for _ in range(10_000):
        candidate = _Session()
        if id(candidate) == freed:
            reused = candidate
            break
        kept.append(candidate)
    if reused is None:
        pytest.skip("CPython did not hand out the freed id again: nothing to check")
    assert not was_cancelled(reused)
    assert not any(was_cancelled(session) for session in kept)
