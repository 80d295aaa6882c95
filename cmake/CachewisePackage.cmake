# Installs the exported targets as a CMake package: find_package(cachewise CONFIG) then
# link cachewise::model, cachewise::advisor, cachewise::frontend, cachewise::tuner (and the GPU components).
include(CMakePackageConfigHelpers)
install(EXPORT cachewise-targets NAMESPACE cachewise:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cachewise)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cachewiseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cachewiseConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cachewise)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cachewiseConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cachewiseConfig.cmake ${PROJECT_BINARY_DIR}/cachewiseConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/CachewiseAutotune.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cachewise)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${CACHEWISE_INSTALL_PROFILE_DIR} FILES_MATCHING PATTERN "*.json")
