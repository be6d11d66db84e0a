"""``spark-cdc engine`` (the warm local engine) and ``spark-cdc target`` (the profile and target
in use)."""

from __future__ import annotations

import argparse


def add_engine_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "engine",
        help="the warm local engine: Spark Connect (or Thrift) server of this SPARK_CDC_HOME",
        description=(
            "start: run Spark's Connect server (--thrift: its Thrift server) with the project's "
            "settings, bound to 127.0.0.1, in the background (stops after --idle-timeout seconds "
            "without a client); stop; status. dbt's 'engine' target and the project's commands "
            "find it (and start it when needed)."
        ),
    )
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument("--thrift", action="store_true", help="the Thrift server instead")
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="a fixed port (default: a free one, recorded in the state)",
    )
    parser.add_argument(
        "--idle-timeout", type=float, default=1800.0, help="seconds without a client (1800)"
    )
    parser.set_defaults(handler=_run_engine)


def _run_engine(args: argparse.Namespace) -> int:
    from spark_cdc.engine import server as engine

    kind = "thrift" if args.thrift else "connect"
    if args.action == "start":
        before = engine.status(kind=kind)
        state = engine.start(kind=kind, port=args.port, idle_timeout=args.idle_timeout)
        verb = "already running" if before else "started"
        print(
            f"{kind} engine {verb}: {state['url']} (pid {state['supervisor_pid']}, since "
            f"{state['started_at']}, stops after {state['idle_timeout']:.0f} s idle; "
            f"log {state['log']})"
        )
        return 0
    if args.action == "stop":
        stopped = engine.stop(kind=kind)
        print(f"{kind} engine {'stopped' if stopped else 'was not running'}")
        return 0
    state = engine.status(kind=kind)
    if state is None:
        print(f"{kind} engine: not running")
        return 3
    print(
        f"{kind} engine: running at {state['url']} (pid {state['supervisor_pid']}, server pid "
        f"{state['server_pid']}, since {state['started_at']}, {state['clients']} client "
        f"connection(s) now, log {state['log']})"
    )
    return 0


def _run_target(args: argparse.Namespace) -> int:
    from spark_cdc.core.dbt_project_files import profiles_dir
    from spark_cdc.targets import current_target, profile_name

    target = current_target()
    print(
        f"profile {profile_name()} ({profiles_dir() / 'profiles.yml'}), target {target.name}: "
        f"method {target.method}, host {target.host}"
    )
    return 0


def add_target_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "target",
        help="the profile and target this command line (and dbt) use, and where they come from",
    )
    parser.set_defaults(handler=_run_target)
