// ffnshape data prepare --input PATHS... --out DIR [--format auto|text|jsonl|parquet] [--text-field NAME]
//                       [--tokenizer FILE.model|tokenizer.json|RUN_DIR] [--vocab-size N] [--val-fraction F]
//                       [--seed S] [--shard-tokens N] [--max-tokens N] [--dedup] [--skip-bad] [--threads N]
#include <iostream>

#include "commands.h"
#include "ffnshape/data/prepare.h"

namespace ffnshape::cli {

Subcommand add_data_command(CLI::App& app) {
  auto o = std::make_shared<PrepareOptions>();
  auto format = std::make_shared<std::string>("auto");
  auto* data = app.add_subcommand("data", "Data preparation");
  data->require_subcommand(1);
  auto* prepare = data->add_subcommand("prepare", "Corpus -> tokenizer + token shards + meta.json (resumable)");
  prepare->add_option("--input", o->inputs,
                      "Files, folders or globs: .txt (one document each), .jsonl / .ndjson (one per line), "
                      ".parquet (one per row); .gz / .zst for text and JSONL")->required();
  prepare->add_option("--out", o->out_dir, "Output folder")->required();
  prepare->add_option("--format", *format, "auto (from the extensions), text, jsonl or parquet")
      ->check(CLI::IsMember({"auto", "text", "jsonl", "parquet"}));
  prepare->add_option("--text-field", o->text_field, "JSONL field / Parquet column holding the text (default text)");
  prepare->add_option("--tokenizer", o->tokenizer,
                      "Use this tokenizer instead of training one: FILE.model, tokenizer.json or a run folder");
  prepare->add_option("--vocab-size", o->vocab_size, "Vocabulary of the BPE tokenizer to train")->check(CLI::Range(64, 1 << 22));
  prepare->add_option("--val-fraction", o->val_fraction, "Share of documents held out for validation");
  prepare->add_option("--seed", o->seed, "Seed of the document split");
  prepare->add_option("--shard-tokens", o->shard_tokens, "Tokens per shard file");
  prepare->add_option("--max-tokens", o->max_tokens, "Stop before the document that would take train + val past N tokens");
  prepare->add_flag("--dedup", o->dedup, "Drop exact duplicate documents (by a 64-bit hash of the text)");
  prepare->add_flag("--skip-bad", o->skip_bad, "Count and skip bad lines, rows and files instead of stopping (exit 2)");
  prepare->add_option("--threads", o->threads, "Encoding threads (0: all cores)");
  return {data, [o, format] {
            o->format = parse_corpus_format(*format);
            const auto r = prepare_data(*o);
            std::cout << "prepared " << o->out_dir << ": " << r.train_documents << " train / " << r.val_documents
                      << " val documents, " << r.train_tokens << " / " << r.val_tokens << " tokens, vocab "
                      << r.vocab_size << ", " << r.shards.size() << " shard(s), tokenizer " << r.tokenizer_path;
            if (r.skipped_documents + r.skipped_files > 0) {
              std::cout << ", skipped " << r.skipped_documents << " document(s) and " << r.skipped_files << " file(s)";
            }
            if (o->dedup) std::cout << ", " << r.duplicate_documents << " duplicate(s) dropped";
            if (r.resumed) std::cout << " (continued an interrupted prepare)";
            std::cout << "\n";
            return kExitOk;
          }};
}

}  // namespace ffnshape::cli
