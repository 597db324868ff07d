# test_reliability: the fault-injection walk includes src/core/fault.h (a
# self-contained header); the loader checks need the refdev plugin.
target_include_directories(test_${suite} PRIVATE ${PROJECT_SOURCE_DIR}/src/core)
target_link_libraries(test_${suite} PRIVATE ${CMAKE_DL_LIBS})
if(TARGET lmggml-refdev)
  add_dependencies(test_${suite} lmggml-refdev)
endif()
# null_calls.inc must match the current headers (regenerate with
# tests/reliability/gen_null_calls.py <source dir>).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME reliability_null_table_current
           COMMAND ${Python3_EXECUTABLE} ${dir}/gen_null_calls.py ${PROJECT_SOURCE_DIR} --check)
  set_tests_properties(reliability_null_table_current PROPERTIES LABELS reliability)
endif()
# The runner walk (fault_runner_test.cpp) loads a tiny generated model with
# lmllm; the generator and its double reference are in tests/common.
if(TARGET lmllm)
  target_link_libraries(test_${suite} PRIVATE lmllm)
endif()
# The NULL sweep covers ggml-rpc.h where the RPC core is built (its functions
# live in that static library and in the plugin, not in liblmggml).
if(TARGET lmggml-rpc-core)
  target_link_libraries(test_${suite} PRIVATE lmggml-rpc-core)
  target_compile_definitions(test_${suite} PRIVATE LMGGML_NULL_SWEEP_RPC)
endif()
