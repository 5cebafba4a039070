// ffnshape params CONFIG... [--set k=v]... [--json] [--seq-len N]
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/params/count.h"
#include "ffnshape/schedule/schedule.h"
#include "format.h"

namespace ffnshape::cli {
namespace {

struct ParamsOptions {
  std::vector<std::string> configs;
  std::vector<std::string> overrides;
  bool json = false;
  int64_t seq_len = 0;
};

nlohmann::json to_json(const std::string& path, const ModelConfig& m, int64_t seq_len) {
  const auto count = count_parameters(m);
  const auto flops = count_flops(m, seq_len);
  std::vector<int64_t> widths;
  for (int64_t l = 0; l < m.n_layers; ++l) widths.push_back(m.ffn_hidden(l));
  return {{"config", path},
          {"total", count.total()},
          {"embedding", count.embedding},
          {"attention", count.attention},
          {"ffn", count.ffn},
          {"norm", count.norm},
          {"head", count.head},
          {"non_embedding", count.non_embedding()},
          {"attention_share", count.attention_share()},
          {"ffn_share", count.ffn_share()},
          {"seq_len", seq_len},
          {"flops_per_token_forward", flops.forward_per_token},
          {"flops_per_token_training", flops.training_per_token},
          {"shape", describe_shape(m)},
          {"ffn_widths", widths}};
}

void print_one(const std::string& path, const ModelConfig& m, int64_t seq_len) {
  const auto count = count_parameters(m);
  const auto flops = count_flops(m, seq_len);
  std::cout << path << "\n  " << describe_shape(m) << "\n\n";
  auto row = [&](const char* name, int64_t value) {
    std::printf("  %-14s %18s  %6.2f%%\n", name, with_commas(value).c_str(),
                100.0 * static_cast<double>(value) / static_cast<double>(count.total()));
  };
  row("embedding", count.embedding);
  row("attention", count.attention);
  row("ffn", count.ffn);
  row("norm", count.norm);
  row("head", count.head);
  std::printf("  %-14s %18s\n", "total", with_commas(count.total()).c_str());
  std::printf("  %-14s %18s  (attention %.1f%% / ffn %.1f%% of it)\n", "non_embedding",
              with_commas(count.non_embedding()).c_str(), 100.0 * count.attention_share(), 100.0 * count.ffn_share());
  std::printf("  training FLOPs per token at seq %lld: %s\n", static_cast<long long>(seq_len),
              human(flops.training_per_token).c_str());
  if (!m.ffn.widths.empty()) {
    std::ostringstream widths;
    for (size_t l = 0; l < m.ffn.widths.size(); ++l) widths << (l ? " " : "") << m.ffn.widths[l];
    std::cout << "  ffn widths per layer: " << widths.str() << "\n";
  }
}

void print_table(const std::vector<std::pair<std::string, ModelConfig>>& models) {
  int width = 6;
  for (const auto& entry : models) width = std::max(width, static_cast<int>(entry.first.size()));
  std::printf("%-*s %16s %16s %7s %7s  %s\n", width, "config", "total", "non_embedding", "attn%", "ffn%", "shape");
  for (const auto& [path, m] : models) {
    const auto count = count_parameters(m);
    std::printf("%-*s %16s %16s %6.1f%% %6.1f%%  %s\n", width, path.c_str(), with_commas(count.total()).c_str(),
                with_commas(count.non_embedding()).c_str(), 100.0 * count.attention_share(),
                100.0 * count.ffn_share(), describe_shape(m).c_str());
  }
}

int run(const ParamsOptions& options) {
  std::vector<std::pair<std::string, ModelConfig>> models;
  for (const auto& path : options.configs) {
    auto model = load_run_config(path, options.overrides).model;
    schedule::resolve_schedule(model);
    models.emplace_back(path, model);
  }
  auto seq_len = [&](const ModelConfig& m) { return options.seq_len > 0 ? options.seq_len : m.max_seq_len; };
  if (options.json) {
    if (models.size() == 1) {
      std::cout << to_json(models[0].first, models[0].second, seq_len(models[0].second)).dump(2) << "\n";
    } else {
      auto all = nlohmann::json::array();
      for (const auto& [path, m] : models) all.push_back(to_json(path, m, seq_len(m)));
      std::cout << all.dump(2) << "\n";
    }
  } else if (models.size() == 1) {
    print_one(models[0].first, models[0].second, seq_len(models[0].second));
  } else {
    print_table(models);
  }
  return kExitOk;
}

}  // namespace

Subcommand add_params_command(CLI::App& app) {
  auto options = std::make_shared<ParamsOptions>();
  auto* sub = app.add_subcommand("params", "Parameter and FLOP breakdown of one or more configs");
  sub->add_option("config", options->configs, "Config YAML file(s); several print one table")->required()->check(CLI::ExistingFile);
  sub->add_option("--set", options->overrides, "Override a key: dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  sub->add_flag("--json", options->json, "Print JSON (an object; an array for several configs)");
  sub->add_option("--seq-len", options->seq_len, "Sequence length for FLOPs (default model.max_seq_len)");
  return {sub, [options] { return run(*options); }};
}

}  // namespace ffnshape::cli
