// Results of an experiment: one record per run (read back from its summary.json), per-arm means with
// 95% intervals over seeds, paired differences against the reference arm, and the report files.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ffnshape/experiment/experiment.h"

namespace ffnshape::experiment {

struct RunRecord {
  std::string arm;
  int64_t seed = 0;
  std::string run_dir;
  bool complete = false;  // summary.json says the run reached train.steps
  int64_t steps = 0;
  double val_loss = std::numeric_limits<double>::quiet_NaN();
  double val_ppl = std::numeric_limits<double>::quiet_NaN();
  double tokens_per_s = std::numeric_limits<double>::quiet_NaN();
  double wall_time_s = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, std::pair<double, double>> tasks;  // task name -> (acc, acc_norm), from tasks.json
};

// The record of one run directory; complete = false when it has no (complete) summary.json.
RunRecord read_run_record(const std::string& arm, int64_t seed, const std::string& run_dir);

// Mean, sample standard deviation and the half-width of the 95% Student-t interval of the mean
// (NaN with fewer than two values).
struct Interval {
  double mean = std::numeric_limits<double>::quiet_NaN();
  double sd = std::numeric_limits<double>::quiet_NaN();
  double half_width = std::numeric_limits<double>::quiet_NaN();
  int64_t n = 0;
};
Interval mean_interval(const std::vector<double>& values);
// The interval of arm - reference over the seeds both have (pairs share a seed, so the seed's
// data order and initialisation noise cancel).
Interval paired_interval(const std::map<int64_t, double>& arm, const std::map<int64_t, double>& reference);
// The 0.975 quantile of Student's t with `dof` degrees of freedom.
double student_t_975(int64_t dof);
// The seeds a paired comparison needs to resolve a true difference of |mean| with paired sd `sd` at
// 80% power (two-sided 5% t-test; the normal approximation of the noncentral t, within one seed of
// the exact power). 0 when the gap or the sd is not positive and finite.
int64_t seeds_for_power(double mean, double sd);

// The plan as a table: solved dimensions, parameters, attention / FFN shares, error against the budget.
std::string describe_plans(const ExperimentSpec& spec, const std::vector<ArmPlan>& plans);

// RUN_ROOT/results.csv: one row per run (shape, parameters, budget error, losses, speed).
void write_results_csv(const std::string& run_root, const ExperimentSpec& spec, const std::vector<ArmPlan>& plans,
                       const std::vector<RunRecord>& records);
// RUN_ROOT/report.md: one row per arm, with the plots that exist in RUN_ROOT; returns the markdown.
std::string write_report(const std::string& run_root, const ExperimentSpec& spec, const std::vector<ArmPlan>& plans,
                         const std::vector<RunRecord>& records);

}  // namespace ffnshape::experiment
