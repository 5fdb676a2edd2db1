"""The house rules, read from the source with `ast`: layers, no import cycles, sandbox programs on
the standard library only, small modules and functions; and a light `import reflexion`."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from layout import (
    concrete_store_checks,
    crowded_folders,
    cycles,
    layer_violations,
    oversized,
    same_names,
    store_inside_imports,
)

ROOT = Path(__file__).resolve().parents[1]


def test_imports_follow_the_layers() -> None:
    assert layer_violations(ROOT) == []


def test_only_memory_imports_a_stores_insides() -> None:
    assert store_inside_imports(ROOT) == []


def test_no_module_tests_isinstance_on_a_concrete_store() -> None:
    assert concrete_store_checks(ROOT) == []


def test_the_store_rules_catch_an_inside_import_and_an_isinstance(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "memory/__init__.py": "from memory.chroma.store import ChromaMemory\n",  # allowed
            "memory/chroma/__init__.py": "",
            "memory/chroma/store.py": "class ChromaMemory: ...\n",
            "reflexion/curate/a.py": "from memory.chroma.store import ChromaMemory\n",
            "reflexion/web/b.py": "import memory.chroma\n",
            "reflexion/cli/c.py": (
                "import memory\n"
                "def f(m):\n"
                "    return isinstance(m, (memory.ChromaMemory, int)) or isinstance(m, dict)\n"
            ),
        },
    )
    assert store_inside_imports(root) == [
        "reflexion.curate.a:1 imports memory.chroma.store: a store's insides (use `memory`)",
        "reflexion.web.b:1 imports memory.chroma: a store's insides (use `memory`)",
    ]
    assert concrete_store_checks(root) == [
        "reflexion.cli.c:3 tests isinstance on ChromaMemory: ask the store's `can`"
    ]
    assert layer_violations(root) == []  # neither is a layer break: the rules add to the layers


def test_no_module_imports_another_that_imports_it_back() -> None:
    assert cycles(ROOT) == []


def test_modules_and_functions_stay_small() -> None:
    assert oversized(ROOT, max_module=400, max_function=40) == []


def test_each_folder_holds_a_few_modules_each_named_once() -> None:
    assert crowded_folders(ROOT, max_modules=12) == []
    assert same_names(ROOT, "reflexion") == []


def test_the_room_checks_catch_a_crowded_folder_and_a_name_used_twice(tmp_path: Path) -> None:
    files = {f"reflexion/trial/m{n}.py": "" for n in range(12)}
    files |= {"reflexion/trial/__init__.py": "", "reflexion/actor/m0.py": ""}
    root = _tree(tmp_path, files)
    assert crowded_folders(root, max_modules=12) == ["reflexion/trial: 13 modules"]
    assert same_names(root, "reflexion") == ["m0.py: reflexion.actor.m0, reflexion.trial.m0"]


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for top in ("reflexion", "memory", "envs"):
        (tmp_path / top).mkdir(exist_ok=True)
    return tmp_path


def test_the_checks_catch_a_wrong_way_import_a_cycle_and_a_long_function(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "memory/__init__.py": "",
            "memory/store.py": "from reflexion.runner.execute import run\n",  # up the layers
            "envs/a.py": "from envs import b\n",
            "envs/b.py": "import envs.a\n",  # a cycle
            "envs/sandbox/harness/wire.py": "import numpy\n",  # not the standard library
            "envs/sandbox/harness/side.py": "from envs.sandbox.harness import wire\n",  # absolute
            "reflexion/core/x.py": "def f():\n" + "    pass\n" * 41,
        },
    )
    bad = layer_violations(root)
    assert any("memory.store:1 imports reflexion.runner.execute" in b for b in bad)
    assert any("envs.sandbox.harness.wire:1 imports numpy" in b for b in bad)
    assert any("envs.sandbox.harness.side:1 imports envs.sandbox.harness.wire" in b for b in bad)
    assert cycles(root) == [["envs.a", "envs.b"]]
    assert oversized(root, 400, 40) == ["reflexion.core.x.f: 41 lines"]


def test_the_cycle_check_catches_a_longer_cycle_through_a_packages_init(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "envs/sql/__init__.py": "from envs.sql.env import SqlEnv\n",
            "envs/sql/env.py": "from envs.sql.run import run\n",
            "envs/sql/run.py": "from envs.sql import child\n",  # runs envs/sql/__init__.py
            "envs/sql/child.py": "",
            "envs/ok/__init__.py": "from envs.ok.env import OkEnv\n",
            "envs/ok/env.py": "import envs.ok.child as child\n",  # the module alone: no cycle
            "envs/ok/child.py": "",
        },
    )
    assert cycles(root) == [["envs.sql", "envs.sql.env", "envs.sql.run"]]


def test_scripts_import_public_faces_only(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "reflexion/__init__.py": "",
            "reflexion/report/__init__.py": "",
            "reflexion/report/folders.py": "",
            "reflexion/runner/__init__.py": "",
            "reflexion/runner/schedule.py": "",
            "memory/__init__.py": "",
            "memory/chroma/__init__.py": "",
            "memory/chroma/rows.py": "",
            "envs/__init__.py": "",
            "envs/sandbox/__init__.py": "",
            "scripts/good.py": (
                "import json\nfrom reflexion import run\nfrom reflexion.report import arm\n"
                "from memory import ChromaMemory\nfrom envs.sandbox import run_checks\n"
            ),
            "scripts/bad.py": (
                "from reflexion.report.folders import arm\n"  # a module inside a package
                "from memory.chroma.rows import to_metadata\n"  # a store's insides
                "from memory.chroma import ChromaMemory\n"  # nor their package
                "from reflexion.runner import schedule\n"  # the run's machinery
                "import reflexion.runner\n"
            ),
        },
    )
    bad = layer_violations(root)
    assert [b.split(": ")[0] for b in bad] == [
        "scripts.bad:1 imports reflexion.report.folders",
        "scripts.bad:2 imports memory.chroma.rows",
        "scripts.bad:3 imports memory.chroma",
        "scripts.bad:4 imports reflexion.runner.schedule",
        "scripts.bad:5 imports reflexion.runner",
    ]
    assert all("a script may import a package" in b for b in bad)


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_import_reflexion_loads_no_heavy_library() -> None:
    loaded = _loaded_after("import reflexion")
    heavy = {"torch", "chromadb", "xllamacpp", "sentence_transformers", "langchain_core"}
    assert not heavy & loaded


def test_the_runner_loads_without_langchain_or_the_stores() -> None:
    loaded = _loaded_after("import reflexion.runner.execute")
    assert not {"langchain_core", "chromadb", "torch", "xllamacpp"} & loaded


def test_the_help_loads_nothing_heavy() -> None:
    code = "from reflexion.cli.main import build_parser; build_parser().format_help()"
    loaded = _loaded_after(code)
    assert not {"langchain_core", "chromadb", "torch", "numpy", "matplotlib"} & loaded
