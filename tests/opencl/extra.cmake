# test_opencl loads the opencl plugin when it is built (the tests skip, or
# fail under LMGGML_REQUIRE_OPENCL=1, when no OpenCL device is registered).
function(lmggml_test_opencl_add_plugin_dependency)
  if(TARGET lmggml-opencl)
    add_dependencies(test_opencl lmggml-opencl)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL lmggml_test_opencl_add_plugin_dependency)
