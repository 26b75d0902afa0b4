# `cmake --install` puts headers, libraries, tools and a package config under the prefix, so
# another project can do:
#   find_package(shardkit CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE shardkit::torch)
# (or shardkit::loader, ::core, ::tokenizer, ::shardify, which need no libtorch).
include(CMakePackageConfigHelpers)

set(_shardkit_components core tokenizer shardify loader torch)
set(_shardkit_installed)
foreach(component ${_shardkit_components})
  set(target shardkit_${component})
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${component})
    # The public headers are C++20 (e.g. defaulted operator==): consumers must compile as such
    # whatever their own default standard is.
    target_compile_features(${target} PUBLIC cxx_std_20)
    if(NOT TARGET shardkit::${component})
      add_library(shardkit::${component} ALIAS ${target})
    endif()
    list(APPEND _shardkit_installed ${target})
  endif()
endforeach()

# shardkit::torch is exported on its own, so the package config includes it only where libtorch's
# package is found (shardkitConfig.cmake.in): the other targets never need it.
foreach(target ${_shardkit_installed})
  set(export shardkitTargets)
  if(target STREQUAL shardkit_torch)
    set(export shardkitTorchTargets)
  endif()
  install(TARGETS ${target}
    EXPORT ${export}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shardkit)
endforeach()

# Every installed header compiles on its own against the installed targets. The two that load
# libduckdb and libcurl at run time declare their functions from those libraries' own headers,
# which a consumer need not have: they are the libraries' internals, and no installed header
# includes them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shardkit
  FILES_MATCHING PATTERN "*.h"
  PATTERN "duckdb_library.h" EXCLUDE
  PATTERN "curl_library.h" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/format/shard_format.h ${PROJECT_SOURCE_DIR}/format/SPEC.md
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shardkit/format)

set(SHARDKIT_CONFIG_HAS_TORCH OFF)
if(TARGET shardkit_torch)
  set(SHARDKIT_CONFIG_HAS_TORCH ON)
endif()
set(SHARDKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/shardkit)
install(EXPORT shardkitTargets NAMESPACE shardkit:: DESTINATION ${SHARDKIT_CMAKE_DIR})
if(SHARDKIT_CONFIG_HAS_TORCH)
  install(EXPORT shardkitTorchTargets NAMESPACE shardkit:: DESTINATION ${SHARDKIT_CMAKE_DIR})
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/shardkitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/shardkitConfig.cmake INSTALL_DESTINATION ${SHARDKIT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/shardkitConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/shardkitConfig.cmake ${PROJECT_BINARY_DIR}/shardkitConfigVersion.cmake
  DESTINATION ${SHARDKIT_CMAKE_DIR})

# The Python module is installed deeper than the libraries (lib/pythonX.Y/dist-packages/shardkit):
# its RUNPATH climbs from there to <prefix>/lib, where the bundled libduckdb.so is ($ORIGIN/../lib
# would name lib/pythonX.Y/dist-packages/lib). Relative, so it holds for any --prefix.
if(TARGET _shardkit AND SHARDKIT_DUCKDB_BUNDLED)
  set(_shardkit_module_dir "${SHARDKIT_PYTHON_INSTALL_DIR}/shardkit")
  if(NOT IS_ABSOLUTE "${_shardkit_module_dir}")
    set(_shardkit_module_dir "${CMAKE_INSTALL_PREFIX}/${_shardkit_module_dir}")
  endif()
  file(RELATIVE_PATH _shardkit_to_lib "${_shardkit_module_dir}"
    "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}")
  set_property(TARGET _shardkit APPEND PROPERTY INSTALL_RPATH "$ORIGIN/${_shardkit_to_lib}")
endif()
