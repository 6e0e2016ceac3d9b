// The broken-scenario corpus (tests/broken/): each file holds one defect, and loading it (parse,
// validate, resolve `after`) must fail with a UserError at exactly the expected FILE:LINE:COL and
// message, both through the library and through `clustersim check` (exit code 2, nothing on
// stdout, never a crash). Every file of the folder must have a row in the table below.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hw/user_error.h"
#include "hw/yaml_reader.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "test_support.h"

namespace cs::models::CS_TEST_FILE {  // unique per file: unity batches (tests/CMakeLists.txt)
namespace {

struct Expected {
  const char* file;
  int line, col;
  const char* message;
  bool exact;  // false: `message` is a distinctive part of the message (which embeds long text)
};

Expected exact(const char* f, int l, int c, const char* m) { return {f, l, c, m, true}; }
Expected part(const char* f, int l, int c, const char* m) { return {f, l, c, m, false}; }

const std::vector<Expected>& corpus() {
  static const std::vector<Expected> rows = {
      // Keys.
      exact("unknown_key.yaml", 31, 7,
            "unknown key 'priority' in 'workload.streams[1]'; valid keys: name, gpus, partition, ops"),
      exact("typo_key.yaml", 31, 7, "unknown key 'partiton' in 'workload.streams[1]'; did you mean 'partition'?"),
      exact("wrong_case_key.yaml", 13, 1, "unknown key 'Cost_model' in the top level; did you mean 'cost_model'?"),
      exact("duplicate_key.yaml", 26, 11,
            "duplicate key 'repeat' in 'workload.streams[0].ops[0]' (first at line 25, column 11)"),
      exact("duplicate_partition.yaml", 11, 43,
            "duplicate key 'compute' in 'cluster.sm_partitions' (first at line 11, column 19)"),
      exact("merge_key.yaml", 40, 7,
            "unknown key '<<' in 'workload.streams[2]'; valid keys: name, gpus, partition, ops"),
      exact("complex_key.yaml", 13, 7, "a key in 'cluster.sm_partitions' must be a plain name, found a list"),
      // Missing keys and values: a missing key is reported at the map that lacks it.
      exact("missing_key_cluster.yaml", 5, 1, "missing required key 'cluster' in the top level"),
      exact("missing_key_gpus.yaml", 9, 3, "missing required key 'gpus' in 'cluster'"),
      exact("missing_schema_version.yaml", 5, 1, "missing required key 'schema_version' in the top level"),
      exact("missing_after_gpu.yaml", 45, 19,
            "missing required key 'gpu' in 'workload.streams[2].ops[0].after[0]'"),
      // Null values: a key without a value is reported at the key, not at the token that follows
      // it (yaml-cpp 0.7 gives the empty value the next token's mark).
      exact("cluster_empty.yaml", 8, 1,
            "'cluster' must be a map with keys preset, gpu, gpus, node, nodes, nic, switch, sm_partitions, fabric, "
            "overrides, found an empty value"),
      exact("null_value.yaml", 9, 3, "'cluster.gpu' must be a string, found an empty value"),
      exact("op_kind_empty.yaml", 23, 11,
            "'workload.streams[0].ops[0].gemm' must be a map with keys m, n, k, dtype, groups, found an "
            "empty value"),
      // An empty list item is reported at its '-', not at the next item.
      exact("empty_list_item.yaml", 33, 9,
            "'workload.streams[1].ops[0]' must be a map with keys gemm, compute, all_to_all, all_reduce, "
            "reduce_scatter, all_gather, send, repeat, id, after, label, found an empty value"),
      // Types.
      exact("wrong_type_gpus.yaml", 10, 9, "'cluster.gpus' must be an integer, found 'eight'"),
      exact("quoted_number.yaml", 23, 30, "'workload.streams[0].ops[0].gemm.n' must be an integer, found '4096'"),
      // An explicit !!str tag makes a string, not a number (as the '!' tag of a quoted scalar does).
      exact("string_tag_number.yaml", 10, 9, "'cluster.gpus' must be an integer, found '8'"),
      exact("bool_for_number.yaml", 25, 19, "'workload.streams[0].ops[0].repeat' must be an integer, found 'true'"),
      exact("float_for_integer.yaml", 10, 9, "'cluster.gpus' must be an integer, found '8.5'"),
      exact("string_for_list.yaml", 32, 12, "'workload.streams[1].ops' must be a list, found 'all_to_all'"),
      exact("partitions_as_list.yaml", 11, 18,
            "'cluster.sm_partitions' must be a map with partition names and SM counts, e.g. {compute: 112, "
            "comm: 20}, found a list"),
      part("multiline_string_for_number.yaml", 10, 9, "'cluster.gpus' must be an integer, found 'eight GPUs,"),
      part("long_utf8_value.yaml", 10, 9,
           "'cluster.gpus' must be an integer, found 'eight H800 GPUs on one HGX board, ea"),
      // Ranges.
      exact("zero_gpus.yaml", 10, 9, "'cluster.gpus' must be between 1 and 65536, found 0"),
      exact("negative_bandwidth.yaml", 12, 40, "'cluster.fabric.link_bw_GBps' must be greater than 0, found -200"),
      exact("nan_latency.yaml", 12, 58, "'cluster.fabric.link_lat_ns' must be a number, found '.nan'"),
      exact("zero_comm_bw_per_sm.yaml", 15, 24, "'cost_model.comm_bw_per_sm_GBps' must be greater than 0, found 0"),
      // Calibrated profiles.
      exact("profile_other_gpu.yaml", 12, 12,
            "profile 'hw/profiles/h200.yaml' is calibrated for h200, but the cluster's GPUs are h800 (carry it over "
            "with `clustersim calibrate carry PROFILE --to h800 -o FILE`)"),
      part("profile_missing_file.yaml", 12, 12,
           "broken/profiles/nowhere.yaml' (relative paths start at the scenario's folder)"),
      exact("profile_unknown_name.yaml", 12, 12,
            "no calibrated profile 'b200' (bundled: h100, h200, h800, h800-deepgemm; or give a file path)"),
      exact("profile_with_roofline.yaml", 12, 12, "'profile' applies to kind 'calibrated'"),
      exact("comm_bw_with_profile.yaml", 12, 24,
            "'comm_bw_per_sm_GBps' applies to kind 'roofline'; a calibrated profile has its own measured copy rate"),
      exact("sm_partition_too_large.yaml", 11, 28, "'cluster.sm_partitions.compute' must be between 0 and 132, found 140"),
      exact("partitions_sum_too_large.yaml", 11, 39, "SM partitions add up to 140 SMs, more than the 132 SMs of the GPU (h800)"),
      // Columns count bytes (as yaml-cpp's marks do): two 2-byte letters precede the error.
      exact("non_ascii_before_error.yaml", 11, 57, "SM partitions add up to 142 SMs, more than the 132 SMs of the GPU (h800)"),
      exact("partitions_empty.yaml", 11, 18, "'cluster.sm_partitions' names no partition"),
      exact("repeat_zero.yaml", 25, 19, "'workload.streams[0].ops[0].repeat' must be between 1 and 10000000, found 0"),
      exact("negative_size.yaml", 33, 34,
            "'workload.streams[1].ops[0].all_to_all.size_MiB' must be at least 0, found -128"),
      exact("huge_number.yaml", 33, 34,
            "'workload.streams[1].ops[0].all_to_all.size_MiB' must be at most 9.53674e+08, found 2e9"),
      // An integer beyond 64 bits is out of range, not "not an integer".
      exact("integer_overflow.yaml", 23, 21,
            "'workload.streams[0].ops[0].gemm.m' must be between 1 and 2147483648, found 99999999999999999999"),
      exact("gemm_dim_too_large.yaml", 23, 39,
            "'workload.streams[0].ops[0].gemm.k' must be between 1 and 2147483648, found 4294967296"),
      exact("zero_compute.yaml", 26, 20, "a compute op needs gflop or hbm_MiB above zero"),
      exact("schema_version_wrong.yaml", 5, 17, "schema_version 2 is not supported; this clustersim reads version 1"),
      exact("too_many_ops.yaml", 19, 7,
            "the workload expands to more than 10000000 ops and dependencies (GPUs x (repeat + after)); --graph-limit "
            "of clustersim run, sweep and check raises the limit"),
      // Choices.
      exact("unknown_gpu.yaml", 9, 8, "'cluster.gpu' must be one of h100, h200, h800, found 'b200'; did you mean 'h200'?"),
      exact("unknown_partition.yaml", 31, 18,
            "'workload.streams[1].partition' must be one of compute, comm, found 'comms'; did you mean 'comm'?"),
      exact("wrong_dtype.yaml", 23, 52,
            "'workload.streams[0].ops[0].gemm.dtype' must be one of fp8, bf16, fp16, fp32, found 'fp4'; did you "
            "mean 'fp8'?"),
      exact("unknown_fabric_kind.yaml", 12, 18,
            "'cluster.fabric.kind' must be one of switch, multi_plane_fat_tree, multi_rail_fat_tree, three_layer_fat_tree, "
            "found 'fat_tree'"),
      exact("fabric_option_for_switch.yaml", 12, 49, "'oversubscription' applies to the fat-tree fabrics, not to 'switch'"),
      exact("workload_kind_wrong.yaml", 17, 9, "'workload.kind' must be one of ops, model, found 'pipeline'"),
      exact("pipeline_p2p_unknown.yaml", 15, 53,
            "'workload.pipeline.p2p' must be one of sms, copy_engine, found 'dma'; did you mean 'sms'?"),
      // Copy-engine sends and partitions of 0 SMs.
      exact("pipeline_copy_engine_across_nodes.yaml", 16, 53,
            "copy_engine sends stage boundaries between GPUs of one node (peer copies over NVLink), but pipeline "
            "ranks 0 and 1 sit on GPUs 0 and 8 of different nodes (8 GPUs each); use p2p: sms"),
      exact("compute_partition_zero_sms.yaml", 9, 28, "the compute partition 'compute' has 0 SMs: give it SMs"),
      exact("ops_stream_zero_sm_partition.yaml", 20, 18,
            "partition 'comm' has 0 SMs (cluster.sm_partitions): the kernels of stream 'all_reduce' would never run"),
      // Ops.
      exact("op_two_kinds.yaml", 27, 20, "'gemm' and 'compute' cannot both be given in 'workload.streams[0].ops[1]'"),
      exact("op_no_kind.yaml", 26, 11,
            "'workload.streams[0].ops[1]' needs one of gemm, compute, all_to_all, all_reduce, reduce_scatter, "
            "all_gather, send"),
      exact("size_both_units.yaml", 33, 51,
            "'size_MiB' and 'size_bytes' cannot both be given in 'workload.streams[1].ops[0].all_to_all'"),
      exact("size_missing.yaml", 33, 23, "'workload.streams[1].ops[0].all_to_all' needs one of size_MiB, size_bytes"),
      exact("send_to_self.yaml", 43, 22, "GPU 3 runs this stream and cannot send to itself"),
      exact("send_peer_offset_zero.yaml", 43, 31, "peer_offset 0 would send to the same GPU"),
      exact("send_both_targets.yaml", 43, 38,
            "'to' and 'peer_offset' cannot both be given in 'workload.streams[2].ops[0].send'"),
      exact("op_id_with_space.yaml", 27, 15, "an op id must be a non-empty name without spaces or '@'"),
      // Streams and GPU lists.
      exact("duplicate_stream_name.yaml", 39, 7, "a stream named 'all_to_all' is already defined"),
      exact("empty_stream_name.yaml", 39, 13, "a stream name cannot be empty"),
      exact("gpu_index_out_of_range.yaml", 40, 35, "'workload.streams[2].gpus[7]' must be between 0 and 7, found 8"),
      exact("gpu_listed_twice.yaml", 40, 35, "GPU 5 is listed twice"),
      exact("gpu_list_empty.yaml", 40, 13, "'workload.streams[2].gpus' lists no GPU"),
      exact("gpus_not_all.yaml", 30, 13,
            "'workload.streams[1].gpus' must be \"all\", a range such as \"0-63\", or a list of GPU indices"),
      exact("stream_no_ops.yaml", 22, 12, "stream 'gemm' has no ops"),
      exact("streams_empty.yaml", 18, 12, "'workload.streams' lists no stream"),
      // Dependencies (found by build_op_workload).
      exact("after_unknown_id.yaml", 38, 19, "'after' names op 'dispach', but no op with that id runs on GPU 0"),
      exact("after_gpu_out_of_range.yaml", 45, 38,
            "'workload.streams[2].ops[0].after[0].gpu' must be between 0 and 7, found 9"),
      exact("after_wrong_gpu.yaml", 45, 85, "'after' names op 'ring_shift', but no op with that id runs on GPU 1"),
      exact("after_self.yaml", 38, 19, "op 'combine' cannot wait for itself"),
      exact("dependency_cycle.yaml", 26, 19,
            "dependency cycle: op 'up_proj' waits, through 'after', for ops that wait for it"),
      exact("duplicate_op_id.yaml", 36, 11, "op id 'dispatch' is already used on GPU 0 (line 33)"),
      exact("duplicate_op_id_across_streams.yaml", 43, 11, "op id 'combine' is already used on GPU 0 (line 36)"),
      // YAML syntax and document structure.
      exact("syntax_unclosed_bracket.yaml", 12, 9, "YAML syntax error: end of map flow not found"),
      exact("syntax_bad_indentation.yaml", 27, 10, "YAML syntax error: end of sequence not found"),
      exact("syntax_tab_indentation.yaml", 10, 1, "YAML syntax error: illegal tab when looking for indentation"),
      // yaml-cpp 0.7 accepts a double-quoted string left open up to the end of the file (when the
      // file ends with a newline): the prescan refuses it at its opening quote.
      exact("syntax_unterminated_quote.yaml", 7, 14, "a quoted string starting here is never closed"),
      // A block scalar is text: its quotes, a comma starting its line and its brackets are no error.
      exact("quote_unclosed_after_block_scalar.yaml", 44, 18, "a quoted string starting here is never closed"),
      // yaml-cpp 0.7 can loop forever on a ',' where a token starts outside brackets.
      exact("stray_comma_after_list.yaml", 40, 25, "YAML syntax error: ',' outside [ ] or { }"),
      // CRLF line ends read as LF, even a last one cut to its '\r' (yaml-cpp 0.7 fails on that '\r'
      // after a flow collection): the error is at the same LINE:COL as in the LF twin.
      exact("crlf_typo_key.yaml", 22, 7, "unknown key 'partiton' in 'workload.streams[0]'; did you mean 'partition'?"),
      exact("multiple_documents.yaml", 46, 1, "more than one YAML document; a file holds one"),
      exact("top_level_list.yaml", 5, 1,
            "the top level must be a map with keys schema_version, name, description, cluster, cost_model, "
            "workload, training, sweep, found a list"),
      exact("scalar_top_level.yaml", 3, 1,
            "the top level must be a map with keys schema_version, name, description, cluster, cost_model, "
            "workload, training, sweep, found 'moe-slice-h800'"),
      exact("empty.yaml", 1, 1, "the file is empty; a scenario needs schema_version, name, cluster and workload"),
      exact("comments_only.yaml", 1, 1,
            "the file is empty; a scenario needs schema_version, name, cluster and workload"),
      exact("document_marker_only.yaml", 3, 1,
            "the file is empty; a scenario needs schema_version, name, cluster and workload"),
      // Anchors and aliases: an alias is the anchored node itself, so errors point at the anchor.
      exact("alias_cycle.yaml", 40, 13, "'workload.streams[2].gpus[2]' must be an integer, found a list"),
      exact("alias_cycle_map.yaml", 11, 18, "'cluster.sm_partitions.comm' must be an integer, found a map"),
      exact("alias_reused_op.yaml", 43, 32, "GPU 7 runs this stream and cannot send to itself"),
      exact("unknown_alias.yaml", 40, 13, "YAML syntax error: the referenced anchor is not defined"),
      // Nesting.
      exact("deep_flow_nesting.yaml", 11, 82, "nesting deeper than 64 levels"),
      exact("deep_block_nesting.yaml", 32, 9, "'workload.streams[1].partition' must be a string, found a map"),
      exact("deep_block_sequence_nesting.yaml", 41, 1000, "nesting too deep for the YAML parser"),
      // Bytes that are not UTF-8 text.
      exact("binary_garbage.bin", 1, 8, "binary data (a NUL byte): a scenario is UTF-8 text"),
      exact("nul_byte.yaml", 39, 15, "binary data (a NUL byte): a scenario is UTF-8 text"),
      exact("invalid_utf8.yaml", 7, 82, "invalid UTF-8: a scenario is UTF-8 text"),
      // Overlong encodings and UTF-16 surrogates are not UTF-8 either.
      exact("invalid_utf8_overlong.yaml", 6, 16, "invalid UTF-8: a scenario is UTF-8 text"),
      exact("invalid_utf8_surrogate.yaml", 6, 17, "invalid UTF-8: a scenario is UTF-8 text"),
      exact("truncated_utf8.yaml", 46, 9, "invalid UTF-8: a scenario is UTF-8 text"),
      exact("utf16.yaml", 1, 1, "invalid UTF-8: a scenario is UTF-8 text"),
  };
  return rows;
}

std::string broken_dir() { return test::source_dir() + "/tests/broken"; }
std::string path_of(const Expected& e) { return broken_dir() + "/" + e.file; }
std::string prefix_of(const std::string& path, int line, int col) {
  return path + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
}
bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

bool message_matches(const Expected& e, const std::string& message) {
  return e.exact ? message == e.message : message.find(e.message) != std::string::npos;
}

// Loads and builds the scenario; returns the UserError it throws, or nothing.
std::optional<hw::UserError> load_error(const std::string& path) {
  try {
    const Scenario sc = load_scenario_file(path);
    (void)build_op_workload(sc);
  } catch (const hw::UserError& e) {
    return e;
  }
  return std::nullopt;
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80                  ? 1
                     : (c >= 0xC2 && c <= 0xDF) ? 2
                     : (c >= 0xE0 && c <= 0xEF) ? 3
                     : (c >= 0xF0 && c <= 0xF4) ? 4
                                                : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// A realistic scenario padded with comment lines to `bytes` bytes.
std::string padded_scenario(size_t bytes) {
  std::string text = test::read_file(test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml");
  const std::string line = "# padding: a scenario file that grew far beyond any real one ......................\n";
  while (text.size() + line.size() <= bytes) text += line;
  text += std::string(bytes - text.size() - 1, '#') + "\n";
  return text;
}

constexpr size_t kTenMiB = size_t{10} << 20;

TEST_CASE("broken scenarios: every corpus file has an expectation", "[models][broken]") {
  std::set<std::string> on_disk, in_table;
  for (const auto& entry : std::filesystem::directory_iterator(broken_dir()))
    on_disk.insert(entry.path().filename().string());
  for (const Expected& e : corpus()) {
    INFO(e.file);
    CHECK(in_table.insert(e.file).second);  // each file once
  }
  CHECK(on_disk == in_table);
  CHECK(corpus().size() >= 34);
}

TEST_CASE("broken scenarios: loading reports the expected FILE:LINE:COL: message", "[models][broken]") {
  for (const Expected& e : corpus()) {
    const std::string path = path_of(e);
    INFO(path << " should fail at " << e.line << ":" << e.col << " with: " << e.message);
    std::optional<hw::UserError> err;
    try {
      err = load_error(path);
    } catch (const std::exception& other) {
      FAIL_CHECK("not a UserError: " << other.what());
      continue;
    }
    if (!err) {
      FAIL_CHECK("loaded without an error");
      continue;
    }
    INFO("got: " << err->what());
    CHECK(err->file() == path);
    CHECK(err->line() == e.line);
    CHECK(err->col() == e.col);
    CHECK(message_matches(e, err->message()));
    CHECK(starts_with(err->what(), prefix_of(path, e.line, e.col)));
    CHECK(std::string(err->what()) == prefix_of(path, err->line(), err->col()) + err->message());
  }
}

TEST_CASE("broken scenarios: error messages are one line of valid UTF-8", "[models][broken]") {
  for (const Expected& e : corpus()) {
    INFO(e.file);
    const std::optional<hw::UserError> err = load_error(path_of(e));
    if (!err) continue;  // reported by the test above
    INFO(err->what());
    CHECK(err->message().find('\n') == std::string::npos);  // e.g. multiline_string_for_number
    CHECK(valid_utf8(err->message()));                      // e.g. long_utf8_value
  }
}

TEST_CASE("broken scenarios: a 10 MiB file is refused before parsing", "[models][broken]") {
  test::TempDir tmp;
  const std::string path = tmp.file("ten_mib.yaml");
  test::write_file(path, padded_scenario(kTenMiB));
  REQUIRE(std::filesystem::file_size(path) == kTenMiB);
  const std::string message = "file is 10485760 bytes; at most 8388608 (8 MiB) are read";
  const std::optional<hw::UserError> err = load_error(path);
  REQUIRE(err);
  CHECK(err->line() == 1);
  CHECK(err->col() == 1);
  CHECK(err->message() == message);
  CHECK(std::string(err->what()) == path + ":1:1: " + message);

  const test::RunOutput r = test::run_clustersim({"check", path});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == path + ":1:1: " + message + "\n");
}

TEST_CASE("broken scenarios: a missing file or a directory is a whole-file error", "[models][broken]") {
  const std::string missing = broken_dir() + "/no_such_file.yaml";
  std::optional<hw::UserError> err = load_error(missing);
  REQUIRE(err);
  CHECK(err->line() == 0);
  CHECK(std::string(err->what()) == missing + ": cannot open the file");

  // A directory is not read (it would look like a file of 2^63-1 bytes, refused as too large).
  err = load_error(broken_dir());
  REQUIRE(err);
  CHECK(err->line() == 0);
  CHECK(std::string(err->what()) == broken_dir() + ": is a directory, not a scenario file");

  const test::RunOutput r = test::run_clustersim({"check", missing});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == missing + ": cannot open the file\n");
}

TEST_CASE("broken scenarios: clustersim check exits 2 with the expected error for each file", "[models][broken]") {
  for (const Expected& e : corpus()) {
    const std::string path = path_of(e);
    const std::string prefix = prefix_of(path, e.line, e.col);
    INFO(path << " should fail at " << e.line << ":" << e.col << " with: " << e.message);
    const test::RunOutput r = test::run_clustersim({"check", path});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);  // not 0 (accepted), 1 (internal error) or a signal (128 + n)
    CHECK(r.out.empty());
    CHECK(starts_with(r.err, prefix));
    if (starts_with(r.err, prefix)) {
      const std::string message = r.err.substr(prefix.size(), r.err.size() - prefix.size() - 1);
      CHECK(message_matches(e, message));
      CHECK(r.err.back() == '\n');
    }
  }
}

TEST_CASE("broken scenarios: clustersim check reports every file of one call", "[models][broken]") {
  test::TempDir tmp;
  const std::string big = tmp.file("ten_mib.yaml");
  test::write_file(big, padded_scenario(kTenMiB));
  std::vector<std::string> args = {"check"};
  std::vector<std::string> prefixes;
  for (const Expected& e : corpus()) {
    args.push_back(path_of(e));
    prefixes.push_back(prefix_of(path_of(e), e.line, e.col));
  }
  args.push_back(big);
  prefixes.push_back(big + ":1:1: ");

  const test::RunOutput r = test::run_clustersim(args);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  // One report per file, in the order given, each at the start of a line.
  size_t from = 0;
  for (const std::string& p : prefixes) {
    INFO(p);
    const size_t at = starts_with(r.err.substr(from), p) ? from : r.err.find("\n" + p, from);
    CHECK(at != std::string::npos);
    if (at != std::string::npos) from = at + 1;
  }
}

// The nesting prescan must count only brackets that YAML reads as flow collections.
TEST_CASE("broken scenarios: brackets inside a quoted string are not nesting", "[models][broken]") {
  std::string text = test::read_file(test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml");
  const size_t at = text.find("\ndescription: ");
  REQUIRE(at != std::string::npos);
  const size_t end = text.find('\n', at + 1);
  // A double-quoted string outside any flow collection is text, not brackets.
  const std::string line = "description: \"ASCII art " + std::string(70, '[') + "\"";
  text.replace(at + 1, end - at - 1, line);
  INFO(line);
  CHECK_NOTHROW(load_scenario_text(text, "quoted_brackets.yaml"));
}

}  // namespace
}  // namespace cs::models::CS_TEST_FILE
