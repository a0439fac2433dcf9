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
