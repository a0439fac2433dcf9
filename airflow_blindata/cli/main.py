"""The ``airflow-blindata`` command: thin argument parsing over the functions the operators use.

Subcommands import what they need when they run, so ``airflow-blindata --version`` stays instant.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from contextlib import redirect_stdout
from dataclasses import asdict
from pathlib import Path
from typing import Any

from airflow_blindata import __version__


def _emulator(arguments: Sequence[str]) -> int:
    """Forward to the emulator's own command: a separate distribution, installed for tests and
    demos (``pip install ./emulator`` in the repository), never with the provider."""
    try:
        from blindata_emulator.__main__ import main as emulator_main
    except ImportError:
        print(
            "error: the Blindata emulator is not installed; it is a separate distribution, "
            "blindata-emulator (in the repository: pip install ./emulator)",
            file=sys.stderr,
        )
        return 2
    return emulator_main(arguments, prog="airflow-blindata emulator")


def _check(args: argparse.Namespace) -> int:
    from airflow_blindata.cli.sync import answer_only_on_stdout, connection_settings

    if (args.openapi or args.probe or args.format == "json") and not args.api:
        print("error: --openapi, --probe and --format go with --api", file=sys.stderr)
        return 2
    with answer_only_on_stdout() as answer:  # Airflow logs to stdout while it loads
        from airflow_blindata.blindata import BlindataError
        from airflow_blindata.hooks.blindata import check_api_settings, check_settings

        given = "--url" if args.url else f"The connection {args.conn_id}"
        try:
            settings = connection_settings(args)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except BlindataError as exc:
            ok, message = False, f"{given} is not usable: {exc}"
        except Exception as exc:  # the connection is nowhere Airflow keeps connections
            ok, message = False, f"Cannot read the connection {args.conn_id}: {exc}"
        else:
            if args.api:
                # the description is read without credentials: the connection itself is tested
                # too (``check_api_settings``), so that 0 never says a wrong key or tenant works
                result = check_api_settings(settings, openapi=args.openapi, probe=args.probe)
                return _print_api_check(result, args.format, answer)
            ok, message = check_settings(settings)
    print(message, file=answer)
    return 0 if ok else 1


def _print_api_check(result: Any, output_format: str, answer: Any) -> int:
    """``check --api``: the table (or JSON) with what the connection test said; 0 when every
    path is served and the connection works, else 1 (``ok``, which a script reads)."""
    from airflow_blindata.blindata.apicheck import render_api_check

    if output_format == "json":
        print(json.dumps(result.to_dict(), indent=2), file=answer)
    else:
        print(render_api_check(result), end="", file=answer)
    return 0 if result.ok else 1


def _plan(args: argparse.Namespace) -> int:
    from airflow_blindata.definition import JobDefinition, JobDefinitionError
    from airflow_blindata.plans import load_known_systems, plan_files, plan_store, render_tables
    from airflow_blindata.store import StoreError

    try:
        definition = JobDefinition.load(args.definition)
        known = load_known_systems(args.systems) if args.systems else []
        if args.events:
            plan = plan_files(args.events, definition, known)
        else:
            plan = plan_store(args.store, definition, known)
    except (JobDefinitionError, OSError, ValueError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(plan.model_dump_json(indent=2, by_alias=True))
    else:
        print(render_tables(plan), end="")
    return 0


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _open_store(url: str | None, *, create: bool = False) -> Any:
    """The store at ``url``; only ``ingest`` creates one (a mistyped path is said, not made)."""
    from airflow_blindata.store import open_store

    return open_store(url, create=create)


def _ingest(args: argparse.Namespace) -> int:
    from airflow_blindata.plans import read_event_file
    from airflow_blindata.store import AppendCounts, StoreError

    total, failed = AppendCounts(), False
    try:
        with _open_store(args.store, create=True) as store:
            for path in args.files:
                try:
                    counts = store.append_many(read_event_file(path), source="ingest")
                except OSError as exc:
                    print(f"error: {path}: {exc.strerror or exc}", file=sys.stderr)
                    failed = True
                    continue
                total += counts
                print(f"{path}: {_counts(counts)}")
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if len(args.files) > 1:
        print(f"total: {_counts(total)}")
    return 1 if failed else 0


def _counts(counts: Any) -> str:
    return (
        f"{counts.accepted} accepted, {counts.duplicate} duplicate, "
        f"{counts.quarantined} quarantined"
    )


def _store_stats(args: argparse.Namespace) -> int:
    from airflow_blindata.capture.transport import count_lost_events, lost_events_path
    from airflow_blindata.store import StoreError
    from airflow_blindata.store.placement import sqlite_across_machines
    from airflow_blindata.tables import table

    try:  # Airflow may log while its configuration loads: keep stdout for the answer
        with redirect_stdout(sys.stderr), _open_store(args.store) as store:
            stats = store.stats()
            # a path given here is read from the working directory, as --store is
            given = args.lost_events_file
            lost_path = Path(given).expanduser() if given else lost_events_path()
            placement = sqlite_across_machines(store)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        lost: int | None = count_lost_events(lost_path)
    except OSError as exc:
        lost = None
        print(
            f"warning: the lost-events file {lost_path} cannot be read "
            f"({exc.strerror or type(exc).__name__}): an event the store refuses is lost",
            file=sys.stderr,
        )
    if placement:
        print(f"warning: {placement}", file=sys.stderr)
    if args.format == "json":
        data = {**asdict(stats), "lost_events": lost, "lost_events_file": str(lost_path)}
        print(json.dumps(data, indent=2, default=str))
        return 0
    rows = [
        ("schema version", str(stats.schema_version)),
        ("events", str(stats.events)),
        ("jobs", str(stats.jobs)),
        ("received", f"{_when(stats.oldest_received_at)} .. {_when(stats.newest_received_at)}"),
        ("event times", f"{_when(stats.oldest_event_time)} .. {_when(stats.newest_event_time)}"),
        ("last cursor", str(stats.last_id)),
        ("quarantined", str(stats.quarantined)),
        ("sync records", str(stats.sync_records)),
        ("size", "-" if stats.size_bytes is None else f"{stats.size_bytes / 1e6:.1f} MB"),
        ("lost events", f"{'unreadable' if lost is None else lost} in {lost_path}"),
    ]
    rows += [(f"  {kind}", str(count)) for kind, count in sorted(stats.events_by_kind.items())]
    print(table(("store", stats.url), rows, max_cell=None))
    if stats.events_by_namespace:
        print("\nevents by job namespace:")
        print(table(("job namespace", "events"), stats.events_by_namespace.items(), max_cell=None))
    return 0


def _when(value: Any) -> str:
    return value.isoformat(timespec="seconds") if value else "-"


_QUARANTINE_CLEANED = 64 * 1024
"""The start of a quarantined event cleaned before it is cut to what is shown (cut first, a
secret straddling the cut would lose what marks it)."""


def _store_quarantine(args: argparse.Namespace) -> int:
    """The quarantined events, their secrets hidden as the Blindata page hides them (a terminal's
    output ends up in logs and tickets); ``--raw`` prints them as stored, to repair one."""
    from airflow_blindata.redaction import redact_event_text, scrub, url_secrets
    from airflow_blindata.store import StoreError

    try:
        with _open_store(args.store) as store:
            # the store's password as its URL or its connection holds it (``store.url`` is
            # the URL as shown, its password already ``***``)
            hide = getattr(store, "without_credentials", None)
            secrets = url_secrets(args.store or "")

            def shown(text: str) -> str:
                if args.raw:
                    return text
                text = scrub(redact_event_text(text), secrets)
                return hide(text) if hide is not None else text

            for count, event in enumerate(store.quarantine()):
                if count >= args.limit:
                    break
                raw = shown(event.raw[:_QUARANTINE_CLEANED])
                raw = raw if len(raw) <= 200 else raw[:200] + "..."
                reason = shown(event.reason)
                print(f"#{event.id} {_when(event.received_at)} [{event.source}] {reason}")
                print(f"    {raw}")
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _store_forget_job(args: argparse.Namespace) -> int:
    """Retire jobs now: by default, say what would go; with ``--yes``, remove their events."""
    from airflow_blindata.redaction import redact_text
    from airflow_blindata.store import StoreError

    prefix = f"{args.name}."
    try:
        with redirect_stdout(sys.stderr), _open_store(args.store) as store:
            children = sorted(
                name
                for namespace, name in store.job_digests()
                if namespace == args.namespace and name.startswith(prefix)
            )
            names = [args.name, *(children if args.with_children else ())]
            found = [store.forget_job(args.namespace, name, dry_run=not args.yes) for name in names]
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    found = [job for job in found if job.events]
    if not found:
        print(f"The store holds no event of job {redact_text(f'{args.namespace}/{args.name}')}.")
        return 1
    verb = "Forgot" if args.yes else "Would forget"
    for job in found:
        print(
            f"{verb} job {redact_text(f'{job.namespace}/{job.name}')}: {job.events} event(s) of "
            f"{job.runs} run(s), received {_when(job.first_received)} .. "
            f"{_when(job.last_received)}."
        )
    if children and not args.with_children:
        print(
            f"{len(children)} job(s) named {redact_text(args.name)}.… stay (a DAG's tasks, a "
            "task's SQL statements): add --with-children to forget them too."
        )
    if not args.yes:
        print(
            "Run again with --yes to remove them. The next snapshot then no longer describes"
            " them, and the cleanup after it removes what this job definition created for them"
            " in Blindata (job entities, routines and flows; what crawlers and people put there"
            " stays). A new event of a job describes it again."
        )
        return 0
    print(
        "The next snapshot no longer describes them; the cleanup after it removes them from"
        " Blindata (the sync DAG, or `airflow-blindata snapshot` then `cleanup`)."
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="airflow-blindata",
        description="Catalogue OpenLineage lineage in Blindata from Apache Airflow.",
    )
    parser.add_argument("--version", action="version", version=f"airflow-blindata {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    emulator = commands.add_parser(
        "emulator",
        help="serve the Blindata API emulator (for tests and demos; installed separately)",
        add_help=False,
    )
    emulator.set_defaults(run=lambda args: _emulator([]))

    store_help = "event store URL (default: [blindata] store_url, else $AIRFLOW_HOME/blindata)"
    plan = commands.add_parser(
        "plan", help="show where OpenLineage events will land in Blindata, without syncing"
    )
    plan.add_argument(
        "events",
        nargs="*",
        help="event files: JSON, JSON array or JSON lines (none: the events in the store)",
    )
    plan.add_argument("--definition", required=True, help="the job definition (YAML or JSON)")
    plan.add_argument("--store", help=store_help)
    plan.add_argument(
        "--systems", help="JSON list of the Systems Blindata holds (as GET /api/v1/systems)"
    )
    plan.add_argument("--format", choices=["table", "json"], default="table")
    plan.set_defaults(run=_plan)

    check = commands.add_parser(
        "check", help="test a BLINDATA connection against its server (as the Airflow UI does)"
    )
    from airflow_blindata.cli.sync import (  # argparse only
        add_connection_arguments,
        positive_whole_number,
    )

    add_connection_arguments(check)
    check.add_argument(
        "--api",
        action="store_true",
        help="compare the instance's OpenAPI description with every path the client may call",
    )
    check.add_argument(
        "--openapi",
        metavar="FILE_OR_URL",
        help="with --api: read the description here instead of the instance's /v3/api-docs",
    )
    check.add_argument(
        "--probe",
        action="store_true",
        help="with --api: without a description, ask the instance (GET of lists, OPTIONS; "
        "no writes)",
    )
    check.add_argument("--format", choices=["table", "json"], default="table")
    check.set_defaults(run=_check)

    ingest = commands.add_parser(
        "ingest", help="append OpenLineage events from files to the event store"
    )
    ingest.add_argument(
        "files", nargs="+", help="event files: JSON, JSON array or JSON lines (FileTransport)"
    )
    ingest.add_argument("--store", help=store_help)
    ingest.set_defaults(run=_ingest)

    store = commands.add_parser("store", help="inspect the event store")
    store_commands = store.add_subparsers(dest="store_command", metavar="COMMAND")
    store.set_defaults(run=lambda _: _usage(store))
    stats = store_commands.add_parser("stats", help="what the store holds")
    stats.add_argument("--store", help=store_help)
    stats.add_argument("--format", choices=["table", "json"], default="table")
    stats.add_argument(
        "--lost-events-file", help="the transport's lost-events file (default: as configured)"
    )
    stats.set_defaults(run=_store_stats)
    quarantine = store_commands.add_parser("quarantine", help="events kept as unreadable")
    quarantine.add_argument("--store", help=store_help)
    quarantine.add_argument(
        "--limit", type=positive_whole_number, default=50, help="how many to show (50)"
    )
    quarantine.add_argument(
        "--raw",
        action="store_true",
        help="print the events as stored, secrets included (by default they are hidden)",
    )
    quarantine.set_defaults(run=_store_quarantine)
    forget = store_commands.add_parser(
        "forget-job",
        help="retire a job now: remove its events, so the next sync removes it from Blindata",
        description="Without --yes, say what would be removed (a dry run); with it, remove "
        "every stored event of the job. The next snapshot no longer describes the job and "
        "the cleanup after it removes what the job definition created for it.",
    )
    forget.add_argument("namespace", help="the job's namespace, as its events name it")
    forget.add_argument("name", help="the job's name (an Airflow task: <dag_id>.<task_id>)")
    forget.add_argument("--store", help=store_help)
    forget.add_argument(
        "--with-children",
        action="store_true",
        help="also the jobs named NAME.<more> in the namespace (a DAG's tasks, a task's SQL)",
    )
    forget.add_argument(
        "--yes", action="store_true", help="remove the events (without it: a dry run)"
    )
    forget.set_defaults(run=_store_forget_job)

    from airflow_blindata.cli.sync import add_sync_commands  # argparse only: stays instant

    add_sync_commands(commands)
    return parser


def _as_the_airflow_command() -> None:
    """Read Airflow connections where the ``airflow`` command reads them.

    Outside Airflow's own processes the Task SDK (``BaseHook.get_connection``, used by the store
    for ``airflow-conn://`` URLs) reads only environment variables and secrets backends; the
    ``airflow connections get|test`` commands declare themselves a server process first
    (``_AIRFLOW_PROCESS_CONTEXT=server``), so that the metadata database is read too. So does
    this command, unless its caller already declared a context.
    """
    os.environ.setdefault("_AIRFLOW_PROCESS_CONTEXT", "server")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["emulator"]:  # the emulator's own command reads its arguments
        return _emulator(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    _as_the_airflow_command()
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
