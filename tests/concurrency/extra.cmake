# test_concurrency loads the refdev plugin (load_all racing enumeration,
# repeated load/unload).
if(TARGET lmggml-refdev)
  add_dependencies(test_${suite} lmggml-refdev)
endif()
