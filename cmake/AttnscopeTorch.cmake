# LibTorch and the CUDA pieces the engine needs (runtime, CUPTI, NVTX headers), found where PyPI's
# torch wheel puts them, so the engine builds with no CUDA toolkit installed:
#   torch/include, torch/lib                      LibTorch's headers and libraries
#   nvidia/cu13/{include,lib} (CUDA 13 wheels)    cuda_runtime_api.h, crt/ (nvidia-cuda-crt), cupti.h, nvtx3/,
#                                                 libcudart, libcupti
#   nvidia/{cuda_runtime,cuda_cupti,nvtx}/...     the same, as the CUDA 12 wheels lay them out
# torch's own CMake config (TorchConfig -> Caffe2Config) is not used: for a CUDA build of torch it
# insists on a CUDA toolkit (nvcc, nvrtc) although we compile no CUDA code. A system toolkit is the
# fallback for CUDA's headers and libraries only when the wheels lack them.
#
# In:  ATTNSCOPE_TORCH_DIR (cache): the torch package folder (python3 -c 'import torch; print(torch.__path__[0])');
#      when empty, found from CMAKE_PREFIX_PATH (torch.utils.cmake_prefix_path, as scripts/build passes)
#      or by asking python3.
# Out: ATTNSCOPE_TORCH_FOUND, ATTNSCOPE_TORCH_WHY (what was missing, for the message), and the
#      imported targets attnscope::torch (LibTorch: headers, libraries, definitions), attnscope::cudart,
#      attnscope::cupti (headers and library each; NVTX is header-only and rides with cudart).

set(ATTNSCOPE_TORCH_DIR "" CACHE PATH "The torch package folder (torch.__path__[0]); found when empty")
set(ATTNSCOPE_TORCH_FOUND OFF)
set(ATTNSCOPE_TORCH_WHY "")

function(_attnscope_find_torch_dir out)
  if(ATTNSCOPE_TORCH_DIR)
    set(${out} "${ATTNSCOPE_TORCH_DIR}" PARENT_SCOPE)
    return()
  endif()
  # torch.utils.cmake_prefix_path is <torch>/share/cmake.
  foreach(p IN LISTS CMAKE_PREFIX_PATH)
    get_filename_component(cand "${p}/../.." ABSOLUTE)
    if(EXISTS "${cand}/include/ATen/ATen.h")
      set(${out} "${cand}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  find_package(Python3 QUIET COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import torch; print(torch.__path__[0])"
                    OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND EXISTS "${dir}/include/ATen/ATen.h")
      set(${out} "${dir}" PARENT_SCOPE)
      return()
    endif()
  endif()
  set(${out} "" PARENT_SCOPE)
endfunction()

_attnscope_find_torch_dir(_torch_dir)
if(NOT _torch_dir OR NOT EXISTS "${_torch_dir}/include/ATen/ATen.h")
  set(ATTNSCOPE_TORCH_WHY "LibTorch not found (no torch package: set ATTNSCOPE_TORCH_DIR, or pip install torch)")
  return()
endif()

foreach(lib torch torch_cpu c10)
  find_library(ATTNSCOPE_LIB_${lib} NAMES ${lib} PATHS "${_torch_dir}/lib" NO_DEFAULT_PATH)
  if(NOT ATTNSCOPE_LIB_${lib})
    set(ATTNSCOPE_TORCH_WHY "LibTorch at ${_torch_dir} has no lib${lib}.so")
    return()
  endif()
endforeach()
find_library(ATTNSCOPE_LIB_torch_cuda NAMES torch_cuda PATHS "${_torch_dir}/lib" NO_DEFAULT_PATH)
find_library(ATTNSCOPE_LIB_c10_cuda NAMES c10_cuda PATHS "${_torch_dir}/lib" NO_DEFAULT_PATH)

# CUDA's headers and libraries: the wheels beside torch first (they match the runtime torch loads).
get_filename_component(_site "${_torch_dir}/.." ABSOLUTE)
set(_cuda_hints
  "${_site}/nvidia/cu13" "${_site}/nvidia/cu12"
  "${_site}/nvidia/cuda_runtime" "${_site}/nvidia/cuda_cupti" "${_site}/nvidia/nvtx")
find_path(ATTNSCOPE_CUDART_INCLUDE cuda_runtime_api.h PATHS ${_cuda_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
# cuda_runtime_api.h includes crt/host_defines.h, which comes in its own wheel (nvidia-cuda-crt).
find_path(ATTNSCOPE_CRT_INCLUDE crt/host_defines.h PATHS ${_cuda_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_path(ATTNSCOPE_CUPTI_INCLUDE cupti.h PATHS ${_cuda_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_path(ATTNSCOPE_NVTX_INCLUDE nvtx3/nvToolsExt.h PATHS ${_cuda_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_library(ATTNSCOPE_CUDART_LIB NAMES cudart libcudart.so.13 libcudart.so.12 PATHS ${_cuda_hints}
             PATH_SUFFIXES lib NO_DEFAULT_PATH)
find_library(ATTNSCOPE_CUPTI_LIB NAMES cupti libcupti.so.13 libcupti.so.12 PATHS ${_cuda_hints}
             PATH_SUFFIXES lib NO_DEFAULT_PATH)
if(NOT (ATTNSCOPE_CUDART_INCLUDE AND ATTNSCOPE_CRT_INCLUDE AND ATTNSCOPE_CUPTI_INCLUDE AND ATTNSCOPE_NVTX_INCLUDE AND ATTNSCOPE_CUDART_LIB
        AND ATTNSCOPE_CUPTI_LIB))
  # A torch without the nvidia-* wheels (built from source, or a CPU build): a system toolkit.
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cupti)
    foreach(v CUDART_INCLUDE CRT_INCLUDE CUPTI_INCLUDE NVTX_INCLUDE)
      if(NOT ATTNSCOPE_${v})
        set(ATTNSCOPE_${v} "${CUDAToolkit_INCLUDE_DIRS}" CACHE PATH "" FORCE)
      endif()
    endforeach()
    if(NOT ATTNSCOPE_CUDART_LIB)
      get_target_property(_l CUDA::cudart IMPORTED_LOCATION)
      set(ATTNSCOPE_CUDART_LIB "${_l}" CACHE FILEPATH "" FORCE)
    endif()
    if(NOT ATTNSCOPE_CUPTI_LIB)
      get_target_property(_l CUDA::cupti IMPORTED_LOCATION)
      set(ATTNSCOPE_CUPTI_LIB "${_l}" CACHE FILEPATH "" FORCE)
    endif()
  endif()
endif()
foreach(v CUDART_INCLUDE CRT_INCLUDE CUPTI_INCLUDE NVTX_INCLUDE CUDART_LIB CUPTI_LIB)
  if(NOT ATTNSCOPE_${v})
    set(ATTNSCOPE_TORCH_WHY "no ${v} in the nvidia-* wheels beside ${_torch_dir} nor in a CUDA toolkit (for \
crt/host_defines.h: pip install 'cuda-toolkit[crt]==<the cuda-toolkit version torch installed>'; scripts/build \
with ATTNSCOPE_ENGINE=ON does it)")
    return()
  endif()
endforeach()

add_library(attnscope::cudart INTERFACE IMPORTED GLOBAL)
set_target_properties(attnscope::cudart PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${ATTNSCOPE_CUDART_INCLUDE};${ATTNSCOPE_CRT_INCLUDE};${ATTNSCOPE_NVTX_INCLUDE}"
  INTERFACE_LINK_LIBRARIES "${ATTNSCOPE_CUDART_LIB}")
add_library(attnscope::cupti INTERFACE IMPORTED GLOBAL)
set_target_properties(attnscope::cupti PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${ATTNSCOPE_CUPTI_INCLUDE}"
  INTERFACE_LINK_LIBRARIES "${ATTNSCOPE_CUPTI_LIB};attnscope::cudart")

# What torch's exported targets carry (Caffe2Targets.cmake of the 2.x wheels): its two include
# folders, the definitions its distributed headers test, and libtorch_cuda linked even though no
# symbol of ours names it (--no-as-needed, as torch's own targets do): loading it is what registers
# the CUDA backend, without it torch::cuda::is_available() is false on a GPU machine.
set(_torch_defs USE_DISTRIBUTED USE_C10D_GLOO USE_RPC USE_TENSORPIPE)
set(_torch_libs "${ATTNSCOPE_LIB_torch}" "${ATTNSCOPE_LIB_torch_cpu}" "${ATTNSCOPE_LIB_c10}")
if(ATTNSCOPE_LIB_torch_cuda AND ATTNSCOPE_LIB_c10_cuda)
  list(APPEND _torch_defs USE_C10D_NCCL)
  list(APPEND _torch_libs "-Wl,--no-as-needed,${ATTNSCOPE_LIB_torch_cuda}" "-Wl,--as-needed"
       "${ATTNSCOPE_LIB_c10_cuda}")
endif()
add_library(attnscope::torch INTERFACE IMPORTED GLOBAL)
set_target_properties(attnscope::torch PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_torch_dir}/include;${_torch_dir}/include/torch/csrc/api/include"
  INTERFACE_COMPILE_DEFINITIONS "${_torch_defs}"
  INTERFACE_LINK_LIBRARIES "${_torch_libs};attnscope::cudart")
set(ATTNSCOPE_TORCH_FOUND ON)
message(STATUS "attnscope: LibTorch ${_torch_dir}; CUDA runtime ${ATTNSCOPE_CUDART_LIB}; CUPTI ${ATTNSCOPE_CUPTI_LIB}")
