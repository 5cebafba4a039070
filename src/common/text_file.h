// Internal: writing results (profiles, schedules, reports, exported and imported model folders) so
// that a reader never sees half of one, and a failed or interrupted write leaves nothing behind.
#pragma once

#include <filesystem>
#include <string>

namespace ffnshape {

// Writes `text` to PATH.tmp, then renames it over `path`. std::runtime_error saying what failed.
void write_text_file(const std::string& path, const std::string& text);

// DataError unless `dir` is absent or an empty folder: an output folder (an import's run, an
// export) is never written over. The one check of its kind; StagedFolder makes it too.
void check_new_output_dir(const std::filesystem::path& dir);

// A folder built under a sibling name (FINAL.partial) and renamed to its final name by commit(). If
// commit() is never reached (an exception, a refused input), the destructor removes the partial
// folder, so the final name is either absent or complete and a rerun is not refused. A .partial left
// by a killed process is removed on construction. The final folder must be absent or empty
// (check_new_output_dir).
class StagedFolder {
 public:
  explicit StagedFolder(const std::filesystem::path& final_dir);
  ~StagedFolder();
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // Where to write the contents until commit().
  const std::filesystem::path& path() const { return staging_; }
  // Renames the folder into place (replacing an empty folder of that name).
  void commit();

 private:
  std::filesystem::path final_, staging_;
  bool committed_ = false;
};

}  // namespace ffnshape
