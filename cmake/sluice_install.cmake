# cmake --install: the public headers under include/sluice/ (each layer names
# its own, cmake/sluice_layers.cmake), the libraries, a package config so
# that find_package(sluice) and sluice::sluice work, and sluice.pc for
# pkg-config.
include(CMakePackageConfigHelpers)

install(FILES sluice.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sluice)
list(TRANSFORM SLUICE_LAYERS PREPEND sluice_ OUTPUT_VARIABLE layer_targets)
install(TARGETS ${layer_targets} sluice EXPORT sluiceTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT sluiceTargets NAMESPACE sluice:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
configure_package_config_file(cmake/sluiceConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/sluiceConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sluiceConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sluiceConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/sluiceConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)

# sluice.pc names the prefix relative to its own folder, so that an installed
# tree moved elsewhere still finds itself.
file(RELATIVE_PATH SLUICE_PC_PREFIX_FROM_PCDIR /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" SLUICE_PC_PREFIX_FROM_PCDIR ${SLUICE_PC_PREFIX_FROM_PCDIR})
# Static libraries carry none of their dependencies, so those are Requires
# and Libs of sluice itself: `pkg-config --static` would also pull in every
# dependency's own static dependencies, which Debian does not all ship (libzmq's).
# Shared libraries carry them, so they become private.
set(pc_dependencies libzmq libsodium cpp-httplib fftw3 fftw3f sleef spdlog)
list(JOIN pc_dependencies " " pc_dependencies)
set(pc_libraries "-ldnnl ${OpenMP_CXX_FLAGS} -pthread")
if(SLUICE_WITH_CUDA)
  string(APPEND pc_libraries " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
if(BUILD_SHARED_LIBS)
  set(SLUICE_PC_REQUIRES tbb)
  set(SLUICE_PC_REQUIRES_PRIVATE ${pc_dependencies})
  set(SLUICE_PC_LIBS_PRIVATE ${pc_libraries})
else()
  set(SLUICE_PC_REQUIRES "tbb ${pc_dependencies}")
  set(SLUICE_PC_LIBS ${pc_libraries})
endif()
# The layers' libraries, top layer first, so that a static link resolves
# each against those below it.
set(layer_libs ${SLUICE_LAYERS})
list(REVERSE layer_libs)
list(TRANSFORM layer_libs PREPEND -lsluice_)
list(JOIN layer_libs " " SLUICE_PC_LAYER_LIBS)
configure_file(cmake/sluice.pc.in ${CMAKE_CURRENT_BINARY_DIR}/sluice.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sluice.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
