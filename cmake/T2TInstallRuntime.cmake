# Run at install time (cmake --install), once per component: copies into
# <prefix>/lib every shared library the component's binaries need that is
# neither t2t's own, nor LibTorch's (found at run time, see the launcher),
# nor one every Linux has (glibc, libstdc++, libgcc_s), and gives each copy
# the RUNPATH $ORIGIN so that it finds its own dependencies beside it.
#
# Set by the caller: T2T_INSTALL_FILES (installed binaries, relative to the
# prefix), T2T_PATCHELF.
set(_prefix "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(_files "")
foreach(_f IN LISTS T2T_INSTALL_FILES)
  list(APPEND _files "${_prefix}/${_f}")
endforeach()

file(GET_RUNTIME_DEPENDENCIES
  RESOLVED_DEPENDENCIES_VAR _resolved
  UNRESOLVED_DEPENDENCIES_VAR _unresolved
  CONFLICTING_DEPENDENCIES_PREFIX _conflict
  EXECUTABLES ${_files}
  DIRECTORIES "${_prefix}/lib"
  # What every Linux has: glibc's libraries, the C++ and GCC run-times.
  PRE_EXCLUDE_REGEXES
    "^ld-linux" "^linux-vdso"
    "^lib(c|m|dl|pthread|rt|util|resolv|anl|nsl|mvec|BrokenLocale|thread_db)\\.so"
    "^libstdc\\+\\+\\.so" "^libgcc_s\\.so"
  POST_EXCLUDE_REGEXES "^${_prefix}/")

# LibTorch and the CUDA libraries under it are found at run time; anything
# else unresolved would fail on the target machine too.
set(_missing "")
foreach(_lib IN LISTS _unresolved)
  if(NOT _lib MATCHES "^lib(torch|c10|shm|gomp-|cuda|cudart|cublas|cudnn|cufft|curand|cusparse|cusolver|nccl|nvrtc|nvToolsExt|nvJitLink)")
    list(APPEND _missing "${_lib}")
  endif()
endforeach()
if(_missing)
  message(FATAL_ERROR "t2t install: cannot find ${_missing}, which the installed binaries need; "
                      "is the build complete?")
endif()

foreach(_path IN LISTS _resolved)
  get_filename_component(_name "${_path}" NAME)
  set(_dest "${_prefix}/lib/${_name}")
  if(EXISTS "${_dest}")
    continue()
  endif()
  message(STATUS "Bundling: ${_dest} (from ${_path})")
  # COPY_FILE writes the content behind a symbolic link under the name the
  # dynamic linker looks for (the soname).
  file(COPY_FILE "${_path}" "${_dest}")
  execute_process(COMMAND "${T2T_PATCHELF}" --set-rpath "$ORIGIN" "${_dest}"
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "t2t install: patchelf could not set the RUNPATH of ${_dest}: ${_err}")
  endif()
endforeach()
