# Compile flags of the per-ISA kernel files (src/cpu/arch/x86/, arm/). Only
# these files get instruction-set flags, so the rest of the library stays
# baseline x86-64 / ARMv8-a; dispatch.cpp calls into a file only when cpuid
# (x86) or the HWCAP bits (ARM) report its level.
# A file's level is the end of its name: *_avx2.cpp, *_avx512.cpp, *_vnni.cpp,
# *_amx.cpp (VNNI's flags and the AMX tile and int8 instructions);
# ARM: *_neon.cpp, *_dotprod.cpp, *_i8mm.cpp.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|i[3-6]86)$" AND
   CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set(_lm_arch ${CMAKE_CURRENT_LIST_DIR}/x86)
  set(_lm_avx2   "-mavx2;-mfma;-mf16c")
  set(_lm_avx512 "${_lm_avx2};-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 warns inside its own avx512 intrinsic headers (the
    # _mm512_undefined_* operands of masked builtins): false positives
    list(APPEND _lm_avx512 "-Wno-uninitialized;-Wno-maybe-uninitialized")
  endif()
  set(_lm_vnni   "${_lm_avx512};-mavx512vnni;-mavx512vbmi")
  set(_lm_amx    "${_lm_vnni};-mamx-tile;-mamx-int8")
  file(GLOB _lm_files ${_lm_arch}/*_avx2.cpp)
  set_source_files_properties(${_lm_files} TARGET_DIRECTORY lmggml_obj PROPERTIES COMPILE_OPTIONS "${_lm_avx2}")
  file(GLOB _lm_files ${_lm_arch}/*_avx512.cpp)
  set_source_files_properties(${_lm_files} TARGET_DIRECTORY lmggml_obj PROPERTIES COMPILE_OPTIONS "${_lm_avx512}")
  file(GLOB _lm_files ${_lm_arch}/*_vnni.cpp)
  set_source_files_properties(${_lm_files} TARGET_DIRECTORY lmggml_obj PROPERTIES COMPILE_OPTIONS "${_lm_vnni}")
  file(GLOB _lm_files ${_lm_arch}/*_amx.cpp)
  set_source_files_properties(${_lm_files} TARGET_DIRECTORY lmggml_obj PROPERTIES COMPILE_OPTIONS "${_lm_amx}")
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$" AND
       CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  # ARM64 (src/cpu/arch/arm/): *_neon.cpp need no flag (every AArch64 CPU
  # has Advanced SIMD); *_dotprod.cpp get ARMv8.2 with the dot product
  # instructions. The x86 files compile to nothing (they test __x86_64__).
  set(_lm_arch ${CMAKE_CURRENT_LIST_DIR}/arm)
  file(GLOB _lm_files ${_lm_arch}/*_dotprod.cpp)
  set_source_files_properties(${_lm_files} TARGET_DIRECTORY lmggml_obj PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
  # *_i8mm.cpp: the int8 matrix multiply instructions (ARMv8.6's, optional
  # from ARMv8.2) and the F16 widening multiply-add FMLAL (FEAT_FHM, part of
  # every core with i8mm; dispatch.cpp checks both) on top of dotprod
  file(GLOB _lm_files ${_lm_arch}/*_i8mm.cpp)
  set_source_files_properties(${_lm_files} TARGET_DIRECTORY lmggml_obj PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod+i8mm+fp16fml")
else()
  # other architectures: the x86 and ARM files compile to nothing (they test
  # __x86_64__ / __aarch64__)
endif()
