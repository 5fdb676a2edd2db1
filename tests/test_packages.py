"""Our top-level names `memory` and `envs` are also names of unrelated PyPI packages and of files
users keep. A foreign one is reported at start-up with the file it is; user code loaded with
`python:MODULE:ATTR` never shadows ours."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ECHO_ENV

from reflexion.core.packages import check_packages, foreign_package

EXE = Path(sys.executable).with_name("reflexion")
USER_CODE = {
    "memory.py": "NOTES = 'my own notes module'\n",  # named like our package
    "myenv.py": ECHO_ENV,
    "mymodel.py": """
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage

        def make():
            replies = ["not yet", "Say the word.", "ready"]
            return GenericFakeChatModel(messages=iter(AIMessage(r) for r in replies))
        """,
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, text in USER_CODE.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def test_ours_are_found() -> None:
    assert foreign_package("memory") is None and foreign_package("envs") is None
    check_packages()


def test_python_m_from_a_folder_with_a_memory_py_names_the_file(folder: Path) -> None:
    argv = [sys.executable, "-m", "reflexion", "compare", "--env", "quadratic"]
    proc = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert f"`import memory` would load {folder / 'memory.py'}" in line
    assert "rename or move it" in line and not list(folder.glob("runs"))


def test_the_python_api_names_the_file_too(folder: Path) -> None:
    code = "from reflexion import run"
    proc = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True)
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .endswith("rename or move it, or run from another folder")
    )


def test_a_foreign_envs_package_on_the_path_is_reported(tmp_path: Path) -> None:
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "__init__.py").write_text("'''Another project's envs.'''\n")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [str(EXE), "--version"], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 2
    assert f"would load {tmp_path / 'envs' / '__init__.py'}" in proc.stderr


def test_user_code_loads_from_the_working_folder_without_shadowing_ours(folder: Path) -> None:
    """The console script from a folder holding memory.py: --env and --model python:... load
    the user's modules, and our `memory` package is still the one imported."""
    argv = [str(EXE), "run", "--env", "python:myenv:Echo", "--model", "python:mymodel:make"]
    argv += ["--strategy", "reflexion", "--episodes", "2", "--embedder", "hash-64"]
    argv += ["--out", "out", "--no-progress"]
    proc = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "reflexion" in proc.stdout and (folder / "out" / "memory" / "chroma.sqlite3").exists()
    results = (folder / "out" / "results.jsonl").read_text()
    assert '"final_passed": true' in results and '"attempts": 2' in results
