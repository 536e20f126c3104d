"""The wheel packs the shipped models by name (issue 61): a folder a user makes in ``models/`` of a
clone (``hgner train --out models/my-model`` before it was refused) is never packed as shipped."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("en-conll03", "en-3class", "es-conll02", "nl-conll02")


def test_the_wheel_packs_only_the_shipped_models(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    for folder in ("hgner", "corpora"):
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    (source / "models").mkdir()
    shutil.copy(ROOT / "models" / "__init__.py", source / "models" / "__init__.py")
    for name in (*SHIPPED, "my-model"):  # small stand-ins: the listing is what is checked
        (source / "models" / name).mkdir()
        (source / "models" / name / "meta.json").write_text("{}\n")
    # setuptools' build_py copies what a wheel holds (the wheel adds only its metadata); `wheel` and
    # `build` may be missing offline, setuptools is not
    result = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                             "--build-lib", str(tmp_path / "lib")], cwd=source, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    packed = tmp_path / "lib" / "hgner" / "models"
    assert sorted(p.name for p in packed.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(SHIPPED)
    assert all((packed / name / "meta.json").is_file() for name in SHIPPED)
