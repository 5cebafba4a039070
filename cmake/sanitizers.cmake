# Sanitizer and fuzzing builds (scripts/sanitize.sh, scripts/fuzz.sh).
#
#   -DFFNSHAPE_SANITIZE=address,undefined   instruments ffnshape's own code (library, tool, tests)
#   -DFFNSHAPE_FUZZ=ON                      adds the libFuzzer targets of tests/fuzz/ (Clang only)
#
# Flags are set for every target here, before any is defined, so the shared precompiled header keeps
# one set of flags. LibTorch and the other dependencies are not instrumented: their known reports
# are listed, each with its reason, in tests/sanitizer_suppressions/.
set(FFNSHAPE_SANITIZE "" CACHE STRING "Sanitizers for ffnshape's own code, e.g. address,undefined (empty: none)")
option(FFNSHAPE_FUZZ "Build the libFuzzer targets of tests/fuzz (needs Clang)" OFF)

if(FFNSHAPE_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "FFNSHAPE_FUZZ needs Clang's libFuzzer, and the compiler is ${CMAKE_CXX_COMPILER_ID}. "
          "Fix: configure with -DCMAKE_CXX_COMPILER=clang++ (bash scripts/fuzz.sh does)")
endif()

if(FFNSHAPE_SANITIZE)
  string(REPLACE " " "" FFNSHAPE_SANITIZE "${FFNSHAPE_SANITIZE}")
  # Whether a finding stops the program is set at run time (halt_on_error in scripts/sanitizer_env.sh:
  # yes, so a test fails), which also lets one run list every finding (UBSAN_OPTIONS=halt_on_error=0).
  add_compile_options(-fsanitize=${FFNSHAPE_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${FFNSHAPE_SANITIZE})
  if(FFNSHAPE_SANITIZE MATCHES "undefined" AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # The vptr check of the one file that calls into SentencePiece needs the library's type info,
    # which a library opened at run time (cmake/sentencepiece.cmake) does not provide at link time.
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/../src/train/tokenizer.cpp PROPERTIES
      COMPILE_OPTIONS -fno-sanitize=vptr SKIP_PRECOMPILE_HEADERS ON)
  endif()
  message(STATUS "ffnshape: sanitizers ${FFNSHAPE_SANITIZE} on ffnshape's own code")
endif()
if(FFNSHAPE_FUZZ)
  # Coverage counters for libFuzzer in every source; only the fuzz targets link libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
