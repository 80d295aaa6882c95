# cachewise as a CMake package, three ways: find_package(cachewise CONFIG) then link
# cachewise::model, cachewise::advisor, cachewise::frontend, cachewise::tuner (and the GPU components)
#  - from an install (`cmake --install build --prefix ~/.local`): relocatable, the prefix is
#    found from the config file's own location;
#  - from the build tree (CMAKE_PREFIX_PATH=build): the exported targets point at the sources'
#    headers and the built libraries, the profiles at profiles/, the advisor at build/bin/;
#  - from the Debian package (`cpack -G DEB` in the build tree): the install, under /usr.
include(CMakePackageConfigHelpers)
set(CACHEWISE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cachewise)

# Install tree: paths relative to the prefix the config file computes (PACKAGE_PREFIX_DIR).
install(EXPORT cachewise-targets NAMESPACE cachewise:: DESTINATION ${CACHEWISE_PACKAGE_DIR})
set(CACHEWISE_CONFIG_PROFILE_DIR "\${PACKAGE_PREFIX_DIR}/${CACHEWISE_INSTALL_PROFILE_DIR}")
set(CACHEWISE_CONFIG_ADVISOR "\${PACKAGE_PREFIX_DIR}/${CMAKE_INSTALL_BINDIR}/advisor")
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cachewiseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/install-package/cachewiseConfig.cmake
  INSTALL_DESTINATION ${CACHEWISE_PACKAGE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cachewiseConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install-package/cachewiseConfig.cmake ${PROJECT_BINARY_DIR}/cachewiseConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/CachewiseAutotune.cmake
  DESTINATION ${CACHEWISE_PACKAGE_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${CACHEWISE_INSTALL_PROFILE_DIR} FILES_MATCHING PATTERN "*.json")

# Build tree: the same targets exported in place, and a config file with absolute paths.
export(EXPORT cachewise-targets NAMESPACE cachewise:: FILE ${PROJECT_BINARY_DIR}/cachewise-targets.cmake)
set(CACHEWISE_CONFIG_PROFILE_DIR "${CACHEWISE_SOURCE_PROFILE_DIR}")
set(CACHEWISE_CONFIG_ADVISOR "${PROJECT_BINARY_DIR}/bin/advisor")
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cachewiseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cachewiseConfig.cmake
  INSTALL_DESTINATION ${PROJECT_BINARY_DIR} INSTALL_PREFIX ${PROJECT_BINARY_DIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/CachewiseAutotune.cmake ${PROJECT_BINARY_DIR}/CachewiseAutotune.cmake COPYONLY)

# Debian package: `cpack -G DEB` in the build tree writes cachewise_<version>_<arch>.deb.
# The dependencies are the Debian packages a consumer's find_package(cachewise) needs; NVIDIA's
# CUDA Toolkit (for the GPU components and NVRTC) is not a Debian package and is not listed.
set(CPACK_PACKAGE_NAME cachewise)
set(CPACK_PACKAGE_VENDOR cachewise)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "cachewise developers <cachewise@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, nlohmann-json3-dev, libboost-graph-dev")
if(CACHEWISE_WITH_MPI)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libopenmpi-dev") # advisor links Open MPI for tune --mpi
endif()
set(CPACK_GENERATOR DEB)
include(CPack)
