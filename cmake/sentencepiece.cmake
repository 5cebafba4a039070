# SentencePiece (the tokenizer library). Debian's libsentencepiece-dev ships only a pkg-config file.
# src/train/tokenizer.cpp needs its headers but loads the library itself at run time (dlopen with
# RTLD_DEEPBIND): SentencePiece bundles and exports its own protobuf, which clashes with libtorch's
# libprotobuf when linked into one process (a crash before main). So this defines
# ffnshape_sentencepiece (include directories, no -l flags) and tells tokenizer.cpp, alone so the
# shared precompiled header stays valid for every other file, where to dlopen the library from.
if(NOT TARGET ffnshape_sentencepiece)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(SENTENCEPIECE QUIET sentencepiece)
  endif()
  if(NOT SENTENCEPIECE_FOUND)
    message(FATAL_ERROR "SentencePiece not found through pkg-config (sentencepiece.pc). Fix: install "
            "pkg-config and libsentencepiece-dev (bash scripts/setup.sh), or add the directory holding "
            "sentencepiece.pc to PKG_CONFIG_PATH.")
  endif()
  message(STATUS "Found SentencePiece ${SENTENCEPIECE_VERSION} in ${SENTENCEPIECE_LIBDIR} (loaded at run time)")
  add_library(ffnshape_sentencepiece INTERFACE)
  target_include_directories(ffnshape_sentencepiece INTERFACE ${SENTENCEPIECE_INCLUDE_DIRS})
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/../src/train/tokenizer.cpp PROPERTIES
    COMPILE_DEFINITIONS FFNSHAPE_SENTENCEPIECE_LIBDIR="${SENTENCEPIECE_LIBDIR}")
endif()
