# graphrt_add_plugin(<target> SOURCES ... [LIBS ...] [OUTPUT_DIRECTORY dir]
#                    [INSTALL_DESTINATION dir [COMPONENT name]])
# Builds a plugin module against the header-only SDK. Used in-tree and,
# installed with the package, by out-of-tree plugins (find_package(graphrt)).
# COMPONENT: the install component (the package it goes to, with CPack).
function(graphrt_add_plugin target)
  cmake_parse_arguments(P "" "OUTPUT_DIRECTORY;INSTALL_DESTINATION;COMPONENT" "SOURCES;LIBS" ${ARGN})
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
    if(P_COMPONENT)
      install(TARGETS ${target} LIBRARY DESTINATION ${P_INSTALL_DESTINATION} COMPONENT ${P_COMPONENT})
    else()
      install(TARGETS ${target} LIBRARY DESTINATION ${P_INSTALL_DESTINATION})
    endif()
  endif()
endfunction()

# A standard plugin of this repository: built into and installed to the
# default plugin directory.
function(graphrt_add_standard_plugin target)
  graphrt_add_plugin(${target} ${ARGN}
    OUTPUT_DIRECTORY ${GRAPHRT_PLUGIN_BUILD_DIR}
    INSTALL_DESTINATION ${GRAPHRT_PLUGIN_SUBDIR}
    COMPONENT runtime)
endfunction()

# graphrt_add_plugin_isa_build(<target> <level> [INSTALL_DESTINATION dir [COMPONENT name]])
# A build of plugin <target> for x86-64 level <level> (x86-64-v4, say): the
# same sources, libraries and options compiled with -march=<level>, under
# the same file name in the subdirectory <level> of the plugin's directory,
# where the loader picks it on CPUs that run that level (so one package runs
# on older CPUs and uses AVX-512 on newer ones). Call it once <target>'s
# properties are final; the target is <target>_<level>.
function(graphrt_add_plugin_isa_build target level)
  cmake_parse_arguments(P "" "INSTALL_DESTINATION;COMPONENT" "" ${ARGN})
  set(build ${target}_${level})
  get_target_property(sources ${target} SOURCES)
  add_library(${build} MODULE ${sources})
  foreach(prop LINK_LIBRARIES LINK_OPTIONS INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS
               CXX_VISIBILITY_PRESET C_VISIBILITY_PRESET VISIBILITY_INLINES_HIDDEN PREFIX)
    get_target_property(value ${target} ${prop})
    if(prop STREQUAL "COMPILE_OPTIONS" AND value)
      # The plugin's own -march goes (CMake would drop a repeated one).
      list(FILTER value EXCLUDE REGEX "^-march=")
    endif()
    if(value)
      set_target_properties(${build} PROPERTIES ${prop} "${value}")
    endif()
  endforeach()
  target_compile_options(${build} PRIVATE -march=${level})
  get_target_property(name ${target} OUTPUT_NAME)
  if(NOT name)
    set(name ${target})
  endif()
  get_target_property(dir ${target} LIBRARY_OUTPUT_DIRECTORY)
  if(NOT dir)
    set(dir ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set_target_properties(${build} PROPERTIES OUTPUT_NAME ${name} LIBRARY_OUTPUT_DIRECTORY ${dir}/${level})
  # Building the plugin builds this too: a stale build beside a fresh file
  # would be what a newer CPU loads.
  add_dependencies(${target} ${build})
  if(P_INSTALL_DESTINATION)
    if(P_COMPONENT)
      install(TARGETS ${build} LIBRARY DESTINATION ${P_INSTALL_DESTINATION}/${level} COMPONENT ${P_COMPONENT})
    else()
      install(TARGETS ${build} LIBRARY DESTINATION ${P_INSTALL_DESTINATION}/${level})
    endif()
  endif()
endfunction()
