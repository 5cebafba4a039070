// ffnshape data prepare --input FILES_OR_DIRS... --out DIR [--vocab-size N] [--tokenizer MODEL]
//                       [--val-fraction F] [--seed S] [--shard-tokens N] [--threads N]
#include <iostream>

#include "commands.h"
#include "ffnshape/train/prepare.h"

namespace ffnshape::cli {

Subcommand add_data_command(CLI::App& app) {
  auto o = std::make_shared<PrepareOptions>();
  auto* data = app.add_subcommand("data", "Data preparation");
  data->require_subcommand(1);
  auto* prepare = data->add_subcommand("prepare", "Text -> SentencePiece tokenizer + token shards + meta.json");
  prepare->add_option("--input", o->inputs, "Text files, or folders of .txt files (one document each)")->required();
  prepare->add_option("--out", o->out_dir, "Output folder")->required();
  prepare->add_option("--vocab-size", o->vocab_size, "Vocabulary of the BPE tokenizer to train")->check(CLI::Range(64, 1 << 22));
  prepare->add_option("--tokenizer", o->tokenizer, "Use this SentencePiece model instead of training one")->check(CLI::ExistingFile);
  prepare->add_option("--val-fraction", o->val_fraction, "Share of documents held out for validation");
  prepare->add_option("--seed", o->seed, "Seed of the document split");
  prepare->add_option("--shard-tokens", o->shard_tokens, "Tokens per shard file");
  prepare->add_option("--threads", o->threads, "Encoding threads (0: all cores)");
  return {data, [o] {
            const auto r = prepare_data(*o);
            std::cout << "prepared " << o->out_dir << ": " << r.train_documents << " train / " << r.val_documents
                      << " val documents, " << r.train_tokens << " / " << r.val_tokens << " tokens, vocab "
                      << r.vocab_size << ", " << r.shards.size() << " shard(s), tokenizer " << r.tokenizer_path << "\n";
            return kExitOk;
          }};
}

}  // namespace ffnshape::cli
