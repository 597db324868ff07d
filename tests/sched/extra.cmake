# test_sched runs graphs across the CPU and the refdev plugin.
if(TARGET lmggml-refdev)
  add_dependencies(test_${suite} lmggml-refdev)
endif()
