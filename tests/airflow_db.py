"""Airflow's metadata database for the real-Airflow tests: migrated once a test process, copied.

``airflow db migrate`` on SQLite is an Airflow start-up and every migration, seconds of CPU, and
about ten set-ups of a run need a fresh database of their own. The first migrates for real, in a
home of its own; the others get a copy of its file: the same Airflow, the same schema and rows.
The runner scripts, which migrate in their own process, get the template's path in
``TEMPLATE_ENV`` and copy it the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

TEMPLATE_ENV = "BLINDATA_TEST_MIGRATED_DB"
AIRFLOW = str(Path(sys.executable).parent / "airflow")

_template: Path | None = None


def template() -> Path:
    """The file of a metadata database this process migrated (the first call migrates it)."""
    global _template
    if _template is None:
        home = Path(tempfile.mkdtemp(prefix="airflow-blindata-migrated-"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "PYTEST"))}
        env.update({"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"})
        done = subprocess.run(
            [AIRFLOW, "db", "migrate"], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        _template = home / "airflow.db"
        assert _template.is_file(), f"no metadata database in {home} after airflow db migrate"
    return _template


def migrate(env: Mapping[str, str] | None = None) -> None:
    """A migrated metadata database in ``env``'s ``AIRFLOW_HOME`` (this process's by default),
    as ``airflow db migrate`` leaves it: a copy of the template, unless the home has a database
    of its own already or names another one."""
    env = os.environ if env is None else env
    home = Path(env["AIRFLOW_HOME"])
    target = home / "airflow.db"
    if "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN" in env or target.exists():
        done = subprocess.run(
            [AIRFLOW, "db", "migrate"], env=dict(env), capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template(), target)


def migrate_runner_home() -> None:
    """In a runner script, a process of its own: its ``AIRFLOW_HOME``'s metadata database,
    a copy of the test process's template when ``runner_env`` named one, else migrated."""
    home = Path(os.environ["AIRFLOW_HOME"])
    database = home / "airflow.db"
    migrated = os.environ.get(TEMPLATE_ENV)
    if migrated and not database.exists():
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(migrated, database)
    else:
        subprocess.run([AIRFLOW, "db", "migrate"], check=True, capture_output=True)


def runner_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a runner script: ``base`` (this process's) and the template's path."""
    return {**(os.environ if base is None else base), TEMPLATE_ENV: str(template())}
