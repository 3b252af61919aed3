# libanvil: every layer below the command line in one library, shared (exporting only the
# public anvil_* API of include/anvil/) and static (everything, for static linking), and the
# install tree: libraries, public headers, the `anvil` program, the data it reads (GPU specs,
# kernel variant table, measured profiles) under share/anvil, anvil.pc for pkg-config and a
# CMake package for find_package(anvil).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(AV_LIB_LAYERS anvil_core anvil_proofs anvil_profile_format anvil_costmodels anvil_sim
                  anvil_schedulers anvil_selectors anvil_executor anvil_profiler
                  anvil_pipeline anvil_api)
set(AV_LIB_DEPS PkgConfig::GSL PkgConfig::JANSSON m ${CMAKE_DL_LIBS} Threads::Threads)
set(AV_PC_LIBS_PRIVATE "-lm -lpthread")
if(AV_MPI)
  list(APPEND AV_LIB_DEPS MPI::MPI_C)
endif()
if(AV_HAVE_CUDA AND TARGET anvil_kernels)
  find_package(CUDAToolkit REQUIRED)
  list(APPEND AV_LIB_LAYERS anvil_kernels)
  list(APPEND AV_LIB_DEPS CUDA::cudart)
  string(APPEND AV_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()
set(AV_LIB_OBJECTS "")
foreach(layer ${AV_LIB_LAYERS})
  list(APPEND AV_LIB_OBJECTS $<TARGET_OBJECTS:${layer}>)
endforeach()

add_library(anvil_shared SHARED ${AV_LIB_OBJECTS})
add_library(anvil_static STATIC ${AV_LIB_OBJECTS})
foreach(lib anvil_shared anvil_static)
  set_target_properties(${lib} PROPERTIES OUTPUT_NAME anvil LINKER_LANGUAGE C)
  target_include_directories(${lib} INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
set_target_properties(anvil_shared PROPERTIES VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR} EXPORT_NAME anvil)
set_target_properties(anvil_static PROPERTIES EXPORT_NAME anvil_static)
target_link_libraries(anvil_shared PRIVATE ${AV_LIB_DEPS})
target_link_libraries(anvil_static INTERFACE ${AV_LIB_DEPS})
# --no-undefined: a layer missing from AV_LIB_LAYERS fails the link, not a user's program
# (not in sanitizer builds: clang leaves the sanitizer runtime to the executable).
target_link_options(anvil_shared PRIVATE
                    "LINKER:--version-script=${CMAKE_SOURCE_DIR}/cmake/libanvil.map"
                    $<$<NOT:$<BOOL:${AV_SANITIZE}>>:LINKER:--no-undefined>)
set_property(TARGET anvil_shared APPEND PROPERTY LINK_DEPENDS
             ${CMAKE_SOURCE_DIR}/cmake/libanvil.map)

if(SKBUILD)
  return()  # the Python package installs its own module and data (python/CMakeLists.txt)
endif()

install(TARGETS anvil_shared anvil_static EXPORT anvilTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS anvil RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/anvil DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Data: what av_data_dir() finds at <prefix>/share/anvil (core/data_dir.c).
set(AV_SHARE ${CMAKE_INSTALL_DATADIR}/anvil)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/gpus ${CMAKE_SOURCE_DIR}/profiles DESTINATION ${AV_SHARE})
install(FILES ${CMAKE_SOURCE_DIR}/kernels/variants.json DESTINATION ${AV_SHARE}/kernels)
# A program linked statically to libanvil.a has no share/anvil beside it: the installed
# archive's fallback data directory is made the install prefix's, at install time, so that
# `cmake --install --prefix P` is honoured (core/data_dir_default.c).
install(CODE "set(AV_INSTALL_C_COMPILER \"${CMAKE_C_COMPILER}\")
set(AV_INSTALL_AR \"${CMAKE_AR}\")
set(AV_INSTALL_RANLIB \"${CMAKE_RANLIB}\")
set(AV_INSTALL_SOURCE \"${CMAKE_SOURCE_DIR}\")
set(AV_INSTALL_WORK \"${CMAKE_BINARY_DIR}/install-data-dir\")
set(AV_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
set(AV_INSTALL_DATADIR \"${AV_SHARE}\")")
install(SCRIPT ${CMAKE_SOURCE_DIR}/cmake/install_data_dir.cmake)

# The prefix is found from the .pc file's own place, so `cmake --install --prefix P` works;
# the libraries' directory is the programs' run path too, so they start without
# LD_LIBRARY_PATH.
file(RELATIVE_PATH AV_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_SOURCE_DIR}/cmake/anvil.pc.in ${CMAKE_BINARY_DIR}/anvil.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/anvil.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(AV_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/anvil)
install(EXPORT anvilTargets NAMESPACE anvil:: DESTINATION ${AV_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/anvilConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/anvilConfig.cmake
                              INSTALL_DESTINATION ${AV_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/anvilConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/anvilConfig.cmake ${CMAKE_BINARY_DIR}/anvilConfigVersion.cmake
        DESTINATION ${AV_CMAKE_DIR})
