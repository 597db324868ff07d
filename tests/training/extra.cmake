# test_training trains through the scheduler on the CPU and on REFDEV + CPU.
if(TARGET lmggml-refdev)
  add_dependencies(test_${suite} lmggml-refdev)
endif()
