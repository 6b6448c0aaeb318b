# The relocatable install: a tree to copy to another Linux x86-64 machine
# that has PyTorch (LibTorch) but none of the -dev packages t2t builds with.
#
#   cmake --install build --prefix DIR --strip                    # the tools
#   cmake --install build --prefix DIR --strip --component tests  # + tests, benchmarks
#
#   DIR/bin/            launchers (sh): find LibTorch, then run the binary
#   DIR/libexec/t2t/    the binaries, RUNPATH $ORIGIN/../../lib
#   DIR/lib/            libt2t.so, its modules, and the Debian libraries
#                       t2t links (SentencePiece, yaml-cpp, spdlog, fmt, curl,
#                       tcmalloc, ... and theirs), RUNPATH $ORIGIN
#   DIR/share/t2t/      the bundled sample (for translate_enzh_sample), configs
#   DIR/tests/          t2t_tests' launcher (component tests)
#
# Not copied: LibTorch (the launcher finds it: T2T_TORCH_LIB, else the torch
# of python3 or $T2T_TORCH_PYTHON), glibc, libstdc++ and libgcc_s (every Linux has them), and
# libarchive with what it links (libxml2, ICU: 35 MB, over half the tree;
# only unpacking downloads needs it, through libt2t_archive.so, and that
# says what to install when it is missing).

find_program(T2T_PATCHELF patchelf)
if(NOT T2T_PATCHELF)
  message(WARNING "t2t: patchelf not found: 'cmake --install' will fail. ${T2T_APT_HINT} patchelf")
  set(T2T_PATCHELF patchelf)
endif()

# The LibTorch version the launchers insist on.
if(EXISTS "${TORCH_INSTALL_PREFIX}/version.py")
  file(STRINGS "${TORCH_INSTALL_PREFIX}/version.py" _t2t_vline REGEX "^__version__")
  string(REGEX REPLACE "^__version__ *= *['\"]([^'\"]*)['\"].*" "\\1" T2T_TORCH_VERSION "${_t2t_vline}")
elseif(EXISTS "${TORCH_INSTALL_PREFIX}/build-version")
  file(STRINGS "${TORCH_INSTALL_PREFIX}/build-version" T2T_TORCH_VERSION LIMIT_COUNT 1)
else()
  set(T2T_TORCH_VERSION "${Torch_VERSION}")
endif()
message(STATUS "t2t: installed launchers require LibTorch ${T2T_TORCH_VERSION}")

# Only the runtime component installs without being asked for by name.
function(t2t_install_exclude component out)
  if(component STREQUAL "runtime")
    set(${out} "" PARENT_SCOPE)
  else()
    set(${out} EXCLUDE_FROM_ALL PARENT_SCOPE)
  endif()
endfunction()

# t2t_install_binaries(COMPONENT <c> LAUNCHER_DIR <dir> TARGETS <t>... [ENV <line>])
# Installs the executables into libexec/t2t and a launcher for each into
# LAUNCHER_DIR; ENV is a shell line the launcher runs before exec.
function(t2t_install_binaries)
  cmake_parse_arguments(ARG "" "COMPONENT;LAUNCHER_DIR;ENV" "TARGETS" ${ARGN})
  t2t_install_exclude(${ARG_COMPONENT} _exclude)
  foreach(_target IN LISTS ARG_TARGETS)
    set_target_properties(${_target} PROPERTIES INSTALL_RPATH "$ORIGIN/../../lib")
    install(TARGETS ${_target} RUNTIME DESTINATION libexec/t2t COMPONENT ${ARG_COMPONENT} ${_exclude})
    set(T2T_LAUNCHED ${_target})
    set(T2T_LAUNCHER_ENV "${ARG_ENV}")
    configure_file("${PROJECT_SOURCE_DIR}/cmake/t2t_launcher.sh.in"
                   "${PROJECT_BINARY_DIR}/launchers/${_target}" @ONLY)
    install(PROGRAMS "${PROJECT_BINARY_DIR}/launchers/${_target}" DESTINATION ${ARG_LAUNCHER_DIR}
            COMPONENT ${ARG_COMPONENT} ${_exclude})
  endforeach()
endfunction()

# t2t_install_runtime(COMPONENT <c> FILES <path relative to the prefix>...)
# Copies the libraries those installed files need (T2TInstallRuntime.cmake).
function(t2t_install_runtime)
  cmake_parse_arguments(ARG "" "COMPONENT" "FILES" ${ARGN})
  t2t_install_exclude(${ARG_COMPONENT} _exclude)
  install(CODE "
    set(T2T_INSTALL_FILES \"${ARG_FILES}\")
    set(T2T_PATCHELF \"${T2T_PATCHELF}\")
    include(\"${PROJECT_SOURCE_DIR}/cmake/T2TInstallRuntime.cmake\")"
    COMPONENT ${ARG_COMPONENT} ${_exclude})
endfunction()

set(T2T_TOOLS t2t-datagen t2t-trainer t2t-decoder t2t-bleu t2t-avg-all t2t-translate-all t2t-serve t2t-import t2t-shortlist)
set(T2T_MODULES t2t_archive)
if(T2T_TORCH_CUDA)
  list(APPEND T2T_MODULES t2t_cuda)
endif()

set_target_properties(t2t ${T2T_MODULES} PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS t2t ${T2T_MODULES} LIBRARY DESTINATION lib COMPONENT runtime)
t2t_install_binaries(COMPONENT runtime LAUNCHER_DIR bin TARGETS ${T2T_TOOLS})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/data/sample/" DESTINATION share/t2t/sample
        COMPONENT runtime)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/configs/" DESTINATION share/t2t/configs
        COMPONENT runtime)
# libt2t_archive.so is left out of the scan: its libraries are not bundled.
set(_t2t_runtime_files lib/libt2t.so)
foreach(_tool IN LISTS T2T_TOOLS)
  list(APPEND _t2t_runtime_files libexec/t2t/${_tool})
endforeach()
if(T2T_TORCH_CUDA)
  list(APPEND _t2t_runtime_files lib/libt2t_cuda.so)
endif()
t2t_install_runtime(COMPONENT runtime FILES ${_t2t_runtime_files})

# The tests and benchmarks, to run on the machine the tree is copied to:
#   T2T_TEST_SOURCE_DIR=<a t2t checkout> DIR/tests/t2t_tests "[cuda]"
if(T2T_BUILD_TESTS AND T2T_BUILD_BENCH)
  set(_t2t_bench t2t-bench-train t2t-bench-decode t2t-bench-reader t2t-bench-serve)
  t2t_install_binaries(COMPONENT tests LAUNCHER_DIR bin TARGETS ${_t2t_bench})
  t2t_install_binaries(COMPONENT tests LAUNCHER_DIR tests TARGETS t2t_tests
    ENV "export T2T_TEST_BIN_DIR=\"\${T2T_TEST_BIN_DIR:-\$prefix/bin}\"")
  set(_t2t_test_files libexec/t2t/t2t_tests)
  foreach(_bench IN LISTS _t2t_bench)
    list(APPEND _t2t_test_files libexec/t2t/${_bench})
  endforeach()
  t2t_install_runtime(COMPONENT tests FILES ${_t2t_test_files})
endif()
