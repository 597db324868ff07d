# test_dl loads the refdev plugin and the tiny test plugins; it also dlopens
# a test plugin itself to read its call counter.
target_compile_definitions(test_${suite} PRIVATE LMGGML_TESTPLUGIN_DIR="${PROJECT_BINARY_DIR}/testplugins")
target_link_libraries(test_${suite} PRIVATE ${CMAKE_DL_LIBS})
foreach(plugin lmggml-refdev lmggml-tp-zero lmggml-tp-badver lmggml-tp-noinit lmggml-tp-plain
               lmggml-tp-variant-lo lmggml-tp-variant-hi lmggml-tp-variant-off)
  if(TARGET ${plugin})
    add_dependencies(test_${suite} ${plugin})
  endif()
endforeach()
