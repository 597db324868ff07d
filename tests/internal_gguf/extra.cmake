# test_internal_gguf reuses the independent GGUF encoder of tests/gguf and
# loads the refdev plugin (when built) for the device-upload path.
target_sources(test_${suite} PRIVATE ${PROJECT_SOURCE_DIR}/tests/gguf/gguf_reference.cpp)
target_include_directories(test_${suite} PRIVATE ${PROJECT_SOURCE_DIR}/tests/gguf)
target_link_libraries(test_${suite} PRIVATE ${CMAKE_DL_LIBS})
if(TARGET lmggml-refdev)
  add_dependencies(test_${suite} lmggml-refdev)
endif()
