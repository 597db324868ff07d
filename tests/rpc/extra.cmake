# test_rpc drives the RPC client and server in one process over 127.0.0.1,
# so it links the RPC core directly, and loads the plugin for the plugin test.
if(TARGET lmggml-rpc-core)
  target_link_libraries(test_rpc PRIVATE lmggml-rpc-core)
  add_dependencies(test_rpc lmggml-rpc)
endif()
# rpc_netns_test.cpp starts `lmggml rpc-server` processes in network namespaces
if(TARGET lmggml-cli)
  add_dependencies(test_rpc lmggml-cli)
  target_compile_definitions(test_rpc PRIVATE LMGGML_CLI="$<TARGET_FILE:lmggml-cli>")
endif()
