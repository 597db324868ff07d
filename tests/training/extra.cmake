# test_training trains through the scheduler on the CPU and on REFDEV + CPU.
if(TARGET lmggml-refdev)
  add_dependencies(test_${suite} lmggml-refdev)
endif()
# the NumPy loss-trajectory check runs this script
target_compile_definitions(test_${suite} PRIVATE LMGGML_TRAINING_NUMPY_SCRIPT="${dir}/numpy_mlp.py")
# the digits end-to-end test trains the models of the train-digits example
target_sources(test_${suite} PRIVATE ${PROJECT_SOURCE_DIR}/examples/train-digits/digits.cpp)
target_include_directories(test_${suite} PRIVATE ${PROJECT_SOURCE_DIR}/examples/train-digits)
# the example itself (built with the tools): two epochs exit 0 with an accuracy
# line; a missing or wrong-sized data file (the fixture's README) exits 1 after
# one line
if(TARGET train-digits)
  add_test(NAME train_digits_example
           COMMAND sh -c "out=$(\"$0\" --epochs 2 --quiet) && echo \"$out\" && echo \"$out\" | grep -q 'epoch 2/2: .*held-out accuracy [0-9.]* %'"
                   $<TARGET_FILE:train-digits>)
  add_test(NAME train_digits_example_bad_data
           COMMAND sh -c "for d in /nonexistent/digits.u8 \"$1\"; do out=$(\"$0\" --data \"$d\" 2>&1); rc=$?; echo \"$out\"; test $rc -eq 1 && test $(echo \"$out\" | wc -l) -eq 1 || exit 1; done"
                   $<TARGET_FILE:train-digits> ${PROJECT_SOURCE_DIR}/tests/data/digits/README.md)
  set_tests_properties(train_digits_example train_digits_example_bad_data PROPERTIES LABELS training)
endif()
