# Read by cpack (CPACK_PROJECT_CONFIG_FILE). The Debian packages install
# under /usr what `cmake --install` installs, with the destinations chosen at
# configure time for CMAKE_INSTALL_PREFIX: the multiarch libdir and Python's
# dist-packages are only right when that prefix was /usr.
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT CPACK_GRAPHRT_INSTALL_PREFIX STREQUAL "/usr")
  message(FATAL_ERROR "graphrt: Debian packages need a build configured with -DCMAKE_INSTALL_PREFIX=/usr "
    "(this one: ${CPACK_GRAPHRT_INSTALL_PREFIX}); tools/package.sh makes one.")
endif()
