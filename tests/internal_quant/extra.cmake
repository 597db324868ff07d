# GCC 12 for aarch64 crashes (internal compiler error in
# vect_transform_reduction) vectorizing the fmax reduction of
# test_iq4_tq.cpp's TernaryRoundsToNearestTrit: compile that file without
# the loop vectorizer in the ARM64 cross build (scripts/test-arm64).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND
   CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_iq4_tq.cpp TARGET_DIRECTORY test_${suite}
                              PROPERTIES COMPILE_OPTIONS "-fno-tree-vectorize")
endif()
