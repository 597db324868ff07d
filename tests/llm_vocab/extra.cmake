# The tokenizer tests use the runner library (and its internal Unicode
# helpers from llm/src for unit tests of the pre-tokenizer).
target_link_libraries(test_llm_vocab PRIVATE lmllm)
target_include_directories(test_llm_vocab PRIVATE ${PROJECT_SOURCE_DIR}/llm/src)
