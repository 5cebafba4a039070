# The tokenizer.json reader (src/data/hf_*.cpp and its parts): PCRE2 runs the split patterns (UTF,
# Unicode properties, JIT) and ICU's normalizers run NFC / NFKC. Found through pkg-config and linked
# by full path, so the exported package names no imported target. These sources include no torch
# header and skip the torch precompiled header.
find_package(PkgConfig REQUIRED)
pkg_check_modules(FFNSHAPE_PCRE2 libpcre2-8)
pkg_check_modules(FFNSHAPE_ICU_UC icu-uc)
if(NOT FFNSHAPE_PCRE2_FOUND OR NOT FFNSHAPE_ICU_UC_FOUND)
  message(FATAL_ERROR "PCRE2 or ICU not found (pkg-config libpcre2-8, icu-uc). Fix: apt-get install "
          "libpcre2-dev libicu-dev (bash scripts/setup.sh)")
endif()
set(ffnshape_hf_tokenizer_sources
  src/data/utf8.cpp src/data/byte_level.cpp src/data/regex.cpp src/data/normalizer.cpp
  src/data/added_tokens.cpp src/data/pre_tokenizer.cpp src/data/bpe.cpp src/data/word_cache.cpp
  src/data/hf_json_fields.cpp src/data/hf_pipeline_json.cpp src/data/hf_tokenizer_json.cpp
  src/data/hf_special_ids.cpp src/data/hf_tokenizer.cpp)
set_source_files_properties(${ffnshape_hf_tokenizer_sources} PROPERTIES SKIP_PRECOMPILE_HEADERS ON
  INCLUDE_DIRECTORIES "${FFNSHAPE_PCRE2_INCLUDE_DIRS};${FFNSHAPE_ICU_UC_INCLUDE_DIRS}")
target_link_libraries(ffnshape PRIVATE ${FFNSHAPE_PCRE2_LINK_LIBRARIES} ${FFNSHAPE_ICU_UC_LINK_LIBRARIES})
