# test_ops runs every case on every registered device, including the
# reference plugin device when it is built. The plugin target may be defined
# after this directory, so the dependency is added at the end of configuration.
function(lmggml_test_ops_add_refdev_dependency)
  if(TARGET lmggml-refdev)
    add_dependencies(test_ops lmggml-refdev)
  endif()
  if(TARGET lmggml-rpc)
    add_dependencies(test_ops lmggml-rpc)  # its loopback device (rpc_device.cpp)
  endif()
  if(TARGET lmggml-opencl)
    add_dependencies(test_ops lmggml-opencl)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL lmggml_test_ops_add_refdev_dependency)
