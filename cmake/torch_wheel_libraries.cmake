# A PyPI torch wheel keeps its CUDA libraries (cuBLAS, cuDNN, NCCL, the CUDA runtime, ...) in the
# nvidia/*/lib folders beside torch/, and libtorch_cuda.so finds them through its own RPATH. A
# machine's CUDA toolkit may carry older copies of the same libraries (here: CUDA 13.0 and its NCCL
# against the wheel's 13.2 and NCCL 2.30), which the linker and the loader would otherwise find
# first. So every ffnshape executable links against, and loads, the wheel's copies:
#   -rpath-link  the linker resolves libtorch_cuda.so's own dependencies there;
#   -rpath       placed before CMake's automatic entries, so the loader looks there first.
# Defines ffnshape_torch_wheel_libraries (an interface target; empty for a LibTorch zip or a CPU wheel).
add_library(ffnshape_torch_wheel_libraries INTERFACE)
file(GLOB wheel_library_dirs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
if(wheel_library_dirs)
  list(SORT wheel_library_dirs)
  foreach(dir IN LISTS wheel_library_dirs)
    get_filename_component(dir "${dir}" REALPATH)
    target_link_options(ffnshape_torch_wheel_libraries INTERFACE "LINKER:-rpath-link,${dir}" "LINKER:-rpath,${dir}")
  endforeach()
  list(LENGTH wheel_library_dirs count)
  message(STATUS "ffnshape: linking and loading the torch wheel's CUDA libraries (${count} folders under "
                 "${TORCH_INSTALL_PREFIX}/../nvidia)")
endif()
