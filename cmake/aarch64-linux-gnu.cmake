# Cross build for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu.
# Test programs run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR), so
# gtest_discover_tests and ctest work in the cross build directory; build
# GoogleTest for the target with -DLMGGML_GTEST_SOURCE=/usr/src/googletest
# (Debian's libgtest-dev holds x86 libraries only). scripts/test-arm64 uses it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(LMGGML_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER   ${LMGGML_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${LMGGML_CROSS_TRIPLE}-g++)

# GCC 12's libstdc++ string code trips a false -Wrestrict at -O2 on this
# target (GCC PR 105329): keep -Wall -Wextra builds quiet.
set(CMAKE_CXX_FLAGS_INIT "-Wno-restrict")

# Look for libraries and headers in the target's tree only, programs on the host.
set(CMAKE_FIND_ROOT_PATH /usr/${LMGGML_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# qemu's CPU model: QEMU_CPU in the environment overrides it per run
# (scripts/test-arm64 runs the suites once per feature level).
find_program(LMGGML_QEMU_AARCH64 qemu-aarch64)
if(LMGGML_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${LMGGML_QEMU_AARCH64} -L /usr/${LMGGML_CROSS_TRIPLE})
endif()
