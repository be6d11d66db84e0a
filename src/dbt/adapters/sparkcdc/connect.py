"""dbt's SQL over a Spark session object: a session of this process or a Spark Connect client.

Each dbt connection (one per dbt thread and node) gets a session of its own, derived from the
process's session of the target (:func:`connection_session`): SQL settings (``set`` in a hook, a
Delta commit's ``userMetadata``), temporary views and the model's Python code stay with the node
that made them, so nodes running side by side with ``threads: 4`` never see each other's
settings. Tables, the metastore and cached data are shared.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkcdc.sql_literals import sql_literal

logger = AdapterLogger("Spark")
# Marks a session whose connection dbt cancelled (Ctrl-C): what fails on it then is the cancel,
# not the model. An attribute of the session object itself (an id could be reused by a later
# session of a long-lived process, whose own errors would then read as a cancel).
CANCELLED = "_spark_cdc_cancelled"


def was_cancelled(session: Any) -> bool:
    """Whether dbt cancelled the connection of ``session`` (Ctrl-C)."""
    return bool(getattr(session, CANCELLED, False))


def connection_session(root: Any, server_side_parameters: Mapping[str, str]) -> Any:
    """A new session sharing ``root``'s engine and catalog, with its own SQL settings."""
    if hasattr(root, "_jsparkSession"):  # a session of this process: same SparkContext
        session = root.newSession()
        # It starts from the process session's SQL settings (e.g. a session time zone set at
        # run time), as a node did when all nodes shared that session.
        for key, value in root.conf.getAll.items():
            if key.startswith(("spark.sql.", "spark.databricks.")) and (
                session.conf.get(key, None) != value
            ):
                with contextlib.suppress(Exception):  # static settings are shared already
                    session.conf.set(key, value)
    else:  # a Spark Connect client: a new server-side session, same server and token
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        # Built directly: Builder.create() would also make it the process's default session.
        session = ConnectSession(connection=root.client._builder)
        release_killed_clients_caches(root)
    for key, value in server_side_parameters.items():
        try:
            session.conf.set(key, value)
        except Exception as error:
            if _is_fixed_at_start(error):  # a static or core setting: the engine's own
                logger.debug(f"server_side_parameters: {key} is fixed when the engine starts")
                continue
            raise DbtRuntimeError(
                f"server_side_parameters: {key} = {value!r} was refused by Spark: {error}"
            ) from error
    return session


_SWEPT = "_spark_cdc_swept_killed_clients"
_SWEPT_LOCK = threading.Lock()


def release_killed_clients_caches(root: Any) -> None:
    """Once per engine session of this process: release what clients of this host that were
    killed before releasing it left cached on the engine (spark_cdc.core.shared_caches)."""
    from spark_cdc.core.shared_caches import release_dead_owners

    with _SWEPT_LOCK:  # marked on the session object (an id may be reused by a later one)
        if getattr(root, _SWEPT, False):
            return
        with contextlib.suppress(AttributeError):
            setattr(root, _SWEPT, True)
    try:
        released = release_dead_owners(root)
    except Exception as error:  # an engine without global temporary views holds none of them
        logger.debug(f"release killed clients' caches: {error}")
        return
    if released:
        logger.debug(f"released {len(released)} cached frame(s) of killed clients")


def _is_fixed_at_start(error: Exception) -> bool:
    """Whether Spark refused a setting because only an engine's start sets it (a static SQL
    setting, or a core one such as spark.executor.memory), not because of its value."""
    text = str(error)
    return "CANNOT_MODIFY_CONFIG" in text or "Cannot modify the value of" in text


@contextlib.contextmanager
def active_on_this_thread(session: Any) -> Iterator[None]:
    """Make ``session`` this thread's active session for the block (Spark Connect only).

    PySpark's Connect client binds the DataFrame that ``localCheckpoint()`` returns to the
    thread's active session, not to the session that checkpointed (pyspark 4.2,
    ``conversion.proto_to_remote_cached_dataframe``): with a session per dbt connection, the
    model's own session must be the active one while its code runs."""
    if hasattr(session, "_jsparkSession"):
        yield
        return
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    holder = ConnectSession._active_session
    previous = getattr(holder, "session", None)
    holder.session = session
    try:
        yield
    finally:
        holder.session = previous


def release_cached_views(session: Any) -> None:
    """Uncache the temporary views this session cached and did not release (a snapshot run
    refused by a guard, cancelled or failed before its post-hook drops its cached changes).

    Cached data lives in the engine's shared cache, not in the session: a Spark Connect
    session's end removes its temporary views but not what they cached, so a long-lived engine
    would keep every failed run's rows until it restarts."""
    try:
        views = [row for row in session.sql("show views").collect() if row.isTemporary]
        for view in views:
            if session.catalog.isCached(view.viewName):
                session.sql(f"uncache table if exists `{view.viewName}`")
    except Exception as error:  # a session already stopped holds nothing any more
        logger.debug(f"release cached views: {error}")


def jvm_error_message(error: Exception) -> str:
    """The message of the JVM exception behind a py4j error.

    PySpark turns a JVM error into a Python one by formatting it with Spark's error classes; an
    error of Delta's own classes (DELTA_MERGE_UNRESOLVED_EXPRESSION, a MERGE naming a column the
    source lacks) is not among Spark 4.2's, so formatting fails with ``[INTERNAL_ERROR] Cannot
    find main error class`` and the real error is left as that failure's context. Its own
    message (Delta formats it) names what is wrong, and each cause's message follows (a failed
    write's cause is the error the query raised)."""
    from py4j.protocol import Py4JJavaError

    context = error.__context__
    original = context if isinstance(context, Py4JJavaError) else error
    messages: list[str] = []
    try:
        throwable = original.java_exception  # type: ignore[attr-defined]
        while throwable is not None and len(messages) < 10:
            message = str(throwable.getMessage() or "")
            if message and not any(message in earlier for earlier in messages):
                messages.append(message)
            throwable = throwable.getCause()
    except Exception:
        return str(error)
    return "\n".join(messages) or str(error)


class BoundCursor(Cursor):
    """dbt-spark's session cursor, running its statements on a given session."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self._session = session

    def execute(self, sql: str, *parameters: Any) -> None:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        if parameters:
            sql = sql % parameters
        attempts = CONFLICT_ATTEMPTS if RETRY_ON_CONFLICT in sql else 1
        for attempt in range(1, attempts + 1):
            try:
                self._df = self._session.sql(sql)
                return
            except PySparkException as error:
                failure, message = error, str(error)
            except Py4JJavaError as error:
                failure, message = error, jvm_error_message(error)
            if attempt == attempts or not is_write_conflict(message):
                raise DbtRuntimeError(message) from failure
            logger.info(
                f"a concurrent Delta commit came first (attempt {attempt} of {attempts}); "
                "the statement committed nothing and runs again"
            )
            time.sleep(attempt + random.random())


RETRY_ON_CONFLICT = "/* spark_cdc: retry on a write conflict */"
"""Marks a statement that may run again when Delta ends it for a concurrent commit: a MERGE
whose source is computed anew when it runs (a SQL model's view, literal values), never one
from rows cached before the other commit (a snapshot's change rows)."""
CONFLICT_ATTEMPTS = 4
_CONFLICTS = (
    "DELTA_CONCURRENT_APPEND",
    "DELTA_CONCURRENT_DELETE_READ",
    "DELTA_CONCURRENT_DELETE_DELETE",
    "DELTA_CONCURRENT_TRANSACTION",
    "ConcurrentAppendException",
    "ConcurrentDeleteReadException",
    "ConcurrentDeleteDeleteException",
    "ConcurrentTransactionException",
)


def is_write_conflict(message: str) -> bool:
    """Whether Delta ended a write for a concurrent commit (the write committed nothing)."""
    return any(marker in message for marker in _CONFLICTS)


class BoundHandle:
    """A connection handle whose cursors run on one session."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def cursor(self) -> BoundCursor:
        return BoundCursor(self.session)


class BoundSessionConnectionWrapper(SessionConnectionWrapper):
    """dbt-spark's session connection wrapper over one given session.

    What a Python model of the node leaves behind lives as long as the connection: its cache
    scope and the objects its code made (on Spark Connect, a checkpointed DataFrame is released
    on the server when its Python object goes, and the node's MERGE still reads it through the
    model's temporary view). Closing the connection releases them, and stops a Spark Connect
    session (a session of this process is left to the process)."""

    def __init__(self, session: Any) -> None:
        super().__init__(BoundHandle(session))  # type: ignore[arg-type]
        self._held: list[tuple[str, Any]] = []
        self._views: list[str] = []

    @property
    def session(self) -> Any:
        return self.handle.session

    @classmethod
    def _fix_binding(cls, value: Any) -> str:
        """A bound value (a seed's cell) as an exact, escaped Spark SQL literal."""
        return sql_literal(value)

    def hold(self, scope: str, keep_alive: Any) -> None:
        """Keep a Python model's cache scope and objects until the connection closes."""
        self._held.append((scope, keep_alive))

    def hold_view(self, name: str) -> None:
        """Drop the global temporary view ``name`` (and its cache) when the connection closes."""
        if name not in self._views:
            self._views.append(name)

    def cancel(self) -> None:
        """Stop what this connection's session runs on the engine now (dbt calls it on every
        other open connection after Ctrl-C): Spark's ``interruptAll`` of the session, which is
        this connection's own, on Spark Connect (a server keeps running a query its client
        left) and in this process alike."""
        with contextlib.suppress(AttributeError):
            setattr(self.session, CANCELLED, True)
        try:
            interrupted = self.session.interruptAll()
        except Exception as error:  # a session already stopped has nothing left to run
            logger.debug(f"cancel: {error}")
            return
        logger.debug(f"cancel: interrupted {len(interrupted)} operation(s)")
        if not hasattr(self.session, "_jsparkSession"):
            # A Python model's code may be between two operations (nothing to interrupt): the
            # Spark Connect session is closed, so its next operation fails instead of writing.
            with contextlib.suppress(Exception):
                self.session.stop()

    def close(self) -> None:
        from spark_cdc.core.cache_slots import release_scope

        super().close()
        held, self._held = self._held, []
        for scope, _ in held:
            release_scope(scope)
        views, self._views = self._views, []
        for view in views:  # a run's post-hook dropped them unless it failed first
            with contextlib.suppress(Exception):
                self.session.catalog.dropGlobalTempView(view)
        release_cached_views(self.session)
        if not hasattr(self.session, "_jsparkSession"):
            with contextlib.suppress(Exception):
                self.session.stop()
