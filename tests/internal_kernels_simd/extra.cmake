# The MUL_MAT tests use the process's kernel set, chosen once: run them again
# with each lower level forced (a level the CPU lacks falls back to the best
# one it has, so these runs pass everywhere).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(_simd_levels scalar neon dotprod)
else()
  set(_simd_levels scalar avx2 avx512 avx512_vnni) # amx, where the CPU has it, runs unforced
endif()
foreach(level ${_simd_levels})
  add_test(NAME simd_mul_mat_${level} COMMAND test_internal_kernels_simd --gtest_filter=SimdMulMat.*)
  set_tests_properties(simd_mul_mat_${level} PROPERTIES
    ENVIRONMENT LMGGML_CPU_ISA=${level} LABELS internal_kernels_simd)
endforeach()

# Per-ISA objects share no symbol with baseline code (see the script).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|aarch64|arm64|ARM64)$")
  add_test(NAME simd_isa_objects_private
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_isa_objects.sh $<TARGET_OBJECTS:lmggml_obj>
           COMMAND_EXPAND_LISTS)
  set_tests_properties(simd_isa_objects_private PROPERTIES LABELS internal_kernels_simd)
endif()
