# Run by `cmake --install` (cmake/library.cmake sets the AV_INSTALL_* variables): compiles
# core/data_dir_default.c with the data directory of the prefix being installed to and
# replaces the build's copy of that object in the installed libanvil.a, so a program linked
# statically to it reads <prefix>/share/anvil, not the source tree anvil was built from.
set(lib "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${AV_INSTALL_LIBDIR}/libanvil.a")
if(NOT EXISTS "${lib}")
  message(FATAL_ERROR "anvil: ${lib} was not installed")
endif()
set(dir "${CMAKE_INSTALL_PREFIX}/${AV_INSTALL_DATADIR}")
set(obj "${AV_INSTALL_WORK}/data_dir_default.c.o")
file(MAKE_DIRECTORY "${AV_INSTALL_WORK}")
execute_process(COMMAND "${AV_INSTALL_C_COMPILER}" -O2 -fPIC "-I${AV_INSTALL_SOURCE}"
                        "-DAV_DATA_DIR=\"${dir}\"" -c "${AV_INSTALL_SOURCE}/core/data_dir_default.c"
                        -o "${obj}"
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "anvil: cannot compile the installed data directory into libanvil.a")
endif()
# `ar r` replaces the member of the same name (CMake names it data_dir_default.c.o).
execute_process(COMMAND "${AV_INSTALL_AR}" r "${lib}" "${obj}" RESULT_VARIABLE rc)
if(NOT rc)
  execute_process(COMMAND "${AV_INSTALL_RANLIB}" "${lib}" RESULT_VARIABLE rc)
endif()
if(rc)
  message(FATAL_ERROR "anvil: cannot update ${lib}")
endif()
message(STATUS "anvil: libanvil.a reads its data from ${dir}")
