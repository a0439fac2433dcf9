"""``airflow-blindata snapshot | cleanup | report``: the sync DAG's work, outside Airflow.

For administrators (a first sync by hand, a cleanup in dry run before enabling the DAG, reading
the last reports) and for the demo. The commands run the same ``sync.runner`` functions as the
operators. Blindata is reached through the Airflow connection ``--conn-id`` (default
``blindata_default``), found wherever Airflow keeps it, as the ``airflow`` command finds it
(environment variables, the secrets backend, the metadata database), or through ``--url`` with
the secret in the environment variable ``BLINDATA_SECRET`` (never a flag: it would show in
``ps``). ``airflow-blindata check`` takes the same arguments.

Exit codes: 0 success or nothing to do, 1 failed or refused, 2 bad arguments, 3 partial (some
objects refused: see the report).

Stdout carries the answer only (the report, or ``--json``'s JSON): progress, log lines (Airflow's
logging writes to stdout) and anything else printed while the command works go to stderr.

Only ``argparse`` is imported here: the parser is built on every ``airflow-blindata`` call, the
sync is imported when one of these commands runs.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, redirect_stdout
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from airflow_blindata.blindata import BlindataClient
    from airflow_blindata.hooks.blindata import BlindataConnectionSettings
    from airflow_blindata.sync.report import RunReport

__all__ = [
    "SECRET_ENV",
    "add_connection_arguments",
    "add_sync_commands",
    "answer_only_on_stdout",
    "connection_settings",
    "positive_whole_number",
]

SECRET_ENV = "BLINDATA_SECRET"
EXIT_CODES = {"success": 0, "skipped": 0, "failed": 1, "refused": 1, "partial": 3, "running": 1}
DEFAULT_REPORTS = 5


def positive_whole_number(text: str) -> int:
    """An ``argparse`` type: a count such as ``--batch-size``, refused unless positive (a batch
    size of 0 uploaded nothing and reported success, a probe); argparse names the option."""
    from airflow_blindata.options import parse_positive_int  # the standard library only

    try:
        return parse_positive_int(text, "value")
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, got {text!r}") from None


def _connection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--definition", required=True, help="the job definition (YAML or JSON)")
    parser.add_argument("--store", help="event store URL (default: the configured store)")
    add_connection_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--conn-id``, or ``--url``, ``--user``, ``--tenant``, ``--auth-method``, ``--api-paths``."""
    parser.add_argument(
        "--conn-id",
        default="blindata_default",
        help="Airflow connection, wherever Airflow keeps it (blindata_default)",
    )
    parser.add_argument(
        "--url", help=f"Blindata URL instead of a connection; secret in ${SECRET_ENV}"
    )
    parser.add_argument("--user", help="with --url: the username")
    parser.add_argument("--tenant", help="with --url: the tenant uuid")
    parser.add_argument(
        "--auth-method",
        default="api_key",
        choices=["api_key", "login", "bearer"],
        help="with --url",
    )
    parser.add_argument(
        "--api-paths",
        metavar="JSON",
        help="with --url: paths this instance serves elsewhere, as the connection's api_paths",
    )


def add_sync_commands(commands: Any) -> None:
    """Add ``snapshot``, ``cleanup`` and ``report`` to the ``airflow-blindata`` subparsers."""
    snapshot = commands.add_parser(
        "snapshot",
        help="map the stored events and bring Blindata in line (the sync DAG's first task)",
    )
    _connection_arguments(snapshot)
    snapshot.add_argument(
        "--batch-size", type=positive_whole_number, default=500, help="rows per upload (500)"
    )
    snapshot.add_argument(
        "--no-retention", action="store_true", help="do not prune the store by the retention first"
    )
    snapshot.add_argument(
        "--light",
        action="store_true",
        help="only the jobs that received events since the last sync; removes nothing, no "
        "retention, skipped when nothing is new",
    )
    snapshot.set_defaults(run=_snapshot)

    cleanup = commands.add_parser(
        "cleanup", help="remove what the definition owns and no longer describes"
    )
    _connection_arguments(cleanup)
    cleanup.add_argument("--dry-run", action="store_true", help="report, remove nothing")
    cleanup.add_argument("--force", action="store_true", help="allow more than maxRemovalShare")
    cleanup.set_defaults(run=_cleanup)

    report = commands.add_parser("report", help="print the last sync reports of a definition")
    which = report.add_mutually_exclusive_group(required=True)
    which.add_argument("--definition", help="the job definition (YAML or JSON)")
    which.add_argument("--uuid", type=_definition_uuid, help="or the definition uuid")
    report.add_argument("--store", help="event store URL (default: the configured store)")
    report.add_argument("--kind", choices=["snapshot", "light", "cleanup"], help="only this kind")
    report.add_argument(
        "--limit", type=positive_whole_number, default=DEFAULT_REPORTS, help="how many (5)"
    )
    report.add_argument("--json", action="store_true", help="print the reports as JSON")
    report.set_defaults(run=_report)


def connection_settings(args: argparse.Namespace) -> BlindataConnectionSettings:
    """The Blindata connection the arguments name: ``--url`` (the secret in ``$BLINDATA_SECRET``),
    else the Airflow connection ``--conn-id`` wherever Airflow keeps it, the metadata database
    included (``settings_from_airflow``).

    Raises ``ValueError`` for arguments that do not go together, ``BlindataConfigError`` for a
    connection that cannot be used, and Airflow's ``AirflowNotFoundException`` for a connection
    that does not exist.
    """
    from airflow_blindata.hooks.blindata import (
        URL_OPTION,
        BlindataConnectionSettings,
        settings_from_airflow,
    )

    if not args.url:
        if getattr(args, "api_paths", None):
            raise ValueError("--api-paths goes with --url; a connection keeps its own api_paths")
        return settings_from_airflow(args.conn_id)
    secret = os.environ.get(SECRET_ENV)
    if not secret:
        raise ValueError(f"--url needs the API key, password or token in ${SECRET_ENV}")
    if args.auth_method != "bearer" and not args.user:
        raise ValueError(f"--auth-method {args.auth_method} needs --user")
    given = SimpleNamespace(
        conn_id=URL_OPTION,
        host=args.url,
        port=None,
        login=args.user,
        password=secret,
        extra_dejson={
            "tenant": args.tenant,
            "auth_method": args.auth_method,
            "api_paths": getattr(args, "api_paths", None),
        },
    )
    return BlindataConnectionSettings.from_connection(given)


def _client(args: argparse.Namespace) -> BlindataClient:
    return connection_settings(args).client()


@contextmanager
def answer_only_on_stdout() -> Iterator[TextIO]:
    """Yield stdout for the answer; meanwhile prints and log handlers write to stderr.

    Log handlers set up before (Airflow configures its logging, on stdout, when first imported)
    are pointed at stderr for the duration; those set up meanwhile find stderr as ``sys.stdout``.
    """
    answer = sys.stdout
    moved = [handler for handler in _stream_handlers() if handler.stream is answer]
    for handler in moved:
        handler.setStream(sys.stderr)
    try:
        with redirect_stdout(sys.stderr):
            yield answer
    finally:
        for handler in moved:
            handler.setStream(answer)


def _stream_handlers() -> list[logging.StreamHandler[Any]]:
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    return [
        handler
        for logger in loggers
        if isinstance(logger, logging.Logger)
        for handler in logger.handlers
        if isinstance(handler, logging.StreamHandler)
    ]


def _print_progress(phase: str, done: int, total: int | None) -> None:
    count = f"{done}/{total}" if total is not None else f"{done} so far"
    print(f"  {phase}: {count}", file=sys.stderr, flush=True)


def _run(args: argparse.Namespace, kind: str) -> int:
    from airflow_blindata.definition import JobDefinition, JobDefinitionError
    from airflow_blindata.options import airflow_base_url
    from airflow_blindata.store import StoreError, open_store
    from airflow_blindata.store.placement import nothing_captured
    from airflow_blindata.sync.report import RunOrigin
    from airflow_blindata.sync.runner import run_cleanup, run_light, run_snapshot

    try:
        definition = JobDefinition.load(args.definition)
        with ExitStack() as stack:
            answer = stack.enter_context(answer_only_on_stdout())
            # Airflow's configuration, read once Airflow's log lines go to stderr
            definition = definition.with_airflow_base_url(airflow_base_url())
            store = stack.enter_context(open_store(args.store))
            if kind == "snapshot" and (empty := nothing_captured(store)):
                print(f"warning: {empty}", file=sys.stderr)
            client = stack.enter_context(_client(args))
            if kind == "snapshot" and args.light:
                report = run_light(
                    definition,
                    client,
                    store,
                    progress=_print_progress,
                    batch_size=args.batch_size,
                    origin=RunOrigin(command="snapshot --light"),
                )
            elif kind == "snapshot":
                report = run_snapshot(
                    definition,
                    client,
                    store,
                    progress=_print_progress,
                    batch_size=args.batch_size,
                    apply_retention=not args.no_retention,
                    origin=RunOrigin(command=kind),
                )
            else:
                report = run_cleanup(
                    definition,
                    client,
                    store,
                    dry_run=args.dry_run,
                    force=args.force,
                    progress=_print_progress,
                    origin=RunOrigin(command=kind),
                )
    except (JobDefinitionError, StoreError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # e.g. the Airflow connection does not exist
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    _show([report], as_json=args.json, out=answer)
    return EXIT_CODES[report.status]


def _snapshot(args: argparse.Namespace) -> int:
    return _run(args, "snapshot")


def _cleanup(args: argparse.Namespace) -> int:
    return _run(args, "cleanup")


def _show(reports: list[RunReport], *, as_json: bool, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    if as_json:
        print(json.dumps([report.to_xcom() for report in reports], indent=2), file=out)
        return
    print("\n".join(report.render() for report in reports), end="", file=out)


def _definition_uuid(text: str) -> str:
    """A definition uuid in any spelling, as the definition keeps it (lower case)."""
    from airflow_blindata.definition import canonical_uuid

    try:
        return canonical_uuid(text.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _report(args: argparse.Namespace) -> int:
    from airflow_blindata.definition import JobDefinition, JobDefinitionError
    from airflow_blindata.store import StoreError, open_store
    from airflow_blindata.sync.runner import history

    try:
        uuid = args.uuid or JobDefinition.load(args.definition).uuid
        with answer_only_on_stdout(), open_store(args.store, create=False) as store:
            reports = history(store, uuid, kind=args.kind, limit=args.limit)
    except (JobDefinitionError, StoreError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not reports:
        print(f"No sync report of job definition {uuid} in the store yet.", file=sys.stderr)
        return 0
    _show(reports, as_json=args.json)
    return 0
