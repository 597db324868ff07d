# test_llm_model: the runner library and its private headers (zero-copy
# checks look at where weights live); the refdev plugin for offload tests.
target_link_libraries(test_${suite} PRIVATE lmllm)
target_include_directories(test_${suite} PRIVATE ${PROJECT_SOURCE_DIR}/llm/src)
if(TARGET lmggml-refdev)
  add_dependencies(test_${suite} lmggml-refdev)
endif()
if(TARGET lmggml-opencl)
  add_dependencies(test_${suite} lmggml-opencl)
endif()
# multi_device_test.cpp splits a model over RPC servers started in-process
if(TARGET lmggml-rpc)
  add_dependencies(test_${suite} lmggml-rpc)
endif()
