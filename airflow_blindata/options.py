"""The provider's ``[blindata]`` options in Airflow's configuration, read in one place.

Every option is read when asked, as the OpenLineage provider's ``conf.py`` does, so that
``AIRFLOW__BLINDATA__*`` variables, ``*_cmd`` and ``*_secret`` work and a changed value takes
effect without a restart. Defaults and descriptions are declared once, in ``get_provider_info``
(the ``config`` section Airflow shows). Importing this module imports nothing of Airflow; where
Airflow is not installed (the command line on a laptop) the environment variables still apply.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "SECTION",
    "blindata_home",
    "flag",
    "lost_events_file",
    "option",
    "positive_int",
    "positive_seconds",
    "receiver_api_key",
    "receiver_conn_id",
    "store_url",
    "ui_conn_id",
    "ui_enabled",
    "ui_job_definition",
]

SECTION = "blindata"
SENSITIVE = frozenset({"store_url", "receiver_api_key"})
"""The options ``get_provider_info`` marks sensitive: the ones that may come from ``<key>_cmd``."""
DEFAULT_RECEIVER_CONN_ID = "blindata_receiver"
DEFAULT_UI_CONN_ID = "blindata_default"


def blindata_home() -> Path:
    """``$AIRFLOW_HOME/blindata`` (``~/airflow`` without ``AIRFLOW_HOME``): the default store
    and lost-events file live there."""
    return Path(os.environ.get("AIRFLOW_HOME") or "~/airflow").expanduser() / "blindata"


def _environment_variable(key: str) -> str:
    return f"AIRFLOW__{SECTION.upper()}__{key.upper()}"


def option(key: str) -> str | None:
    """``[blindata] key``, stripped (a ``*_cmd`` output ends with a newline); None when empty."""
    value = os.environ.get(_environment_variable(key), "").strip()
    if value:
        return value
    try:
        from airflow.configuration import conf
    except ImportError:
        return None
    configured = str(conf.get(SECTION, key, fallback="") or "").strip()
    if not configured and key in SENSITIVE:
        # ``<key>_cmd``: Airflow 3.2+ runs it for a provider's sensitive option; 3.1 only for its
        # own, so here it is run as Airflow runs it (the same helper)
        command = str(conf.get(SECTION, f"{key}_cmd", fallback="") or "").strip()
        if command:
            from airflow.configuration import run_command

            configured = str(run_command(command) or "").strip()
    return configured or None


def flag(key: str, *, default: bool) -> bool:
    """``[blindata] key`` as a boolean, in Airflow's spelling (true/false, 1/0, t/f)."""
    try:
        from airflow.configuration import conf
    except ImportError:
        raw = os.environ.get(_environment_variable(key), "").strip().lower()
        return default if not raw else raw in {"true", "t", "1"}
    return bool(conf.getboolean(SECTION, key, fallback=default))


def positive_int(key: str, default: int) -> tuple[int, str | None]:
    """``[blindata] key`` as a positive integer, or the default and the problem with the value."""
    raw = option(key)
    if raw is None:
        return default, None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        return default, f"[{SECTION}] {key} must be a positive integer, not {raw!r}"
    return value, None


def positive_seconds(key: str, default: float) -> tuple[float, str | None]:
    """``[blindata] key`` as a positive number of seconds, or the default and the problem."""
    raw = option(key)
    if raw is None:
        return default, None
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        return default, f"[{SECTION}] {key} must be a positive number of seconds, not {raw!r}"
    return value, None


def store_url() -> str | None:
    """``[blindata] store_url``: the event store every part of the provider uses."""
    return option("store_url")


def lost_events_file() -> str | None:
    """``[blindata] lost_events_file``: where capture keeps what the store refused."""
    return option("lost_events_file")


def receiver_api_key() -> str:
    """``[blindata] receiver_api_key``: one or more keys (separated by commas or spaces), or a
    JSON object of key to job-namespace globs (``receiver.keys``)."""
    return option("receiver_api_key") or ""


def receiver_conn_id() -> str:
    """``[blindata] receiver_conn_id``: the connection whose extra holds more receiver keys."""
    return option("receiver_conn_id") or DEFAULT_RECEIVER_CONN_ID


def ui_enabled() -> bool:
    """``[blindata] ui_enabled``: add the Blindata page to the Airflow UI."""
    return flag("ui_enabled", default=True)


def ui_conn_id() -> str:
    """``[blindata] ui_conn_id``: the Blindata connection whose URL the page links objects to."""
    return option("ui_conn_id") or DEFAULT_UI_CONN_ID


def ui_job_definition() -> str | None:
    """``[blindata] ui_job_definition``: the job definition file "Where it lands" maps with; a
    relative path is read from ``$AIRFLOW_HOME``, not from the API server's working directory."""
    value = option("ui_job_definition")
    if value is None:
        return None
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else blindata_home().parent / path)
