// Internal to the trainer: a run's TensorBoard event file (RUN/tb/), protobuf Event messages in
// TFRecord framing, so that `tensorboard --logdir` shows its scalars and text beside other runs'.
// Rank 0 alone writes one (ProgressLog owns it); nothing here touches the model.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace ffnshape {

class TensorBoardWriter {
 public:
  // Opens dir's event file for appending (dir is created when absent). A run resumed from a
  // checkpoint (resumed_step > 0) keeps the records up to and including that step and drops the
  // later ones, which the run is about to repeat, and any torn record a killed process left; a run
  // from step 0 starts a new file in place of any earlier one. DataError when dir cannot be written.
  TensorBoardWriter(const std::filesystem::path& dir, int64_t resumed_step);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // One scalar, stored as a float (TensorBoard's simple_value).
  void scalar(const std::string& tag, double value, int64_t step);
  // One text summary (TensorBoard's text plugin renders it as Markdown).
  void text(const std::string& tag, const std::string& markdown, int64_t step);

  const std::filesystem::path& path() const { return path_; }

 private:
  void append(const std::string& event);  // one record, flushed: a killed run loses at most this one

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  bool failed_ = false;  // a write failed: said once, then the run goes on without TensorBoard
};

// The serialized Event messages of an event file in order, up to the first torn or corrupt record
// (whose byte offset is `valid_bytes`). For the writer's resume and for tests.
struct EventRecords {
  std::vector<std::string> events;
  uint64_t valid_bytes = 0;
};
EventRecords read_event_records(const std::filesystem::path& file);

}  // namespace ffnshape
