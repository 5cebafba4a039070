# The corpus readers of `data prepare` (src/data/): zlib and libzstd for .gz / .zst files, and
# Apache Arrow's Parquet library for .parquet files.
#
# Debian 12 packages no Arrow, so the Parquet reader uses the libarrow / libparquet (and headers)
# bundled in the pyarrow wheel of the project's virtual environment (scripts/setup.sh installs it
# beside torch). The wheel's libraries are versioned (libparquet.so.1900) with no unversioned
# link name, so they are linked by full path, with an rpath to their folder, like the torch wheel's
# CUDA libraries (cmake/torch_wheel_libraries.cmake). The wheel is built with the C++11 string ABI,
# as is the torch wheel, so std::string crosses between them safely. Without pyarrow, ffnshape
# builds and reads everything but Parquet, and says so when given a Parquet file.
find_path(ZSTD_INCLUDE_DIR zstd.h DOC "libzstd's header (Debian: libzstd-dev)")
find_library(ZSTD_LIBRARY zstd DOC "libzstd (Debian: libzstd-dev)")
find_path(ZLIB_HEADER_DIR zlib.h DOC "zlib's header (Debian: zlib1g-dev)")
find_library(ZLIB_LIBRARY_FILE z DOC "zlib (Debian: zlib1g-dev)")
if(NOT ZSTD_INCLUDE_DIR OR NOT ZSTD_LIBRARY OR NOT ZLIB_HEADER_DIR OR NOT ZLIB_LIBRARY_FILE)
  message(FATAL_ERROR "zlib or libzstd not found. Fix: apt-get install zlib1g-dev libzstd-dev (bash scripts/setup.sh)")
endif()
target_link_libraries(ffnshape PRIVATE ${ZSTD_LIBRARY} ${ZLIB_LIBRARY_FILE})

# The corpus code includes no torch header: compiled without the shared precompiled header, it builds fast.
file(GLOB ffnshape_data_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../src/data/*.cpp)
set_source_files_properties(${ffnshape_data_sources} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)

get_filename_component(default_pyarrow_dir "${TORCH_INSTALL_PREFIX}/../pyarrow" ABSOLUTE)
set(FFNSHAPE_PYARROW_DIR "${default_pyarrow_dir}" CACHE PATH
    "The pyarrow package whose bundled libarrow / libparquet read Parquet corpora (empty: no Parquet)")
file(GLOB parquet_library "${FFNSHAPE_PYARROW_DIR}/libparquet.so.[0-9]*")
file(GLOB arrow_library "${FFNSHAPE_PYARROW_DIR}/libarrow.so.[0-9]*")
list(FILTER parquet_library EXCLUDE REGEX "\\.so\\.[0-9]+\\.[0-9]")  # the soname link, not libX.so.1900.1.0
list(FILTER arrow_library EXCLUDE REGEX "\\.so\\.[0-9]+\\.[0-9]")
add_library(ffnshape_parquet_libraries INTERFACE)
if(parquet_library AND arrow_library AND EXISTS "${FFNSHAPE_PYARROW_DIR}/include/parquet/arrow/reader.h")
  list(GET parquet_library 0 parquet_library)
  list(GET arrow_library 0 arrow_library)
  target_sources(ffnshape PRIVATE src/data/parquet_source.cpp)
  # Arrow 21 and newer need C++20 (std::span) in their headers, whatever the rest is compiled as.
  set_source_files_properties(src/data/parquet_source.cpp PROPERTIES
    SKIP_PRECOMPILE_HEADERS ON INCLUDE_DIRECTORIES "${FFNSHAPE_PYARROW_DIR}/include" COMPILE_OPTIONS -std=c++20)
  target_link_libraries(ffnshape_parquet_libraries INTERFACE "${parquet_library}" "${arrow_library}")
  target_link_options(ffnshape_parquet_libraries INTERFACE "LINKER:-rpath,${FFNSHAPE_PYARROW_DIR}")
  message(STATUS "ffnshape: Parquet corpora through ${parquet_library}")
else()
  target_sources(ffnshape PRIVATE src/data/parquet_unavailable.cpp)
  message(WARNING "pyarrow's libparquet not found in '${FFNSHAPE_PYARROW_DIR}': `data prepare` will not read "
          "Parquet files. Fix: bash scripts/setup.sh (installs pyarrow into .venv), or set FFNSHAPE_PYARROW_DIR")
endif()
target_link_libraries(ffnshape PRIVATE ffnshape_parquet_libraries)
install(TARGETS ffnshape_parquet_libraries EXPORT ffnshapeTargets)
