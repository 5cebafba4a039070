// Internal: writing result files (profiles, schedules, reports) so that a reader never sees half of one.
#pragma once

#include <string>

namespace ffnshape {

// Writes `text` to PATH.tmp, then renames it over `path`. std::runtime_error saying what failed.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace ffnshape
