"""The ``airflow-blindata`` command: thin argument parsing over the functions the operators use.

Subcommands import what they need when they run, so ``airflow-blindata --version`` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from airflow_blindata import __version__

EMULATOR_API_KEY_ENV = "BLINDATA_EMULATOR_API_KEY"
DEFAULT_EMULATOR_TENANT = "00000000-0000-4000-8000-00000000b1da"


def _emulator(args: argparse.Namespace) -> int:
    from airflow_blindata.emulator import EmulatorSettings, serve

    api_key = args.api_key or os.environ.get(EMULATOR_API_KEY_ENV)
    if not api_key:
        print(
            f"error: give the emulator user's API key with --api-key or {EMULATOR_API_KEY_ENV}",
            file=sys.stderr,
        )
        return 2
    settings = EmulatorSettings.single(
        tenant=args.tenant, username=args.user, api_key=api_key, db_path=args.db
    )
    print(
        f"Blindata emulator on http://{args.host}:{args.port} (tenant {args.tenant}, "
        f"user {args.user}, state in {args.db})",
        flush=True,
    )
    serve(settings, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _check(args: argparse.Namespace) -> int:
    from airflow_blindata.hooks.blindata import BlindataHook

    ok, message = BlindataHook(blindata_conn_id=args.conn_id).test_connection()
    print(message)
    return 0 if ok else 1


def _plan(args: argparse.Namespace) -> int:
    from airflow_blindata.config import JobDefinition, JobDefinitionError
    from airflow_blindata.planning import load_known_systems, plan_files, render_tables

    try:
        definition = JobDefinition.load(args.definition)
        known = load_known_systems(args.systems) if args.systems else []
        plan = plan_files(args.events, definition, known)
    except (JobDefinitionError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(plan.model_dump_json(indent=2, by_alias=True))
    else:
        print(render_tables(plan), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="airflow-blindata",
        description="Catalogue OpenLineage lineage in Blindata from Apache Airflow.",
    )
    parser.add_argument("--version", action="version", version=f"airflow-blindata {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    emulator = commands.add_parser(
        "emulator", help="serve the Blindata API emulator (for tests and demos)"
    )
    emulator.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    emulator.add_argument("--port", type=int, default=8080, help="port (8080)")
    emulator.add_argument(
        "--db", default="blindata-emulator.db", help="SQLite file that holds its state"
    )
    emulator.add_argument(
        "--tenant", default=DEFAULT_EMULATOR_TENANT, help="the tenant uuid it serves"
    )
    emulator.add_argument("--user", default="airflow", help="the application user")
    emulator.add_argument(
        "--api-key", help=f"the user's API key (or set {EMULATOR_API_KEY_ENV}, kept out of ps)"
    )
    emulator.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server log level; info logs every request (info)",
    )
    emulator.set_defaults(run=_emulator)

    plan = commands.add_parser(
        "plan", help="show where OpenLineage events will land in Blindata, without syncing"
    )
    plan.add_argument("events", nargs="+", help="event files: JSON, JSON array or JSON lines")
    plan.add_argument("--definition", required=True, help="the job definition (YAML or JSON)")
    plan.add_argument(
        "--systems", help="JSON list of the Systems Blindata holds (as GET /api/v1/systems)"
    )
    plan.add_argument("--format", choices=["table", "json"], default="table")
    plan.set_defaults(run=_plan)

    check = commands.add_parser(
        "check", help="test a BLINDATA connection against its server (as the Airflow UI does)"
    )
    check.add_argument("--conn-id", default="blindata_default", help="connection id")
    check.set_defaults(run=_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
