# tests/cli runs the built `lmggml` program (target lmggml-cli, built only
# with LMGGML_BUILD_TOOLS=ON; without it the tests report themselves skipped).
if(TARGET lmggml-cli)
  add_dependencies(test_cli lmggml-cli)
  target_compile_definitions(test_cli PRIVATE LMGGML_CLI="$<TARGET_FILE:lmggml-cli>")
endif()
# the perplexity test recomputes the value through the runner library
target_link_libraries(test_cli PRIVATE lmllm)
# cli_opencl_test.cpp runs the program on the opencl plugin's device
if(TARGET lmggml-opencl)
  add_dependencies(test_cli lmggml-opencl)
endif()
# cli_rpc_test.cpp serves the CPU through the RPC plugin for `--rpc`
if(TARGET lmggml-rpc)
  add_dependencies(test_cli lmggml-rpc)
endif()
