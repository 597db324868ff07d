# test_internal_gguf reuses the independent GGUF encoder of tests/gguf.
target_sources(test_${suite} PRIVATE ${PROJECT_SOURCE_DIR}/tests/gguf/gguf_reference.cpp)
target_include_directories(test_${suite} PRIVATE ${PROJECT_SOURCE_DIR}/tests/gguf)
