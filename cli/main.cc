// clustersim: command-line entry. Results go to stdout, context and errors to stderr.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/commands.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "models/scenario.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {
// A run builds and frees one op graph per representative step (hundreds of MB for DeepSeek-V3):
// by default glibc maps each large block afresh and returns freed memory to the system, so every
// step faults its pages in again (1.3-1.9 s of system time in a 9 s run). Large blocks from the
// heap (up to glibc's 32 MiB ceiling) and no trimming keep the memory for the next step: 7.7-7.8 s
// against 9.0, 360 MB peak against 351 (README, "Sweep speed"). Results do not depend on it.
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

// `--graph-limit N`: the ops and transfers a scenario may expand to (models::GraphLimits).
void add_graph_limit(CLI::App* cmd, int64_t& limit) {
  cmd->add_option("--graph-limit", limit,
                  "Ops and dependencies, and point-to-point transfers, the scenario may expand to (default " +
                      std::to_string(cs::models::kMaxExpandedOps) + " each; about 45 bytes of memory an op in a large step)")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000'000}));
}
}  // namespace

int main(int argc, char** argv) {
  using namespace cs::cli;
  keep_freed_memory();
  CLI::App app{"clustersim: discrete-event simulator and performance model of LLM-training clusters"};
  app.set_version_flag("--version", std::string("clustersim ") + version());
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  clustersim run scenarios/gemm-a2a-overlap-h800.yaml\n"
      "  clustersim run scenarios/deepseek-v3-pretrain-h800.yaml --report report.html\n"
      "  clustersim check scenarios/*.yaml\n"
      "  clustersim sweep scenarios/deepseek-v3-pretrain-h800.yaml --comm-sms 0:48:4\n"
      "  clustersim hw show h800-2048\n"
      "  clustersim model show deepseek-v3\n"
      "  clustersim schedule show dualpipe --stages 8 --microbatches 20\n"
      "Exit codes: 0 success, 2 bad input, 1 internal error.");

  RunArgs run;
  CLI::App* run_cmd = app.add_subcommand("run", "Simulate a scenario and print its result");
  run_cmd->add_option("FILE", run.file, "Scenario YAML file")->required();
  run_cmd->add_option("--format", run.format, "Output format")
      ->check(CLI::IsMember({"console", "json"}))
      ->capture_default_str();
  run_cmd->add_option("--out", run.out, "Write the result to this file (atomically) instead of stdout");
  run_cmd->add_option("--trace", run.trace, "Write a Perfetto/Chrome trace (JSON) to this file");
  run_cmd->add_option("--report", run.report, "Write a self-contained HTML report to this file");
  add_graph_limit(run_cmd, run.graph_limit);
  run_cmd->footer(
      "Examples:\n"
      "  clustersim run scenarios/gemm-a2a-overlap-h800.yaml --format json --out result.json \\\n"
      "      --trace trace.json     # then open trace.json in ui.perfetto.dev\n"
      "  clustersim run scenarios/deepseek-v3-pretrain-h800.yaml --report report.html");
  run.argv.assign(argv, argv + argc);

  std::string report_in, report_out;
  CLI::App* report_cmd = app.add_subcommand("report", "Render a saved result (run --format json) as an HTML report");
  report_cmd->add_option("RESULT", report_in, "A result JSON file written by clustersim run --format json")->required();
  report_cmd->add_option("-o,--out", report_out, "The HTML file written (atomically)")->required();
  report_cmd->footer(
      "Example:\n"
      "  clustersim run scenarios/deepseek-v3-pretrain-h800.yaml --format json --out result.json\n"
      "  clustersim report result.json -o report.html");

  SweepArgs sweep;
  CLI::App* sweep_cmd = app.add_subcommand(
      "sweep", "Run a scenario at many points (its sweep: section, or --comm-sms) and find the best");
  sweep_cmd->add_option("FILE", sweep.file, "Scenario or sweep YAML file (scenarios/README.md, Sweeps)")->required();
  sweep_cmd->add_option("--comm-sms", sweep.comm_sms,
                        "Also sweep the communication SMs: FROM:TO:STEP or a list (0: no reserved partition); "
                        "a file without a sweep section sweeps 0:48:4");
  sweep_cmd->add_option("--comm-partition", sweep.comm_partition,
                        "The partition comm_sms sizes (default: the model workload's, else 'comm')");
  sweep_cmd->add_option("--compute-partition", sweep.compute_partition,
                        "The partition its SMs come from (default: the model workload's, else 'compute')");
  sweep_cmd->add_option("--format", sweep.format, "Output format (default: console, or the -o file's extension)")
      ->check(CLI::IsMember({"console", "csv", "json"}));
  sweep_cmd->add_option("-o,--out", sweep.out,
                        "Results file (.csv or .json), written as points finish; rerun to resume a killed sweep");
  sweep_cmd->add_option("--objective", sweep.objective, "What 'best' means (default: the sweep's, else gpu_hours "
                                                        "with a training run, else step_time)")
      ->check(CLI::IsMember({"step_time", "gpu_hours", "days", "cost", "tokens_per_s_per_gpu"}));
  sweep_cmd->add_option("--shard", sweep.shard, "Run only shard I of N (I/N, 0 <= I < N): every N-th point from the I-th");
  sweep_cmd->add_option("--merge", sweep.merge, "Results files of this sweep's shards, taken as done")->expected(1, -1);
  add_graph_limit(sweep_cmd, sweep.graph_limit);
  sweep_cmd->add_flag("--list", sweep.list, "Print the points (and why any are skipped); run nothing");
  sweep_cmd->add_option("-j,--jobs", sweep.jobs, "Points simulated at once (0: one per hardware thread)")
      ->check(CLI::Range(0, 1024))->capture_default_str();
  sweep_cmd->add_flag("--no-training", sweep.no_training, "Skip the training-run prediction of each point");
  sweep_cmd->add_option("--report", sweep.report,
                        "Write the HTML report of the best point with the sweep's chart and answers (one more run)");
  sweep.argv.assign(argv, argv + argc);
  sweep_cmd->footer(
      "Examples:\n"
      "  clustersim sweep scenarios/sweeps/deepseek-v3-sm-partition.yaml -o sm.csv\n"
      "  clustersim sweep scenarios/gemm-a2a-overlap-h800.yaml --comm-sms 8,16,20,24,32 --format json\n"
      "  mpirun -np 4 clustersim sweep scenarios/sweeps/deepseek-v3-schedule-pp.yaml -o pp.json\n"
      "  clustersim sweep FILE --shard 0/2 -o s0.csv; clustersim sweep FILE --shard 1/2 -o s1.csv\n"
      "  clustersim sweep FILE --merge s0.csv s1.csv -o all.csv");

  std::vector<std::string> files;
  int64_t check_graph_limit = 0;
  CLI::App* check_cmd = app.add_subcommand("check", "Validate scenario files without running them");
  check_cmd->add_option("FILE", files, "Scenario YAML files")->required()->expected(1, -1);
  add_graph_limit(check_cmd, check_graph_limit);
  check_cmd->footer(
      "Example:\n"
      "  clustersim check scenarios/*.yaml   # prints FILE:LINE:COL: message for each error");

  CLI::App* hw_cmd = app.add_subcommand("hw", "The hardware catalog: GPUs, NICs, switches, nodes, cluster presets");
  hw_cmd->require_subcommand(1);
  CLI::App* hw_list_cmd = hw_cmd->add_subcommand("list", "List every catalog entry");
  std::string hw_name;
  CLI::App* hw_show_cmd = hw_cmd->add_subcommand("show", "Show one entry's figures and sources (a preset: its built fabric)");
  hw_show_cmd->add_option("NAME", hw_name, "A GPU, NIC, switch, node type or preset name")->required();
  hw_cmd->footer(
      "Examples:\n"
      "  clustersim hw list\n"
      "  clustersim hw show h800-2048    # switches, cables, links and bisection of DeepSeek-V3's cluster");
  hw_list_cmd->footer("Example:\n  clustersim hw list");
  hw_show_cmd->footer("Example:\n  clustersim hw show h800-2048");

  CLI::App* model_cmd = app.add_subcommand("model", "The model zoo: parameters, FLOPs per token and per-layer ops");
  model_cmd->require_subcommand(1);
  CLI::App* model_list_cmd = model_cmd->add_subcommand("list", "List the built-in models");
  ModelShowArgs model;
  CLI::App* model_show_cmd = model_cmd->add_subcommand("show", "Parameters, FLOPs per token and op tables of a model");
  model_show_cmd->add_option("NAME", model.name, "A built-in model name, or a model YAML file")->required();
  model_show_cmd->add_option("--seq", model.seq_len, "Sequence length")->check(CLI::Range(1, 1 << 24))->capture_default_str();
  model_show_cmd->add_option("--micro-batch", model.micro_batch, "Sequences per micro-batch (op tables)")
      ->check(CLI::Range(1, 1 << 16))->capture_default_str();
  model_show_cmd->add_option("--tp", model.tp, "Tensor-parallel degree (op tables)")->check(CLI::Range(1, 1024))->capture_default_str();
  model_show_cmd->add_option("--ep", model.ep, "Expert-parallel degree (op tables)")->check(CLI::Range(1, 1 << 16))->capture_default_str();
  model_show_cmd->add_flag("--bf16", model.bf16, "BF16 linears instead of DeepSeek's FP8 recipe");
  model_show_cmd->add_option("--format", model.format, "Output format")
      ->check(CLI::IsMember({"console", "json"}))->capture_default_str();
  model_cmd->footer(
      "Examples:\n"
      "  clustersim model list\n"
      "  clustersim model show deepseek-v3 --ep 64\n"
      "  clustersim model show my-model.yaml --format json");
  model_list_cmd->footer("Example:\n  clustersim model list");
  model_show_cmd->footer("Example:\n  clustersim model show deepseek-v3 --seq 4096 --ep 64");

  CLI::App* schedule_cmd = app.add_subcommand("schedule", "Pipeline schedules: 1F1B, interleaved, ZB1P, DualPipe, DualPipeV");
  schedule_cmd->require_subcommand(1);
  ScheduleShowArgs sched;
  CLI::App* schedule_show_cmd =
      schedule_cmd->add_subcommand("show", "Print a schedule as a grid (uniform chunk times) with its bubbles");
  schedule_show_cmd->add_option("KIND", sched.kind, "1f1b, interleaved, zb1p, dualpipe or dualpipev")->required();
  schedule_show_cmd->add_option("--stages", sched.stages, "Pipeline stages PP (DualPipeV: on PP/2 devices)")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  schedule_show_cmd->add_option("--microbatches", sched.micro_batches, "Micro-batches per step (DualPipe: both directions)")
      ->check(CLI::Range(1, 65536))->capture_default_str();
  schedule_show_cmd->add_option("--virtual", sched.virtual_stages, "Virtual stages per rank (interleaved; default 2)")
      ->check(CLI::Range(1, 26));
  schedule_show_cmd->add_option("--times", sched.times, "Chunk times F,B,W,F&B in whole microseconds (B: full backward)")
      ->delimiter(',')->expected(4)->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000}))->capture_default_str();
  schedule_show_cmd->add_option("--trace", sched.trace, "Write a Perfetto/Chrome trace (JSON) to this file");
  schedule_show_cmd->add_option("--json", sched.json,
                                "Write the schedule as data (each rank's tasks, what each needs) to this file");
  schedule_cmd->footer(
      "Examples:\n"
      "  clustersim schedule show dualpipe --stages 8 --microbatches 20\n"
      "  clustersim schedule show interleaved --stages 4 --microbatches 8 --virtual 2 --trace il.json");
  schedule_show_cmd->footer("Example:\n  clustersim schedule show zb1p --stages 4 --microbatches 8 --times 1,2,1,2");

  CLI::App* cal_cmd = app.add_subcommand("calibrate", "Fit hardware profiles to kernel measurements and validate them");
  cal_cmd->require_subcommand(1);
  CalibrateArgs cal;
  CLI::App* cal_fit_cmd = cal_cmd->add_subcommand("fit", "Fit a profile (GEMM and all-to-all models) to kernel JSON");
  cal_fit_cmd->add_option("DATA", cal.data, "cs_fp8_gemm and cs_all_to_all JSON files")->required()->expected(1, -1);
  cal_fit_cmd->add_option("-o,--out", cal.out, "The profile YAML written (atomically)")->required();
  cal_fit_cmd->add_option("--gpu", cal.gpu, "Catalog GPU (default: the one the measurements name)");
  cal_fit_cmd->add_option("--holdout-every", cal.holdout_every, "Hold every N-th shape out of the fit (0: none)")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  cal_fit_cmd->add_option("--sustained-clock-log", cal.clocks.sustained,
                          "nvidia-smi clock log taken under sustained load (e.g. the overlap bench's), for the clocks section");
  cal_fit_cmd->add_option("--gemm-clock-log", cal.clocks.gemm_sweep,
                          "nvidia-smi (dmon) clock log taken while the GEMM sweep ran, for the clocks section");
  cal_fit_cmd->add_option("--fa2-clock-log", cal.clocks.attention_fa2,
                          "nvidia-smi clock log taken while FlashAttention-2's calls ran (attention_bench.py --long), "
                          "for the attention_fa2 section's fit_MHz");
  CLI::App* cal_val_cmd = cal_cmd->add_subcommand("validate", "Predict measured cases with the simulator: measured, predicted, error");
  cal_val_cmd->add_option("PROFILE", cal.profile, "A bundled profile (" + cs::hw::bundled_profile_names() + ") or a profile file")
      ->required();
  cal_val_cmd->add_option("DATA", cal.data, "Kernel JSON files")->required()->expected(1, -1);
  cal_val_cmd->add_option("--holdout-every", cal.holdout_every, "As given to fit, to mark the held-out cases")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  CLI::App* cal_carry_cmd = cal_cmd->add_subcommand("carry", "Carry a profile to another GPU of the same chip by datasheet ratios");
  cal_carry_cmd->add_option("PROFILE", cal.profile, "A bundled profile or a profile file")->required();
  cal_carry_cmd->add_option("--to", cal.gpu, "The catalog GPU it is carried to")->required();
  cal_carry_cmd->add_option("-o,--out", cal.out, "The profile YAML written (atomically)")->required();
  cal_carry_cmd->add_option("--measured", cal.data,
                            "The target GPU's own kernels/torch/memory_bound_forms.py JSON: its memory-bound forms' "
                            "rates and launch gap replace the carried ones; kernel_clock.py JSON of the target or of a "
                            "GPU of its chip and HBM bandwidth: the shares of kernels' time that follow the SM clock");
  CLI::App* cal_pub_cmd =
      cal_cmd->add_subcommand("published", "Predict the published H800 tables (DeepGEMM, DeepEP) with a profile");
  cal_pub_cmd->add_option("PROFILE", cal.profile, "A bundled profile (h800) or an H800 profile file")->required();
  CLI::App* cal_dg_cmd = cal_cmd->add_subcommand(
      "deepgemm", "Refit an H800 profile's FP8 GEMM tile time and MMA rates to DeepGEMM's published table");
  cal_dg_cmd->add_option("PROFILE", cal.profile, "A bundled profile (h800) or an H800 profile file")->required();
  cal_dg_cmd->add_option("-o,--out", cal.out, "The profile YAML written (atomically)")->required();
  CLI::App* cal_dep_cmd = cal_cmd->add_subcommand(
      "deepep", "Pace an H800 profile's internode all-to-all as DeepEP's published table shows its kernels");
  cal_dep_cmd->add_option("PROFILE", cal.profile, "A bundled profile (h800) or an H800 profile file")->required();
  cal_dep_cmd->add_option("-o,--out", cal.out, "The profile YAML written (atomically)")->required();
  cal_cmd->footer(
      "Examples:\n"
      "  clustersim calibrate fit calibrate/data/h200/fp8_gemm.json calibrate/data/h200/all_to_all.json -o h200.yaml\n"
      "  clustersim calibrate validate h200.yaml calibrate/data/h200/fp8_gemm.json "
      "calibrate/data/h200/all_to_all.json\n"
      "  clustersim calibrate carry h200.yaml --to h800 -o h800.yaml\n"
      "  clustersim calibrate published h800.yaml\n"
      "  clustersim calibrate deepep h800 -o h800.yaml\n"
      "  clustersim calibrate deepgemm h800 -o hw/profiles/h800-deepgemm.yaml");
  CompareArgs cmp;
  CLI::App* compare_cmd =
      app.add_subcommand("compare", "Line up a scenario's simulated kernels with a measured run, class by class");
  compare_cmd->add_option("SCENARIO", cmp.scenario, "Scenario YAML file")->required();
  compare_cmd->add_option("--measured", cmp.measured, "A PyTorch profiler (Kineto) trace or cs_overlap JSON")->required();
  compare_cmd->add_option("--format", cmp.format, "Output format")
      ->check(CLI::IsMember({"console", "json"}))
      ->capture_default_str();
  compare_cmd->footer(
      "Example:\n"
      "  clustersim compare scenarios/dense-step-h200.yaml --measured calibrate/data/h200/kineto_dense_step.json");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "clustersim: " << e.what() << "\nRun with --help for usage.\n";
    return 2;
  }

  try {
    if (*run_cmd) return cmd_run(run);
    if (*report_cmd) return cmd_report(report_in, report_out);
    if (*check_cmd) return cmd_check(files, check_graph_limit);
    if (*sweep_cmd) return cmd_sweep(sweep);
    if (*compare_cmd) return cmd_compare(cmp);
    if (*cal_fit_cmd) return cmd_calibrate_fit(cal);
    if (*cal_val_cmd) return cmd_calibrate_validate(cal);
    if (*cal_carry_cmd) return cmd_calibrate_carry(cal);
    if (*cal_pub_cmd) return cmd_calibrate_published(cal);
    if (*cal_dg_cmd) return cmd_calibrate_deepgemm(cal);
    if (*cal_dep_cmd) return cmd_calibrate_deepep(cal);
    if (*hw_list_cmd) return cmd_hw_list();
    if (*hw_show_cmd) return cmd_hw_show(hw_name);
    if (*model_list_cmd) return cmd_model_list();
    if (*model_show_cmd) return cmd_model_show(model);
    if (*schedule_show_cmd) return cmd_schedule_show(sched);
  } catch (const cs::hw::UserError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustersim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 1;
}
