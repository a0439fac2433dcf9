"""The ``[blindata]`` capture options, and whether OpenLineage already sends to Blindata.

One small function per option, as the OpenLineage provider's ``conf.py`` does; each reads
Airflow's configuration when called (so ``AIRFLOW__BLINDATA__*`` variables work) and falls back to
the default the provider info declares.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from airflow_blindata.options import flag

__all__ = [
    "TRANSPORT_PATH",
    "blindata_legs",
    "listener_enabled",
    "openlineage_blindata_legs",
    "openlineage_disabled",
]

log = logging.getLogger(__name__)

TRANSPORT_PATH = "airflow_blindata.capture.transport.BlindataTransport"


def listener_enabled() -> bool:
    """[blindata] listener_enabled."""
    return flag("listener_enabled")


def openlineage_disabled() -> bool:
    """``[openlineage] disabled``, or its legacy variable ``OPENLINEAGE_DISABLED``: the switch
    that turns the OpenLineage provider off (not the provider's ``is_disabled``, which is also
    true when no transport is configured, the case the listener is for)."""
    import os

    from airflow.configuration import conf

    if os.environ.get("OPENLINEAGE_DISABLED", "").strip().lower() in ("true", "1", "t"):
        return True
    return bool(conf.getboolean("openlineage", "disabled", fallback=False))


def _is_blindata(transport_type: Any) -> bool:
    if not isinstance(transport_type, str) or "." not in transport_type:
        return False
    if transport_type == TRANSPORT_PATH:
        return True
    try:  # a subclass of ours, under any dotted path (compared by name: nothing else imported)
        module, _, name = transport_type.rpartition(".")
        found = getattr(importlib.import_module(module), name)
        return isinstance(found, type) and any(
            f"{cls.__module__}.{cls.__qualname__}" == TRANSPORT_PATH for cls in found.__mro__
        )
    except Exception:
        return False


def blindata_legs(config: Any) -> list[Mapping[str, Any]]:
    """The ``BlindataTransport`` configs anywhere inside an OpenLineage transport config.

    Looks into every nested transport — a ``composite``'s ``transports`` (list or dict), a
    ``transform``'s ``transport`` — for a ``type`` naming the class or a subclass.
    """
    if isinstance(config, Mapping):
        if _is_blindata(config.get("type")):
            return [config]
        return [leg for value in config.values() for leg in blindata_legs(value)]
    if isinstance(config, list | tuple):
        return [leg for value in config for leg in blindata_legs(value)]
    return []


def openlineage_blindata_legs(*, resolve_connection: bool) -> list[Mapping[str, Any]] | None:
    """The ``BlindataTransport`` legs the OpenLineage provider's own listener delivers to.

    Empty when the provider is disabled (then nothing else captures) or sends elsewhere. The
    provider's config sources are read in its own order (``config_conn_id``, ``config_path``,
    ``transport``). ``None`` when the answer is in a ``config_conn_id`` connection and
    ``resolve_connection`` is False: looking a connection up while plugins load is not safe in
    every Airflow process. Client-level sources (``OPENLINEAGE__*`` variables,
    ``openlineage.yml``) are not read: with those, set ``[blindata] listener_enabled = False``
    when they include BlindataTransport.

    Without a connection to resolve this imports nothing heavy: it runs in every process that
    loads the plugin.
    """
    from airflow.providers.openlineage import conf as openlineage_conf

    if openlineage_conf.is_disabled():
        return []
    try:
        if openlineage_conf.config_conn_id():
            if not resolve_connection:
                return None
            from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter

            config = OpenLineageAdapter().get_openlineage_config()
        else:
            config = _config_without_connection(openlineage_conf)
    except Exception as error:
        log.warning("Blindata capture could not read the OpenLineage configuration: %s", error)
        return []
    return blindata_legs((config or {}).get("transport"))


def _config_without_connection(openlineage_conf: Any) -> Mapping[str, Any] | None:
    """What ``OpenLineageAdapter.get_openlineage_config`` reads when ``config_conn_id`` is
    empty — the ``config_path`` YAML file, else ``[openlineage] transport`` — without importing
    the adapter (the OpenLineage client, the provider's utilities: hundreds of milliseconds)."""
    path = openlineage_conf.config_path(check_legacy_env_var=False)
    if path:
        import yaml

        with Path(path).open() as config_file:
            loaded: Mapping[str, Any] | None = yaml.safe_load(config_file)
        return loaded
    transport = openlineage_conf.transport()
    return {"transport": transport} if transport else None
