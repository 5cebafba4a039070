// Experiment results: records from summary.json, intervals, results.csv and report.md.
#include "ffnshape/experiment/report.h"

#include "../common/text_file.h"
#include "profiles.h"
#include "sessions.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace ffnshape::experiment {
namespace {

std::string number(double v, const char* format = "%.4f") {
  if (std::isnan(v)) return "";
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string widths_text(const ModelConfig& m) {
  std::string out;
  for (int64_t l = 0; l < m.n_layers; ++l) {
    if (l) out += " ";
    out += std::to_string(m.ffn_hidden(l));
  }
  return out;
}

// The model a finished run really trained (its resolved config, with scheduled widths).
std::optional<ModelConfig> trained_model(const std::string& run_dir) {
  const auto path = fs::path(run_dir) / "config.yaml";
  if (!fs::exists(path)) return std::nullopt;
  try {
    return load_run_config(path.string()).model;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Zero-shot accuracies per arm: mean ± sd over the seeds' runs, acc and acc_norm of every task.
std::string task_table(const ExperimentSpec& spec, const std::vector<ArmPlan>& plans, const std::vector<RunRecord>& records) {
  if (spec.tasks.empty()) return "";
  std::ostringstream md;
  md << "\nZero-shot tasks (acc / acc_norm, mean ± sd over seeds):\n\n| arm |";
  for (const auto& task : spec.tasks) md << " " << fs::path(task).stem().string() << " |";
  md << "\n|---|";
  for (size_t i = 0; i < spec.tasks.size(); ++i) md << "---:|";
  md << "\n";
  auto with_sd = [](const Interval& i) {
    if (i.n == 0) return std::string("");
    return number(i.mean, "%.3f") + (i.n >= 2 ? " ± " + number(i.sd, "%.3f") : "");
  };
  for (const auto& p : plans) {
    md << "| " << p.spec.name << " |";
    for (const auto& task : spec.tasks) {
      std::vector<double> acc, acc_norm;
      for (const auto& r : records) {
        const auto it = r.tasks.find(fs::path(task).stem().string());
        if (r.arm != p.spec.name || !r.complete || it == r.tasks.end()) continue;
        acc.push_back(it->second.first);
        acc_norm.push_back(it->second.second);
      }
      md << " " << with_sd(mean_interval(acc)) << " / " << with_sd(mean_interval(acc_norm)) << " |";
    }
    md << "\n";
  }
  return md.str();
}

}  // namespace

namespace {

// Where the geometry schedules' profile came from.
std::string profile_sentence(const ExperimentSpec& spec) {
  const auto& profile = *spec.profile;
  std::string seeds, outside;
  for (auto seed : profile.seeds) {
    seeds += (seeds.empty() ? "" : ", ") + std::to_string(seed);
    if (std::count(spec.seeds.begin(), spec.seeds.end(), seed) == 0) outside += " " + std::to_string(seed);
  }
  std::string text = "Geometry schedules come from the work profile of " + profile.arm +
                     (profile.seeds.size() > 1 ? " seeds " : " seed ") + seeds;
  if (profile.samples > 1) text += " (" + std::to_string(profile.samples) + " token samples each)";
  if (is_pooled(profile)) text += ", pooled: per layer, the mean of each profile's share of its statistic";
  if (profile.seeds.size() == 1) return text + (outside.empty() ? " (one of the evaluated runs)." : ", a run outside the evaluated seeds.");
  return text + (outside.empty() ? "; all of them evaluated runs." : "; outside the evaluated seeds:" + outside + ".");
}

std::string widths_list(const std::vector<int64_t>& widths) {
  std::string text;
  for (auto w : widths) text += (text.empty() ? "" : " ") + std::to_string(w);
  return text;
}

// Each statistic the schedules follow: every layer's share, mean and 95% interval over the profiles.
std::string statistic_spread_table(const schedule::PooledProfile& pooled, const std::vector<ArmPlan>& plans) {
  std::set<std::string> statistics;
  for (const auto& p : plans) {
    if (schedule_needs_profile(p.spec.schedule)) statistics.insert(followed_statistic(p.spec.schedule));
  }
  const auto n = static_cast<int64_t>(pooled.sources.size());
  std::ostringstream md;
  md << "\nEach layer's share of the statistic (its value over the sum over layers), mean ± half-width of the 95% "
     << "interval over the " << n << " profiles [min, max]:\n\n| statistic |";
  for (int64_t l = 0; l < pooled.profile.n_layers; ++l) md << " layer " << l << " |";
  md << "\n|---|";
  for (int64_t l = 0; l < pooled.profile.n_layers; ++l) md << "---:|";
  md << "\n";
  for (const auto& name : statistics) {
    if (!pooled.work.count(name)) continue;
    md << "| " << name << " |";
    for (const auto& s : pooled.work.at(name)) {
      const double half = student_t_975(n - 1) * s.sd / std::sqrt(static_cast<double>(n));
      md << " " << number(s.mean, "%.3f") << " ± " << number(half, "%.3f") << " [" << number(s.min, "%.3f") << ", "
         << number(s.max, "%.3f") << "] |";
    }
    md << "\n";
  }
  return md.str();
}

// Pooled experiments: each schedule's widths from the pool and their range over the single
// profiles, with the stability figure and a warning past profile.stable_multiples.
std::string width_spread_section(const std::string& run_root, const ExperimentSpec& spec, const std::vector<ArmPlan>& plans) {
  const auto pool = read_pool(run_root, *spec.profile);
  if (!pool) return "";
  const auto spreads = arm_width_spreads(run_root, *pool, plans);
  if (spreads.empty()) return "";
  std::ostringstream md;
  md << statistic_spread_table(pool->pooled, plans);
  const auto count = pool->profiles.size();
  md << "\nWidth spread over the " << count << " pooled profiles (profiles/, profile.json): each layer's width from "
     << "the pool, and its range over the widths each single profile would have given.\n\n";
  md << "| arm | pooled widths | range per layer | largest change | stable |\n|---|---|---|---:|---|\n";
  std::vector<std::string> unstable;
  for (const auto& [arm, w] : spreads) {
    std::string ranges;
    for (size_t l = 0; l < w.low.size(); ++l) {
      ranges += (ranges.empty() ? "" : " ") + (w.low[l] == w.high[l] ? std::to_string(w.low[l])
                                                                     : std::to_string(w.low[l]) + "-" + std::to_string(w.high[l]));
    }
    const bool stable = w.largest_change() <= spec.profile->stable_multiples;
    if (!stable) unstable.push_back(arm);
    md << "| " << arm << " | " << widths_list(w.pooled) << " | " << ranges << " | " << w.largest_change() << " x "
       << w.multiple_of << " | " << (stable ? "yes" : "**no**") << " |\n";
  }
  md << "\nlargest change: the widest per-layer range, in multiples of ffn.multiple_of; stable: at most "
     << spec.profile->stable_multiples << " (profile.stable_multiples).\n";
  for (const auto& arm : unstable) {
    md << "\n**Warning:** the widths of " << arm << " move by more than " << spec.profile->stable_multiples
       << " multiples between single profiles: they depend on which run and tokens were profiled, so a "
       << "result of this arm is a result of its pooled profile, not of the rule alone.\n";
  }
  return md.str();
}

}  // namespace

RunRecord read_run_record(const std::string& arm, int64_t seed, const std::string& run_dir) {
  RunRecord r;
  r.arm = arm;
  r.seed = seed;
  r.run_dir = run_dir;
  std::ifstream in(fs::path(run_dir) / "summary.json");
  if (!in) return r;
  try {
    nlohmann::json j;
    in >> j;
    r.complete = j.value("complete", false);
    r.steps = j.value("steps", int64_t{0});
    auto get = [&](const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN; };
    r.val_loss = get("val_loss");
    r.val_ppl = get("val_ppl");
    r.tokens_per_s = get("tokens_per_s");
    r.wall_time_s = get("wall_time_s");
  } catch (const nlohmann::json::exception&) {
    r.complete = false;  // a damaged summary: the run is redone (resuming from its checkpoints)
  }
  std::ifstream tasks(fs::path(run_dir) / "tasks.json");
  const auto scores = nlohmann::json::parse(tasks, nullptr, /*allow_exceptions=*/false);
  if (scores.is_object()) {
    for (const auto& [name, s] : scores.items()) {
      if (s.is_object()) r.tasks[name] = {s.value("acc", NAN), s.value("acc_norm", NAN)};
    }
  }
  return r;
}

double student_t_975(int64_t dof) {
  static const double table[] = {12.706204736432, 4.302652729911, 3.182446305284, 2.776445105198, 2.570581836615,
                                 2.446911848792,  2.36462425101,  2.306004135033, 2.262157162741, 2.228138851965,
                                 2.200985160083,  2.178812829663, 2.160368656461, 2.144786687917, 2.131449545559,
                                 2.119905299221,  2.109815577833, 2.100922040241, 2.093024054408, 2.085963447266,
                                 2.079613844728,  2.073873067904, 2.068657610419, 2.063898561628, 2.059538552753,
                                 2.055529438643,  2.05183051648,  2.048407141795, 2.045229642133, 2.042272456301};
  if (dof < 1) return NAN;
  if (dof <= 30) return table[dof - 1];
  // Cornish-Fisher expansion around the normal quantile: within 1e-4 beyond 30 degrees of freedom.
  const double z = 1.959963984540054, n = static_cast<double>(dof);
  return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

int64_t seeds_for_power(double mean, double sd) {
  constexpr double kZ80 = 0.8416212335729143;  // the standard normal's 0.8 quantile
  if (!(sd > 0) || !(std::abs(mean) > 0) || !std::isfinite(sd) || !std::isfinite(mean)) return 0;
  const double effect = std::abs(mean) / sd;
  int64_t n = 2;
  while (effect * std::sqrt(static_cast<double>(n)) - student_t_975(n - 1) < kZ80 && n < 100000) ++n;
  return n;
}

Interval mean_interval(const std::vector<double>& values) {
  Interval out;
  out.n = static_cast<int64_t>(values.size());
  if (values.empty()) return out;
  out.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  if (values.size() < 2) return out;
  double ss = 0;
  for (double v : values) ss += (v - out.mean) * (v - out.mean);
  out.sd = std::sqrt(ss / static_cast<double>(values.size() - 1));
  out.half_width = student_t_975(out.n - 1) * out.sd / std::sqrt(static_cast<double>(out.n));
  return out;
}

Interval paired_interval(const std::map<int64_t, double>& arm, const std::map<int64_t, double>& reference) {
  std::vector<double> differences;
  for (const auto& [seed, value] : arm) {
    const auto it = reference.find(seed);
    if (it != reference.end() && std::isfinite(value) && std::isfinite(it->second)) differences.push_back(value - it->second);
  }
  return mean_interval(differences);
}

std::string describe_plans(const ExperimentSpec& spec, const std::vector<ArmPlan>& plans) {
  std::ostringstream out;
  const auto count = to_string(spec.budget.count);
  out << "experiment " << spec.name << ": budget " << (plans.empty() ? 0 : plans.front().budget) << " " << count
      << " parameters" << (spec.budget.reference.empty() ? "" : " (arm " + spec.budget.reference + ")") << ", tolerance "
      << spec.budget.tolerance * 100 << "%, seeds";
  for (auto s : spec.seeds) out << " " << s;
  out << "\n";
  for (const auto& p : plans) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-16s %14lld %s  %+.5f%%  attention %.1f%% / ffn %.1f%%%s\n", p.spec.name.c_str(),
                  static_cast<long long>(p.params), count, 100.0 * p.rel_error, 100.0 * p.counts.attention_share(),
                  100.0 * p.counts.ffn_share(), p.within_tolerance ? "" : "  MISSES THE BUDGET");
    out << line << "    " << describe_shape(p.config.model);
    if (!p.spec.schedule.empty()) out << ", schedule " << p.spec.schedule;
    for (const auto& [name, value] : p.dimensions) out << "; solved " << name << " = " << value;
    out << "\n";
    if (!p.within_tolerance) out << "    " << p.explanation << "\n";
  }
  return out.str();
}

void write_results_csv(const std::string& run_root, const ExperimentSpec& spec, const std::vector<ArmPlan>& plans,
                       const std::vector<RunRecord>& records) {
  std::ostringstream csv;
  csv << "experiment,arm,seed,run_dir,complete,steps,family,ffn_kind,k,d_model,n_layers,n_heads,head_dim,ffn_widths,"
         "params_total,params_non_embedding,attention,ffn,attention_share,ffn_share,budget,budget_count,rel_error,"
         "val_loss,val_ppl,tokens_per_s,wall_time_s";
  for (const auto& task : spec.tasks) {
    const auto name = fs::path(task).stem().string();
    csv << "," << name << "_acc," << name << "_acc_norm";
  }
  csv << "\n";
  for (const auto& r : records) {
    const ArmPlan* plan = nullptr;
    for (const auto& p : plans) {
      if (p.spec.name == r.arm) plan = &p;
    }
    if (!plan) continue;
    const auto model = trained_model(r.run_dir).value_or(plan->config.model);
    const auto& c = plan->counts;
    csv << spec.name << "," << r.arm << "," << r.seed << "," << r.run_dir << "," << (r.complete ? 1 : 0) << "," << r.steps
        << "," << to_string(model.family) << "," << to_string(model.ffn.kind) << "," << model.ffn.k << ","
        << model.d_model << "," << model.n_layers << "," << model.n_heads << "," << model.attn_head_dim() << ","
        << (model.ffn.schedule && model.ffn.widths.empty() ? "" : widths_text(model)) << "," << c.total() << ","
        << c.non_embedding() << "," << c.attention << "," << c.ffn << "," << number(c.attention_share(), "%.6f") << ","
        << number(c.ffn_share(), "%.6f") << "," << plan->budget << "," << to_string(spec.budget.count) << ","
        << number(plan->rel_error, "%.3e") << "," << number(r.val_loss, "%.6f") << "," << number(r.val_ppl, "%.4f")
        << "," << number(r.tokens_per_s, "%.1f") << "," << number(r.wall_time_s, "%.1f");
    for (const auto& task : spec.tasks) {
      const auto it = r.tasks.find(fs::path(task).stem().string());
      const auto scores = it == r.tasks.end() ? std::pair<double, double>(NAN, NAN) : it->second;
      csv << "," << number(scores.first, "%.6f") << "," << number(scores.second, "%.6f");
    }
    csv << "\n";
  }
  write_text_file((fs::path(run_root) / "results.csv").string(), csv.str());
}

namespace {

std::string hours_minutes(double seconds) {
  const auto minutes = static_cast<int64_t>(seconds / 60 + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%lld h %02lld min", static_cast<long long>(minutes / 60), static_cast<long long>(minutes % 60));
  return text;
}

// How many seeds would resolve each arm's measured gap to the reference (80% power, paired).
std::string power_line(const ExperimentSpec& spec, const std::vector<ArmPlan>& plans,
                       std::map<std::string, std::map<int64_t, double>>& loss) {
  std::string items;
  for (const auto& p : plans) {
    if (p.spec.name == spec.reference) continue;
    const auto d = paired_interval(loss[p.spec.name], loss[spec.reference]);
    if (const auto n = d.n >= 2 ? seeds_for_power(d.mean, d.sd) : 0) {
      items += (items.empty() ? "" : ", ") + p.spec.name + " " + std::to_string(n);
    }
  }
  if (items.empty()) return "";
  return "Seeds that would resolve each measured gap with 80% power (paired t-test at 5%, from the measured "
         "paired sd): " + items + ".\n";
}

// Where and how long the study trained: the hosts, runs side by side and threads per run of each
// invocation (sessions.jsonl), the study's wall time, and the runs' own time for comparison.
std::string hardware_section(const std::string& run_root, const std::vector<RunRecord>& records) {
  const auto sessions = read_sessions(run_root);
  double runs_s = 0;
  int64_t finished = 0;
  for (const auto& r : records) {
    runs_s += r.complete ? r.wall_time_s : 0;
    finished += r.complete ? 1 : 0;
  }
  std::ostringstream md;
  md << "\nHardware and time:\n\n";
  if (sessions.empty()) {
    md << "- not recorded (this run root predates sessions.jsonl)\n";
    return md.str();
  }
  std::set<std::string> seen;
  double wall_s = 0;
  int64_t trained = 0;
  for (const auto& s : sessions) {
    wall_s += s.wall_s;
    trained += s.runs_trained;
    const auto setup = s.host + "; " + (s.parallel > 1 ? std::to_string(s.parallel) + " runs side by side" : "one run at a time") +
                       ", " + (s.threads_per_run > 0 ? std::to_string(s.threads_per_run) : std::string("per-arm")) + " thread" +
                       (s.threads_per_run == 1 ? "" : "s") + " per run";
    if (seen.insert(setup).second) md << "- " << setup << "\n";
  }
  md << "- wall time of the study: " << hours_minutes(wall_s) << " over " << sessions.size() << " invocation"
     << (sessions.size() > 1 ? "s" : "") << " that trained " << trained << " run" << (trained == 1 ? "" : "s")
     << "; the finished runs' own training time adds up to " << hours_minutes(runs_s) << "\n";
  if (trained < finished) {
    md << "- " << finished - trained << " of the " << finished
       << " finished runs were trained by invocations that left no record (before sessions.jsonl, or copied in)\n";
  }
  return md.str();
}

}  // namespace

std::string write_report(const std::string& run_root, const ExperimentSpec& spec, const std::vector<ArmPlan>& plans,
                         const std::vector<RunRecord>& records) {
  std::map<std::string, std::map<int64_t, double>> loss;
  std::map<std::string, std::vector<double>> ppl, speed, wall;
  std::map<std::string, std::string> run_of;
  for (const auto& r : records) {
    if (!r.complete) continue;
    loss[r.arm][r.seed] = r.val_loss;
    ppl[r.arm].push_back(r.val_ppl);
    speed[r.arm].push_back(r.tokens_per_s);
    wall[r.arm].push_back(r.wall_time_s / 60);
    if (!run_of.count(r.arm)) run_of[r.arm] = r.run_dir;
  }
  std::ostringstream md;
  md << "# Experiment " << spec.name << "\n\n";
  md << "Budget: " << (plans.empty() ? 0 : plans.front().budget) << " " << to_string(spec.budget.count)
     << " parameters" << (spec.budget.reference.empty() ? "" : " (the count of arm " + spec.budget.reference + ")")
     << ", tolerance " << spec.budget.tolerance * 100 << "%. Seeds:";
  for (auto s : spec.seeds) md << " " << s;
  md << " (a seed sets both the initialisation and the data order). Base config: " << spec.base << ".";
  if (spec.profile) md << " " << profile_sentence(spec);
  md << "\n\n| arm | shape | params (" << to_string(spec.budget.count) << ") | attn / ffn | vs budget | val loss | val ppl | loss - " << spec.reference
     << " [95% CI] | tokens/s | min/run | runs |\n";
  md << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& p : plans) {
    const auto& name = p.spec.name;
    std::vector<double> losses;
    for (const auto& [seed, value] : loss[name]) losses.push_back(value);
    const auto l = mean_interval(losses);
    const auto pp = mean_interval(ppl[name]);
    const auto sp = mean_interval(speed[name]);
    std::string diff = "";
    if (name == spec.reference) {
      diff = "reference";
    } else {
      const auto d = paired_interval(loss[name], loss[spec.reference]);
      if (d.n >= 2) {
        diff = number(d.mean, "%+.4f") + " [" + number(d.mean - d.half_width, "%+.4f") + ", " +
               number(d.mean + d.half_width, "%+.4f") + "]";
      } else if (d.n == 1) {
        diff = number(d.mean, "%+.4f") + " (1 pair)";
      }
    }
    auto with_sd = [](const Interval& i, const char* format) {
      if (i.n == 0) return std::string("");
      return number(i.mean, format) + (i.n >= 2 ? " ± " + number(i.sd, format) : "");
    };
    std::string shape = describe_shape(p.config.model);
    if (!p.spec.schedule.empty()) shape += ", schedule " + p.spec.schedule;
    md << "| " << name << " | " << shape << " | " << p.params << " | " << number(100 * p.counts.attention_share(), "%.1f")
       << "% / " << number(100 * p.counts.ffn_share(), "%.1f") << "% | " << number(100 * p.rel_error, "%+.5f") << "% | "
       << with_sd(l, "%.4f") << " | " << with_sd(pp, "%.2f") << " | " << diff << " | " << number(sp.mean, "%.0f") << " | "
       << number(mean_interval(wall[name]).mean, "%.1f") << " | " << loss[name].size() << "/" << spec.seeds.size() << " |\n";
  }
  md << "\nval loss and perplexity: mean ± standard deviation over seeds. The difference to " << spec.reference
     << " is paired by seed (same data order); an interval that excludes 0 is a difference the seeds resolve.\n";
  md << power_line(spec, plans, loss);
  md << task_table(spec, plans, records);
  bool any_schedule = false;
  for (const auto& p : plans) any_schedule = any_schedule || !p.spec.schedule.empty();
  if (any_schedule) {
    md << "\nFFN widths per layer:\n\n";
    for (const auto& p : plans) {
      if (p.spec.schedule.empty() || !run_of.count(p.spec.name)) continue;
      if (const auto m = trained_model(run_of[p.spec.name])) md << "- " << p.spec.name << ": " << widths_text(*m) << "\n";
    }
  }
  if (spec.profile) md << width_spread_section(run_root, spec, plans);
  md << hardware_section(run_root, records);
  for (const auto* plot : {"val_curves.png", "final_loss.png", "paired_diff.png"}) {
    if (fs::exists(fs::path(run_root) / plot)) md << "\n![" << plot << "](" << plot << ")\n";
  }
  write_text_file((fs::path(run_root) / "report.md").string(), md.str());
  return md.str();
}

}  // namespace ffnshape::experiment
