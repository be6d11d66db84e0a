"""A statement marked as safe to run again (a SQL model's MERGE, the scoped tests' passes) runs
again when Delta ends it for a concurrent commit; any other statement, or any other error,
fails at once."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError
from pyspark.errors import PySparkException

import dbt.adapters.sparkcdc.connect as connect
from dbt.adapters.sparkcdc.connect import RETRY_ON_CONFLICT, BoundCursor

pytestmark = pytest.mark.unit

CONFLICT = (
    "[DELTA_CONCURRENT_APPEND.WITHOUT_HINT] Transaction conflict detected. a concurrent MERGE "
    "added data to table spark_catalog.s.t committed at version 1."
)


class _Session:
    """Fails its first ``failures`` statements with ``message``, then answers."""

    def __init__(self, failures: int, message: str = CONFLICT) -> None:
        self.failures, self.message, self.statements = failures, message, []

    def sql(self, statement: str) -> str:
        self.statements.append(statement)
        if len(self.statements) <= self.failures:
            raise PySparkException(message=self.message)
        return "result"


@pytest.fixture(autouse=True)
def no_wait(monkeypatch):
    monkeypatch.setattr(connect.time, "sleep", lambda seconds: None)


MERGE = f"{RETRY_ON_CONFLICT}\nmerge into s.t using s.t__dbt_tmp on false when not matched insert *"


def test_a_marked_statement_runs_again_after_write_conflicts():
    session = _Session(failures=3)
    cursor = BoundCursor(session)
    cursor.execute(MERGE)
    assert session.statements == [MERGE] * 4 and cursor._df == "result"


def test_a_marked_statement_fails_after_its_last_attempt():
    session = _Session(failures=4)
    with pytest.raises(DbtRuntimeError, match="DELTA_CONCURRENT_APPEND"):
        BoundCursor(session).execute(MERGE)
    assert len(session.statements) == 4


def test_an_unmarked_statement_fails_at_the_first_conflict():
    session = _Session(failures=1)
    with pytest.raises(DbtRuntimeError, match="DELTA_CONCURRENT_APPEND"):
        BoundCursor(session).execute("merge into s.snapshot using cached_changes on false")
    assert len(session.statements) == 1


def test_a_marked_statement_fails_at_once_on_another_error():
    session = _Session(failures=1, message="[TABLE_OR_VIEW_NOT_FOUND] s.t__dbt_tmp")
    with pytest.raises(DbtRuntimeError, match="TABLE_OR_VIEW_NOT_FOUND"):
        BoundCursor(session).execute(MERGE)
    assert len(session.statements) == 1
