"""``blindata-emulator`` (also ``python -m blindata_emulator`` and ``airflow-blindata emulator``):
serve the emulator over HTTP, its state in a SQLite file.

Only ``argparse`` is imported until the server starts, so ``--help`` is instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace

API_KEY_ENV = "BLINDATA_EMULATOR_API_KEY"
DEFAULT_TENANT = "00000000-0000-4000-8000-00000000b1da"


def build_parser(prog: str = "blindata-emulator") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Serve the Blindata API emulator (for tests and demos)."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port (8080)")
    parser.add_argument(
        "--db", default="blindata-emulator.db", help="SQLite file that holds its state"
    )
    parser.add_argument("--tenant", default=DEFAULT_TENANT, help="the tenant uuid it serves")
    parser.add_argument("--user", default="airflow", help="the application user")
    parser.add_argument(
        "--api-key", help=f"the user's API key (or set {API_KEY_ENV}, kept out of ps)"
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server log level; info logs every request (info)",
    )
    parser.add_argument(
        "--move-path",
        action="append",
        default=[],
        metavar="CONTRACT_PATH=SERVED_PATH",
        help="serve a path of the contract elsewhere (as a tenant might); repeatable",
    )
    return parser


def main(argv: Sequence[str] | None = None, *, prog: str = "blindata-emulator") -> int:
    args = build_parser(prog).parse_args(argv)
    api_key = args.api_key or os.environ.get(API_KEY_ENV)
    if not api_key:
        print(
            f"error: give the emulator user's API key with --api-key or {API_KEY_ENV}",
            file=sys.stderr,
        )
        return 2
    moved: dict[str, str] = {}
    for move in args.move_path:
        source, equals, target = move.partition("=")
        if not equals:
            print(f"error: --move-path {move!r} is not CONTRACT_PATH=SERVED_PATH", file=sys.stderr)
            return 2
        moved[source] = target
    from blindata_emulator import EmulatorSettings, create_app, serve

    try:
        settings = replace(
            EmulatorSettings.single(
                tenant=args.tenant, username=args.user, api_key=api_key, db_path=args.db
            ),
            moved_paths=moved,
        )
        create_app(settings).state.emulator.close()  # an unknown path fails before serving
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"Blindata emulator on http://{args.host}:{args.port} (tenant {args.tenant}, "
        f"user {args.user}, state in {args.db})",
        flush=True,
    )
    serve(settings, host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
