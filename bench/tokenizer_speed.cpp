// ffnshape's side of bench/tokenizer_speed.sh: encoding throughput of a tokenizer.json on a folder of
// text documents.
//   bench_tokenizer_speed TOKENIZER_JSON CORPUS_DIR THREADS REPEATS
// Prints one line: "threads T bytes B tokens N seconds S mb_per_s M" for the best of REPEATS runs of
// encode_batch over all documents (*.txt, sorted by name).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ffnshape/data/hf_tokenizer.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: bench_tokenizer_speed TOKENIZER_JSON CORPUS_DIR THREADS REPEATS\n";
    return 2;
  }
  try {
    const auto tokenizer = ffnshape::HfTokenizer::load(argv[1]);
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(argv[2])) {
      if (entry.path().extension() == ".txt") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> texts;
    size_t bytes = 0;
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      texts.push_back(text.str());
      bytes += texts.back().size();
    }
    const int threads = std::stoi(argv[3]), repeats = std::stoi(argv[4]);
    double best = 1e30;
    size_t tokens = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const auto ids = tokenizer.encode_batch(texts, threads);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::min(best, seconds);
      tokens = 0;
      for (const auto& doc : ids) tokens += doc.size();
    }
    std::printf("threads %d bytes %zu tokens %zu seconds %.4f mb_per_s %.2f\n", threads, bytes, tokens, best,
                bytes / best / 1e6);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
}
