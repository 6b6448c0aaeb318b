# Finds every dependency of t2t, each with a message that says how to get it.
# Sets T2T_PUBLIC_LIBS and T2T_PRIVATE_LIBS for libt2t.

set(T2T_APT_HINT "tools/test.sh installs it; by hand: sudo apt-get install")

macro(t2t_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "t2t needs ${what}, which was not found. ${T2T_APT_HINT} ${package}")
  endif()
endmacro()

# ---- LibTorch ---------------------------------------------------------------
# Order: an explicit Torch_DIR or CMAKE_PREFIX_PATH wins; otherwise ask the
# Python interpreter in T2T_PYTHON (tools/setup.sh passes the project's
# virtualenv) or the python3 on PATH where torch is installed.
if(NOT Torch_DIR)
  # pip install ./python (scikit-build-core) names the Python that runs it.
  if(NOT T2T_PYTHON AND SKBUILD AND Python_EXECUTABLE)
    set(T2T_PYTHON "${Python_EXECUTABLE}" CACHE FILEPATH "The Python whose torch t2t builds against")
  endif()
  if(NOT T2T_PYTHON)
    find_program(T2T_PYTHON NAMES python3 python)
  endif()
  if(T2T_PYTHON)
    execute_process(
      COMMAND "${T2T_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE T2T_TORCH_PREFIX OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE T2T_TORCH_QUERY ERROR_QUIET)
    if(T2T_TORCH_QUERY EQUAL 0 AND T2T_TORCH_PREFIX)
      list(APPEND CMAKE_PREFIX_PATH "${T2T_TORCH_PREFIX}")
      message(STATUS "t2t: LibTorch from ${T2T_PYTHON} (${T2T_TORCH_PREFIX})")
    endif()
  endif()
endif()

# A CUDA-enabled LibTorch looks for the CUDA toolkit; it must configure and
# link on a machine that has the toolkit but no GPU. Pick an architecture so
# that its CUDA checks do not try to query a device.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch QUIET)
if(NOT Torch_FOUND AND SKBUILD)
  message(FATAL_ERROR
    "pip install ./python builds against the torch of the Python that runs pip, and found none "
    "(${T2T_PYTHON}): run it as pip install --no-build-isolation ./python, in the environment "
    "whose torch t2t is for (tools/setup.sh makes one).")
endif()
if(NOT Torch_FOUND)
  message(FATAL_ERROR
    "t2t needs LibTorch >= 2.1, which was not found.\n"
    "  - Easiest: run tools/test.sh, which installs the PyPI torch wheel into a virtualenv.\n"
    "  - Or point CMake at any LibTorch: -DTorch_DIR=/path/to/libtorch/share/cmake/Torch\n"
    "    or -DCMAKE_PREFIX_PATH=/path/to/libtorch, or -DT2T_PYTHON=/path/to/python-with-torch.")
endif()
if(DEFINED Torch_VERSION AND Torch_VERSION VERSION_LESS 2.1)
  message(FATAL_ERROR "t2t needs LibTorch >= 2.1; found ${Torch_VERSION} in ${Torch_DIR}.")
endif()
message(STATUS "t2t: LibTorch ${Torch_VERSION} (${Torch_DIR}), CUDA: ${CAFFE2_USE_CUDA}")
# TorchConfig adds its flags through TORCH_CXX_FLAGS (the ABI define among them).
set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${TORCH_CXX_FLAGS}")

# t2t's own code is C++17; recent LibTorch headers refuse anything below
# C++20, so compile as C++20 when the LibTorch found says so.
find_file(T2T_ATEN_HEADER ATen/ATen.h PATHS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(T2T_ATEN_HEADER)
  file(STRINGS "${T2T_ATEN_HEADER}" T2T_ATEN_NEEDS_CXX20 REGEX "C\\+\\+20 or later")
  if(T2T_ATEN_NEEDS_CXX20)
    message(STATUS "t2t: this LibTorch requires C++20; compiling as C++20")
    set(CMAKE_CXX_STANDARD 20)
  endif()
endif()

# LibTorch ships its own copies of fmt and protobuf headers in its include
# directory. Searched first (as -isystem puts them), they would shadow the
# Debian fmt that spdlog was built with and the protobuf that libprotobuf
# matches. Search LibTorch's directories after the system ones instead: its
# own headers (torch/, ATen/, c10/) exist nowhere else, so they still resolve.
add_library(t2t_torch INTERFACE)
get_filename_component(_t2t_torch_root "${TORCH_INSTALL_PREFIX}" REALPATH)
set(_t2t_seen "")
# Walk TORCH_LIBRARIES and what they link; the libraries behind generator
# expressions ($<LINK_ONLY:...>) are named explicitly.
set(_t2t_queue ${TORCH_LIBRARIES} torch_cpu torch_cuda torch_hip c10 c10_cuda c10_hip)
while(_t2t_queue)
  list(POP_FRONT _t2t_queue _t2t_lib)
  if(NOT TARGET ${_t2t_lib} OR _t2t_lib IN_LIST _t2t_seen)
    continue()
  endif()
  list(APPEND _t2t_seen ${_t2t_lib})
  get_target_property(_t2t_deps ${_t2t_lib} INTERFACE_LINK_LIBRARIES)
  if(_t2t_deps)
    list(APPEND _t2t_queue ${_t2t_deps})
  endif()
  foreach(_t2t_prop INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES)
    get_target_property(_t2t_incs ${_t2t_lib} ${_t2t_prop})
    if(_t2t_incs)
      set(_t2t_keep "")
      foreach(_t2t_inc IN LISTS _t2t_incs)
        get_filename_component(_t2t_real "${_t2t_inc}" REALPATH)
        string(FIND "${_t2t_real}" "${_t2t_torch_root}" _t2t_pos)
        if(_t2t_pos EQUAL 0)
          target_compile_options(t2t_torch INTERFACE "-idirafter${_t2t_real}")
        else()
          list(APPEND _t2t_keep "${_t2t_inc}")
        endif()
      endforeach()
      set_target_properties(${_t2t_lib} PROPERTIES ${_t2t_prop} "${_t2t_keep}")
    endif()
  endforeach()
endwhile()
# With a CUDA LibTorch, t2t links its CPU half only (torch_cpu, c10): the
# CUDA half (libtorch_cuda and cuBLAS, cuDNN, NCCL, ... under it, ~250 MiB
# resident once loaded) is loaded by t2t/core/cuda_loader.cc when a run asks
# for a GPU, together with t2t's own CUDA code in libt2t_cuda.so (below).
# The headers are compiled as the whole LibTorch's, CUDA definitions included.
if(TARGET torch_cuda_library AND TARGET torch_cpu_library)
  set(T2T_TORCH_CUDA ON)
  target_link_libraries(t2t_torch INTERFACE torch_cpu_library)
  target_compile_definitions(t2t_torch INTERFACE
    $<TARGET_PROPERTY:torch_cuda,INTERFACE_COMPILE_DEFINITIONS>)
else()
  set(T2T_TORCH_CUDA OFF)
  target_link_libraries(t2t_torch INTERFACE ${TORCH_LIBRARIES})
endif()

# With an OpenMP LibTorch, at::parallel_for is an inline `#pragma omp
# parallel` compiled into the caller: without OpenMP flags t2t's own kernels
# (dropout, the loss, decoding attention) would run on one thread whatever
# --threads says. Every user of t2t_torch gets the flags, so that no copy of
# the inline function is the serial one.
find_file(T2T_ATEN_CONFIG ATen/Config.h PATHS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(T2T_ATEN_CONFIG)
  file(STRINGS "${T2T_ATEN_CONFIG}" _t2t_openmp REGEX "define AT_PARALLEL_OPENMP 1")
  if(_t2t_openmp)
    find_package(OpenMP QUIET)
    t2t_require(OpenMP_CXX_FOUND "OpenMP (for this LibTorch's at::parallel_for)"
                "libgomp1 (GCC's OpenMP)")
    target_link_libraries(t2t_torch INTERFACE OpenMP::OpenMP_CXX)
    message(STATUS "t2t: LibTorch parallelizes with OpenMP; t2t's kernels too")
  endif()
endif()

# The PyPI wheel's CUDA libraries (cuBLAS, NCCL, ...) sit in site-packages/
# nvidia/*/lib, found at run time through libtorch_cuda's own RUNPATH. The
# linker must see the same ones, not older copies in the CUDA toolkit.
file(GLOB _t2t_wheel_cuda_dirs LIST_DIRECTORIES true "${_t2t_torch_root}/../nvidia/*/lib")
foreach(_t2t_dir IN LISTS _t2t_wheel_cuda_dirs)
  get_filename_component(_t2t_dir "${_t2t_dir}" REALPATH)
  target_link_options(t2t_torch INTERFACE "LINKER:-rpath-link,${_t2t_dir}")
endforeach()

# ---- the rest: Debian -dev packages -----------------------------------------
find_package(PkgConfig REQUIRED)

find_package(yaml-cpp QUIET)
t2t_require(yaml-cpp_FOUND "yaml-cpp" "libyaml-cpp-dev")
if(TARGET yaml-cpp::yaml-cpp)
  set(T2T_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(T2T_YAML_TARGET yaml-cpp)
endif()

find_package(spdlog QUIET)
t2t_require(spdlog_FOUND "spdlog" "libspdlog-dev")

find_package(cxxopts QUIET)
t2t_require(cxxopts_FOUND "cxxopts" "libcxxopts-dev")

pkg_check_modules(SENTENCEPIECE QUIET IMPORTED_TARGET sentencepiece)
t2t_require(SENTENCEPIECE_FOUND "SentencePiece" "libsentencepiece-dev")

# t2t reads and writes protocol buffers (tf.train.Example, TensorBoard
# events) with its own small wire-format code and links no protobuf run-time:
# Debian's SentencePiece carries a private copy of one, and two copies in one
# process clash. protoc is still needed: the tests check our bytes against
# protobuf's own Python implementation using t2t/proto/*.proto.
find_program(T2T_PROTOC protoc)
if(NOT T2T_PROTOC)
  message(FATAL_ERROR "t2t needs protoc (for its tests). ${T2T_APT_HINT} protobuf-compiler")
endif()

# t2t-serve's HTTP server and JSON: cpp-httplib (Debian builds it as a
# shared library) and nlohmann's JSON. Only t2t/serve and its binaries see
# them; libt2t does not.
pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
t2t_require(HTTPLIB_FOUND "cpp-httplib" "libcpp-httplib-dev")
find_package(nlohmann_json 3.9 QUIET)
t2t_require(nlohmann_json_FOUND "nlohmann's JSON" "nlohmann-json3-dev")

find_package(CURL QUIET)
t2t_require(CURL_FOUND "libcurl" "libcurl4-openssl-dev")

find_package(LibArchive QUIET)
t2t_require(LibArchive_FOUND "libarchive" "libarchive-dev")

find_package(Threads REQUIRED)

# Data-parallel training uses LibTorch's own c10d process groups. LibTorch
# carries Gloo compiled in but not its headers, which c10d's Gloo header
# needs: Debian's libgloo-dev provides them (headers only; nothing of it is
# linked). NCCL's header comes with the wheel's NCCL, else the CUDA toolkit.
find_path(T2T_GLOO_INCLUDE_DIR gloo/algorithm.h)
t2t_require(T2T_GLOO_INCLUDE_DIR "Gloo's headers" "libgloo-dev")
set(T2T_DISTRIBUTED_DEFINITIONS USE_C10D_GLOO)
set(T2T_DISTRIBUTED_INCLUDE_DIRS "")
# -I/usr/include would break the C++ headers' #include_next.
if(NOT T2T_GLOO_INCLUDE_DIR STREQUAL "/usr/include")
  list(APPEND T2T_DISTRIBUTED_INCLUDE_DIRS "${T2T_GLOO_INCLUDE_DIR}")
endif()
if(CAFFE2_USE_CUDA)
  find_path(T2T_NCCL_INCLUDE_DIR nccl.h
    HINTS "${_t2t_torch_root}/../nvidia/nccl/include" "${CUDAToolkit_INCLUDE_DIRS}"
          /usr/local/cuda/include)
  if(T2T_NCCL_INCLUDE_DIR)
    list(APPEND T2T_DISTRIBUTED_DEFINITIONS USE_C10D_NCCL T2T_WITH_NCCL)
    list(APPEND T2T_DISTRIBUTED_INCLUDE_DIRS "${T2T_NCCL_INCLUDE_DIR}")
  else()
    message(WARNING "t2t: nccl.h not found: multi-process training on CUDA will be refused")
  endif()
endif()
# Every executable (t2t_exe) names two libraries ahead of LibTorch, so that
# the dynamic linker finds their symbols first:
# - tcmalloc. glibc's malloc hands the large activation buffers of every
#   step back to the OS and faults them in again on the next; tcmalloc keeps
#   them. It only replaces malloc when the executable itself links it (ahead
#   of libc). Optional: without it t2t is slower.
# - libstdc++. The PyPI wheels' libtorch_cpu.so exports private copies of
#   libstdc++'s std::filesystem functions (pytorch/pytorch#133437). Found
#   first, they serve t2t's own calls, and with some wheel and compiler
#   pairs they crash (torch 2.11 with GCC 13: std::filesystem::remove_all).
# Link options come before the objects and libraries on the link line, and
# the order of the libraries there is the order of lookup.
find_library(T2T_TCMALLOC NAMES tcmalloc_minimal libtcmalloc_minimal.so.4)
add_library(t2t_exe INTERFACE)
if(T2T_SANITIZE)
  # The sanitizers bring their own malloc; tcmalloc would hide it.
  message(STATUS "t2t: sanitizer build: binaries use the sanitizer's malloc, not tcmalloc")
  set(_t2t_tcmalloc "")
elseif(T2T_TCMALLOC)
  message(STATUS "t2t: binaries use tcmalloc (${T2T_TCMALLOC})")
  set(_t2t_tcmalloc "${T2T_TCMALLOC}")
else()
  message(WARNING "t2t: tcmalloc not found; training and decoding are slower with glibc's "
                  "malloc. ${T2T_APT_HINT} libtcmalloc-minimal4")
  set(_t2t_tcmalloc "")
endif()
# The compiler's own libstdc++ by its path: a bare -lstdc++ may find a
# static archive first (a compiler built with one), which adds no lookup
# entry at that place.
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6
                OUTPUT_VARIABLE _t2t_libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT IS_ABSOLUTE "${_t2t_libstdcxx}" OR NOT EXISTS "${_t2t_libstdcxx}")
  find_library(T2T_LIBSTDCXX NAMES libstdc++.so.6)
  set(_t2t_libstdcxx "${T2T_LIBSTDCXX}")
endif()
if(NOT _t2t_libstdcxx)
  set(_t2t_libstdcxx "-lstdc++")
endif()
message(STATUS "t2t: binaries look up ${_t2t_libstdcxx} before LibTorch")
target_link_options(t2t_exe INTERFACE
  "SHELL:-Wl,--push-state,--no-as-needed ${_t2t_tcmalloc} ${_t2t_libstdcxx} -Wl,--pop-state")
message(STATUS "t2t: data parallel via c10d: ${T2T_DISTRIBUTED_DEFINITIONS}")

set(T2T_PUBLIC_LIBS t2t_torch spdlog::spdlog ${T2T_YAML_TARGET} Threads::Threads)
set(T2T_PRIVATE_LIBS PkgConfig::SENTENCEPIECE CURL::libcurl ${CMAKE_DL_LIBS})
