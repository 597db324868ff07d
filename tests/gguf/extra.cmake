# test_gguf: the Python cross-check creates a venv with the gguf package in
# the build directory (tests/gguf/gguf_py_setup.sh) and runs gguf_cross.py.
target_compile_definitions(test_${suite} PRIVATE
  LMGGML_GGUF_PY_VENV="${PROJECT_BINARY_DIR}/gguf-py-venv"
  LMGGML_GGUF_PY_DIR="${CMAKE_CURRENT_SOURCE_DIR}/gguf")
# inputs the fuzzer once tripped on (fuzz/regressions), replayed by every test run
target_compile_definitions(test_${suite} PRIVATE
  LMGGML_FUZZ_REGRESSIONS_DIR="${PROJECT_SOURCE_DIR}/fuzz/regressions")
