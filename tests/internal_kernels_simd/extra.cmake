# The MUL_MAT tests use the process's kernel set, chosen once: run them again
# with each lower level forced (a level the CPU lacks falls back to the best
# one it has, so these runs pass everywhere).
foreach(level scalar avx2 avx512)
  add_test(NAME simd_mul_mat_${level} COMMAND test_internal_kernels_simd --gtest_filter=SimdMulMat.*)
  set_tests_properties(simd_mul_mat_${level} PROPERTIES
    ENVIRONMENT LMGGML_CPU_ISA=${level} LABELS internal_kernels_simd)
endforeach()
