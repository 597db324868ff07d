# the runner library (llm/): static, links the public lmggml API
target_link_libraries(test_llm_chat PRIVATE lmllm)
