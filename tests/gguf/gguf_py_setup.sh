#!/bin/sh
# Creates, once per build directory, a Python virtual environment holding the
# `gguf` package (and numpy) for the cross-checks in gguf_python_test.cpp.
# Exit codes: 0 ready; 10 no python3 venv support; 11 pip could not install
# (no network or PyPI unreachable); 12 installed but not importable.
venv=$1
if command -v flock >/dev/null 2>&1; then
    exec 9>"$venv.lock"
    flock 9 # parallel ctest runs share one venv
fi
if "$venv/bin/python" -c "import gguf, numpy" 2>/dev/null; then
    exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv" || exit 10
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --retries 1 --timeout 30 \
    "gguf>=0.10" numpy || exit 11
"$venv/bin/python" -c "import gguf, numpy" || exit 12
