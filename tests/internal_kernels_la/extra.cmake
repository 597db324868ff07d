# The flash-attention tests use the process's kernel set, chosen once: run
# them again with each lower level forced (the scalar level has no F32/F16
# Gemm, so its prompts take the per-row path; a level the CPU lacks falls back
# to the best one it has, so these runs pass everywhere).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(_la_levels scalar neon)
else()
  set(_la_levels scalar avx2)
endif()
foreach(level ${_la_levels})
  add_test(NAME la_flash_attn_${level} COMMAND test_internal_kernels_la --gtest_filter=LaFlashAttn.*)
  set_tests_properties(la_flash_attn_${level} PROPERTIES
    ENVIRONMENT LMGGML_CPU_ISA=${level} LABELS internal_kernels_la)
endforeach()
