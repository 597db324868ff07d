# test_quant_py runs gguf_oracle.py, which keeps its venv in the build tree.
target_compile_definitions(test_${suite} PRIVATE
  LMGGML_QUANT_PY_SCRIPT="${dir}/gguf_oracle.py"
  LMGGML_QUANT_PY_VENV="${CMAKE_CURRENT_BINARY_DIR}/quant_py_venv"
  LMGGML_QUANT_PY_WORK="${CMAKE_CURRENT_BINARY_DIR}/quant_py_work")
target_include_directories(test_${suite} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/internal_quant)
