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
# an install that failed in the last 10 minutes is not retried by every test
if [ -f "$venv.failed" ] && [ $(( $(date +%s) - $(stat -c %Y "$venv.failed") )) -lt 600 ]; then
    cat "$venv.failed"
    exit 11
fi
rm -rf "$venv"
python3 -m venv "$venv" || exit 10
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --retries 1 --timeout 30 \
    "gguf>=0.10" numpy >"$venv.pip.log" 2>&1; then
    tail -n 3 "$venv.pip.log" | tee "$venv.failed"
    exit 11
fi
rm -f "$venv.failed"
"$venv/bin/python" -c "import gguf, numpy" || exit 12
