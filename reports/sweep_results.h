// A sweep's results file, CSV or JSON, written point by point as points finish (a journal) and
// rewritten in point order, with the answers, once the sweep is complete. Reading one back gives
// the points already done, so a rerun of the same sweep skips them and a killed sweep loses only
// the points that were running.
//
// CSV:  `# clustersim sweep NAME: fingerprint F, N points[, shard I/N]`, then a header row
//       (index, status, the swept keys, the figures of models::kSweepMetrics, message), one row per point.
// JSON: while running, JSON Lines: a header object, then one object per point; when complete, one
//       document {schema_version, kind: "clustersim_sweep", ..., points: [...], answers: {...}}.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/sweep_answers.h"
#include "models/sweep_run.h"
#include "models/sweep_spec.h"

namespace cs::reports {

inline constexpr int kSweepResultsSchemaVersion = 1;

enum class SweepFormat { kCsv, kJson };

struct SweepHeader {
  std::string name, file, base, fingerprint, version;
  int points = 0;
  std::string shard;  // "I/N" for one shard of the points, else ""
  std::vector<std::string> columns;
};

// The records on file for this sweep (valid lines only: a line cut short by a kill is dropped).
// Figures read from JSON are written again as a new record writes them; values as JSON gives them
// back (the caller takes them from its points, which the fingerprint says are the same).
// A file of another sweep (another fingerprint or set of keys) is a UserError; a missing file has none.
std::vector<models::SweepRecord> read_sweep_results(const std::string& path, SweepFormat format,
                                                    const SweepHeader& header);

// Streams records to the results file as they finish, each flushed at once.
class SweepJournal {
 public:
  // Rewrites the file (atomically) with the header and the records kept from before, then appends.
  SweepJournal(std::string path, SweepFormat format, const SweepHeader& header,
               const std::vector<models::SweepRecord>& kept);
  void append(const models::SweepRecord& r);  // UserError when it cannot be written

 private:
  std::string path_;
  SweepFormat format_;
  std::vector<std::string> columns_;
  std::ofstream out_;
};

// The complete file: every record given, in index order, and (JSON) the answers.
std::string sweep_results_text(SweepFormat format, const SweepHeader& header, const models::SweepSpec& spec,
                               const std::vector<models::SweepRecord>& records, const models::SweepAnswers& answers);

// One record as one line of JSON and back, every figure kept as text: what MPI ranks send rank 0.
std::string sweep_record_line(const models::SweepRecord& r, const std::vector<std::string>& columns);
models::SweepRecord sweep_record_from_line(const std::string& line, const std::vector<std::string>& columns);

nlohmann::json sweep_answers_json(const models::SweepSpec& spec, const std::vector<models::SweepRecord>& records,
                                  const models::SweepAnswers& answers);

}  // namespace cs::reports
