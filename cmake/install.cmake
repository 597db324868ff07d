# Install rules: libraries, plugins, headers, the program, a versioned CMake
# package (lmggml::lmggml, lmggml::lmggml_static) and lmggml.pc.
#   <prefix>/lib/liblmggml.so, liblmggml.a
#   <prefix>/lib/lmggml/liblmggml-<backend>.so     plugins, found from the library
#   <prefix>/include/lmggml/ggml.h ...              ggml's header names
#   <prefix>/lib/cmake/lmggml/lmggml-config.cmake   find_package(lmggml)
#   <prefix>/lib/pkgconfig/lmggml.pc                pkg-config lmggml
include(CMakePackageConfigHelpers)

set(LMGGML_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lmggml)

install(TARGETS lmggml lmggml_static EXPORT lmggml-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

file(GLOB LMGGML_PUBLIC_HEADERS ${PROJECT_SOURCE_DIR}/include/*.h)
install(FILES ${LMGGML_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lmggml)

# every loadable backend built from backends/ (the test plugins excepted)
get_property(LMGGML_PLUGIN_TARGETS GLOBAL PROPERTY LMGGML_PLUGIN_TARGETS)
if(LMGGML_PLUGIN_TARGETS)
  install(TARGETS ${LMGGML_PLUGIN_TARGETS}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/${LMGGML_PLUGIN_SUBDIR})
endif()

if(TARGET lmggml-cli)
  set_target_properties(lmggml-cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS lmggml-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT lmggml-targets NAMESPACE lmggml:: DESTINATION ${LMGGML_INSTALL_CMAKEDIR}
  FILE lmggml-targets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lmggml-config.cmake.in
  ${PROJECT_BINARY_DIR}/lmggml-config.cmake INSTALL_DESTINATION ${LMGGML_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lmggml-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lmggml-config.cmake ${PROJECT_BINARY_DIR}/lmggml-config-version.cmake
  DESTINATION ${LMGGML_INSTALL_CMAKEDIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/lmggml.pc.in ${PROJECT_BINARY_DIR}/lmggml.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/lmggml.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
