# test_backend loads the refdev plugin (events, non-host memory).
if(TARGET lmggml-refdev)
  add_dependencies(test_${suite} lmggml-refdev)
endif()
