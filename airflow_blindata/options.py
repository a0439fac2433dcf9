"""The provider's ``[blindata]`` options in Airflow's configuration, read in one place.

Every option is read when asked, as the OpenLineage provider's ``conf.py`` does, so that
``AIRFLOW__BLINDATA__*`` variables, ``*_cmd`` and ``*_secret`` work and a changed value takes
effect without a restart. Defaults and descriptions are declared once, in ``get_provider_info``
(the ``config`` section Airflow shows). Importing this module imports nothing of Airflow; where
Airflow is not installed (the command line on a laptop) the environment variables still apply.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Collection, Mapping
from pathlib import Path

__all__ = [
    "SECTION",
    "airflow_base_url",
    "airflow_home_path",
    "blindata_home",
    "declared_default",
    "flag",
    "lost_events_file",
    "misspelt_key",
    "option",
    "parse_flag",
    "parse_positive_int",
    "parse_positive_seconds",
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


def blindata_home() -> Path:
    """``$AIRFLOW_HOME/blindata`` (``~/airflow`` without ``AIRFLOW_HOME``): the default store
    and lost-events file live there."""
    return Path(os.environ.get("AIRFLOW_HOME") or "~/airflow").expanduser() / "blindata"


def airflow_home_path(value: str) -> Path:
    """``value`` as every Airflow process reads it alike: ``~`` from the user's home, a relative
    path from ``$AIRFLOW_HOME``. The scheduler, the workers, the API server and the CLI each start
    in a working directory of their own, and would each read a relative path as a file of their
    own. ``RuntimeError`` for a ``~user`` that names no home."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else blindata_home().parent / path


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


def airflow_base_url() -> str | None:
    """Airflow's ``[api] base_url``, the URL of its UI (None when unset): job entities link to
    their DAG's and task's pages there."""
    value = os.environ.get("AIRFLOW__API__BASE_URL", "").strip()
    if value:
        return value
    try:
        from airflow.configuration import conf
    except ImportError:
        return None
    return str(conf.get("api", "base_url", fallback="") or "").strip() or None


TRUE_WORDS = frozenset({"true", "t", "1", "yes", "y", "on", "enabled"})
FALSE_WORDS = frozenset({"false", "f", "0", "no", "n", "off", "disabled"})


def parse_flag(value: object, name: str) -> bool:
    """A boolean from a setting's text, one spelling for every setting of the provider (an
    option, a connection's extra, an operator's rendered argument): Airflow's (true/false, t/f,
    1/0) and yes/no, y/n, on/off, enabled/disabled, in any case, an inline comment after a blank
    left out (``False  # during the migration``: Airflow's configuration keeps it in the value).
    Anything else is a ``ValueError`` naming ``name``: a typo never passes for false."""
    if isinstance(value, bool):
        return value
    text = str(value).split(" #", 1)[0].split("\t#", 1)[0].strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise ValueError(f"{name} must be true or false, got {value!r}")


_DECORATIONS = frozenset({"", "x", "bd", "blindata", "uuid", "id", "name", "path", "file"})
"""Words that make a setting's key no other key (``tenant_uuid``, ``X-BD-Tenant``,
``ca_bundle_path``); any other word makes another tool's (``azure_tenant_id``,
``connect_timeout``: a review)."""


def misspelt_key(
    key: str, known: Collection[str], *, aliases: Mapping[str, str] | None = None
) -> str | None:
    """The key of ``known`` that ``key`` means, when it is not one: a misspelling (``tennant``,
    ``verify_sll``, ``shema``), another spelling (``auth-method``, ``Tenant``), a key holding the
    words of one and no other but an id's (``tenant_uuid``, ``X-BD-Tenant``, ``ssl_verify``), or
    a name ``aliases`` maps to one (``search_path`` for ``schema``). None for a key like none of
    them, and for a key of ``known`` itself.

    One reading for every mapping of settings the provider takes (the BLINDATA connection's
    extra, the event store's PostgreSQL connection's extra), so that a typo is refused naming
    the key meant instead of being dropped without a word."""
    if key in known:
        return None
    normalized = key.strip().lower().replace("-", "_").replace(" ", "_")
    if normalized in known:
        return normalized
    if aliases and normalized in aliases:
        return aliases[normalized]
    close = difflib.get_close_matches(normalized, list(known), n=1, cutoff=0.75)
    if close:
        return close[0]
    words = set(normalized.split("_"))
    for setting in known:
        parts = setting.split("_")
        if words.issuperset(parts) and words.difference(parts) <= _DECORATIONS:
            return setting
    return None


def declared_default(key: str) -> str:
    """The default of ``[blindata] key``, as ``get_provider_info`` declares it for Airflow to
    show: the one place an option's default is written."""
    from airflow_blindata.get_provider_info import get_provider_info

    return str(get_provider_info()["config"][SECTION]["options"][key]["default"])


def flag(key: str) -> bool:
    """``[blindata] key`` as a boolean (``parse_flag``); its declared default when unset."""
    raw = option(key) or declared_default(key)
    return parse_flag(raw, f"[{SECTION}] {key}")


def parse_positive_int(value: object, name: str) -> int:
    """A positive whole number from an argument or a setting's text (``500``, ``"500"``, a
    whole ``500.0``). Anything else (zero, a negative, a fraction, a boolean, a word) is a
    ``ValueError`` naming ``name``: a ``batch_size`` of 0 uploaded nothing and reported success,
    a ``"500"`` failed mid-sync with Python's words (a probe of the operators)."""
    number: int | None = None
    if isinstance(value, bool):  # int(True) is 1: a batch size nobody asked for
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            number = None
    if number is None or number < 1:
        raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    return number


def parse_positive_seconds(value: object, name: str) -> float:
    """A positive, finite number of seconds from an argument or a setting's text (``5``,
    ``"2.5"``). Anything else (zero, a negative, ``nan``, ``inf``, a boolean, a word) is a
    ``ValueError`` naming ``name``."""
    seconds: float | None = None
    if not isinstance(value, bool) and isinstance(value, int | float | str):
        try:
            seconds = float(value.strip() if isinstance(value, str) else value)
        except (ValueError, OverflowError):
            seconds = None
    if seconds is None or not 0 < seconds < float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return seconds


def positive_int(key: str, default: int) -> tuple[int, str | None]:
    """``[blindata] key`` as a positive integer, or the default and the problem with the value."""
    raw = option(key)
    if raw is None:
        return default, None
    try:
        return parse_positive_int(raw, key), None
    except ValueError:
        return default, f"[{SECTION}] {key} must be a positive integer, not {raw!r}"


def positive_seconds(key: str, default: float) -> tuple[float, str | None]:
    """``[blindata] key`` as a positive number of seconds, or the default and the problem."""
    raw = option(key)
    if raw is None:
        return default, None
    try:
        return parse_positive_seconds(raw, key), None
    except ValueError:
        return default, f"[{SECTION}] {key} must be a positive number of seconds, not {raw!r}"


def store_url() -> str | None:
    """``[blindata] store_url``: the event store every part of the provider uses."""
    return option("store_url")


def lost_events_file() -> str | None:
    """``[blindata] lost_events_file``: where capture keeps what the store refused; a relative
    path is read from ``$AIRFLOW_HOME`` (``airflow_home_path``), where the worker writes it and
    ``store stats`` and the Blindata page count it."""
    value = option("lost_events_file")
    if value is None:
        return None
    try:
        return str(airflow_home_path(value))
    except RuntimeError:  # ``~nosuchuser``: as given, and writing there says why it fails
        return value


def receiver_api_key() -> str:
    """``[blindata] receiver_api_key``: one or more keys (separated by commas or spaces), or a
    JSON object of key to job-namespace globs (``receiver.keys``)."""
    return option("receiver_api_key") or ""


def receiver_conn_id() -> str:
    """``[blindata] receiver_conn_id``: the connection whose extra holds more receiver keys."""
    return option("receiver_conn_id") or declared_default("receiver_conn_id")


def ui_enabled() -> bool:
    """``[blindata] ui_enabled``: add the Blindata page to the Airflow UI."""
    return flag("ui_enabled")


def ui_conn_id() -> str:
    """``[blindata] ui_conn_id``: the Blindata connection whose URL the page links objects to."""
    return option("ui_conn_id") or declared_default("ui_conn_id")


def ui_job_definition() -> str | None:
    """``[blindata] ui_job_definition``: the job definition file "Where it lands" maps with while
    the sync history records none (``ui.views``); a relative path is read from ``$AIRFLOW_HOME``,
    not from the API server's working directory."""
    value = option("ui_job_definition")
    return None if value is None else str(airflow_home_path(value))
