# cmake --install: headers under include/sluice/<layer>/, libraries, and a
# package config so that find_package(sluice) and sluice::sluice work.
include(CMakePackageConfigHelpers)

set(SLUICE_LAYERS ops devices stream io pipeline)
foreach(layer IN LISTS SLUICE_LAYERS)
  install(DIRECTORY ${layer}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sluice/${layer}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.def" PATTERN "cpu/kernels" EXCLUDE)
endforeach()
list(TRANSFORM SLUICE_LAYERS PREPEND sluice_ OUTPUT_VARIABLE layer_targets)
install(TARGETS ${layer_targets} sluice ${SLUICE_INSTALL_EXTRA_TARGETS} EXPORT sluiceTargets
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
