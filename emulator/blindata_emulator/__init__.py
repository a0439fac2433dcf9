"""A Blindata API emulator: the REST contract of `blindata-api.md`, served from SQLite.

Tests, benchmarks and the demo use it in place of a Blindata tenant. It enforces what the
contract says a client must cope with (authentication and tenants, 409 on duplicate natural keys,
Spring pages with a size cap, the Spring error body, last-update refresh on every upsert,
upserts that never blank, per-row upload errors, asynchronous SQL analysis, quality result
identity) and injects the faults a client must survive (see `faults.py`).

    from blindata_emulator import EmulatorSettings, create_app, running_emulator

    settings = EmulatorSettings.single(tenant, "etl", "secret-key")
    app = create_app(settings)                      # in-process, through a2wsgi
    with running_emulator(settings) as served:      # over loopback HTTP
        ...served.base_url, served.emulator.faults.drop_next(1)
"""

from __future__ import annotations

from .app import Emulator, create_app
from .faults import FaultKind, Faults
from .middleware import DroppedConnection
from .model import Kind
from .server import EmulatorHandle, running_emulator, serve
from .settings import ALL_PERMISSIONS, DEFAULT_TENANT, EmulatorSettings, EmulatorUser
from .sql_analysis import AnalysisResult, ColumnPair, TableRef, analyze_script, analyze_sql

__all__ = [
    "ALL_PERMISSIONS",
    "DEFAULT_TENANT",
    "AnalysisResult",
    "ColumnPair",
    "DroppedConnection",
    "Emulator",
    "EmulatorHandle",
    "EmulatorSettings",
    "EmulatorUser",
    "FaultKind",
    "Faults",
    "Kind",
    "TableRef",
    "analyze_script",
    "analyze_sql",
    "create_app",
    "running_emulator",
    "serve",
]
