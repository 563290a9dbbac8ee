# graphrt_add_plugin(<target> SOURCES ... [LIBS ...] [OUTPUT_DIRECTORY dir])
# Builds a plugin module against the header-only SDK. Used in-tree and,
# installed with the package, by out-of-tree plugins (find_package(graphrt)).
function(graphrt_add_plugin target)
  cmake_parse_arguments(P "" "OUTPUT_DIRECTORY;INSTALL_DESTINATION" "SOURCES;LIBS" ${ARGN})
  add_library(${target} MODULE ${P_SOURCES})
  if(TARGET graphrt::sdk)
    target_link_libraries(${target} PRIVATE graphrt::sdk)
  else()
    target_link_libraries(${target} PRIVATE graphrt_sdk)
  endif()
  target_link_libraries(${target} PRIVATE ${P_LIBS})
  # Hidden symbols: only the entry point is exported, so plugins built against
  # different SDK versions never bind to each other's inline code.
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    PREFIX "lib")
  if(P_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIRECTORY})
  endif()
  if(P_INSTALL_DESTINATION)
    install(TARGETS ${target} LIBRARY DESTINATION ${P_INSTALL_DESTINATION})
  endif()
endfunction()

# A standard plugin of this repository: built into and installed to the
# default plugin directory.
function(graphrt_add_standard_plugin target)
  graphrt_add_plugin(${target} ${ARGN}
    OUTPUT_DIRECTORY ${GRAPHRT_PLUGIN_BUILD_DIR}
    INSTALL_DESTINATION ${GRAPHRT_PLUGIN_SUBDIR})
endfunction()
