"""The distribution: what ``python -m build`` makes of the project, as the README's Install says."""

from __future__ import annotations

import email
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (importlib.util.find_spec("build") and importlib.util.find_spec("twine")),
        reason="build and twine are in the dev extra: pip install -e '.[dev]'",
    ),
]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source archive, and the wheel built from it (``python -m build``'s default)."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_wheel_carries_the_license_and_complete_metadata(dist: Path) -> None:
    (wheel,) = dist.glob("airflow_blindata-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (license_name,) = [name for name in names if name.endswith(".dist-info/licenses/LICENSE")]
        assert archive.read(license_name) == (ROOT / "LICENSE").read_bytes()
        (metadata_name,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(metadata_name))
        entry_points = archive.read(metadata_name.replace("METADATA", "entry_points.txt")).decode()
    assert "Apache License" in (ROOT / "LICENSE").read_text()
    assert metadata["Name"] == "airflow-blindata"
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["License-File"] == "LICENSE"
    assert metadata["Summary"] and metadata["Requires-Python"] == ">=3.11"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "pip install" in metadata.get_payload()  # the README is the long description
    assert metadata.get_all("Project-URL") and metadata.get_all("Keywords")
    assert "Framework :: Apache Airflow :: Provider" in metadata.get_all("Classifier")
    assert any(dep.startswith("apache-airflow>=") for dep in metadata.get_all("Requires-Dist"))
    assert "[apache_airflow_provider]" in entry_points and "[airflow.plugins]" in entry_points
    assert "airflow-blindata = airflow_blindata.cli:main" in entry_points
    assert not [name for name in names if "emulator" in name]  # a distribution of its own
    assert "airflow_blindata/ui/templates/base.html" in names  # the Blindata page's templates


def test_the_emulator_is_a_distribution_of_its_own(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--outdir",
            str(tmp_path),
            str(ROOT / "emulator"),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = tmp_path.glob("blindata_emulator-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(metadata_name))
    assert "blindata_emulator/app.py" in names
    assert not [name for name in names if name.startswith("airflow_blindata")]
    requires = " ".join(metadata.get_all("Requires-Dist"))
    assert "starlette" in requires and "uvicorn" in requires and "airflow" not in requires


def test_the_source_archive_carries_the_license_docs_and_the_sync_dag(dist: Path) -> None:
    import tarfile

    (sdist,) = dist.glob("airflow_blindata-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.partition("/")[2] for name in archive.getnames()}
    assert {"LICENSE", "README.md", "docs/connection.md", "example_dags/blindata_sync.py"} <= names
    assert "example_dags/blindata_sync.yaml" in names


def test_twine_check_is_clean(dist: Path) -> None:
    files = sorted(str(path) for path in dist.iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


_NOT_REQUIRED = {
    "airflow_blindata",
    "__future__",
    # `airflow-blindata emulator` only: a distribution of its own, imported when the command runs
    "blindata_emulator",
    # Airflow 3.0/3.1 only, where they are the deployment's: the connection form's fields
    # (wtforms, which FAB brings) and PostgreSQL under SQLAlchemy 1.4 (psycopg2, which Airflow's
    # postgres provider brings; docs/versions.md)
    "wtforms",
    "psycopg2",
}


def test_every_package_the_provider_imports_is_declared() -> None:
    """A package imported but not declared works only while something else installs it (the
    issue found fastapi, starlette, jinja2 and attrs so): each import of ``airflow_blindata``
    outside the standard library is a declared requirement (or an extra's), or Airflow's own."""
    import ast
    import sys
    import tomllib
    from importlib.metadata import packages_distributions

    from packaging.requirements import Requirement

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = [*project["dependencies"], *project["optional-dependencies"]["postgres"]]
    declared = {Requirement(line).name.lower().replace("_", "-") for line in lines}
    declared |= {"apache-airflow-core", "apache-airflow-task-sdk"}  # what apache-airflow installs
    distributions = packages_distributions()
    package = root / "airflow_blindata"
    undeclared: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in _NOT_REQUIRED:
                    continue
                owners = {d.lower().replace("_", "-") for d in distributions.get(top, [top])}
                if not owners & declared:
                    undeclared.setdefault(top, set()).add(str(path.relative_to(package)))
    assert not undeclared, undeclared
