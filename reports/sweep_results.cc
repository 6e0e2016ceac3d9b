#include "reports/sweep_results.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "hw/user_error.h"
#include "reports/atomic_file.h"

namespace cs::reports {

using models::SweepRecord;
using nlohmann::json;

namespace {

// A figure or value as JSON: a number where the text is one, else the text.
json as_json(const std::string& text) {
  if (text.empty()) return nullptr;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() + text.size() && text.find_first_of("xXnN") == std::string::npos && text != "-") {
    if (std::fabs(v) < 9e15 && v == std::floor(v) && text.find_first_of(".eE") == std::string::npos)
      return static_cast<int64_t>(v);
    return v;
  }
  return text;
}

std::string text_of(const json& j) {
  if (j.is_null()) return "";
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number()) return j.dump();
  throw std::invalid_argument("not a number or a string");
}

json record_json(const SweepRecord& r, const std::vector<std::string>& columns) {
  json set = json::object(), metrics = json::object();
  for (size_t c = 0; c < columns.size(); ++c)
    if (!r.values[c].empty()) set[columns[c]] = as_json(r.values[c]);
  for (size_t m = 0; m < models::kSweepMetrics.size(); ++m)
    if (!r.metrics[m].empty()) metrics[models::kSweepMetrics[m]] = as_json(r.metrics[m]);
  json j = {{"index", r.index}, {"status", r.status}, {"set", set}, {"metrics", metrics}};
  if (!r.message.empty()) j["message"] = r.message;
  return j;
}

SweepRecord record_of(const json& j, const std::vector<std::string>& columns) {
  SweepRecord r;
  r.index = j.at("index").get<int>();
  r.status = j.at("status").get<std::string>();
  r.values.assign(columns.size(), "");
  for (const auto& [k, v] : j.at("set").items()) {
    const auto it = std::find(columns.begin(), columns.end(), k);
    if (it == columns.end()) throw std::invalid_argument("sets '" + k + "', which this sweep does not");
    r.values[static_cast<size_t>(it - columns.begin())] = text_of(v);
  }
  r.metrics.assign(models::kSweepMetrics.size(), "");
  for (const auto& [k, v] : j.at("metrics").items()) {
    const auto it = std::find(models::kSweepMetrics.begin(), models::kSweepMetrics.end(), k);
    if (it == models::kSweepMetrics.end()) throw std::invalid_argument("has the unknown figure '" + k + "'");
    // A number read back is written with its figure's own decimals again: "12.300", not "12.3".
    r.metrics[static_cast<size_t>(it - models::kSweepMetrics.begin())] =
        v.is_number() ? models::sweep_metric_text(k, v.get<double>()) : text_of(v);
  }
  if (j.contains("message")) r.message = j.at("message").get<std::string>();
  return r;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

// One line of CSV into fields; false where a quote is left open (a line cut short).
bool parse_csv_line(const std::string& line, std::vector<std::string>& fields) {
  fields.assign(1, "");
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') fields.back() += c;
      else if (i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
      else quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return !quoted;
}

std::vector<std::string> csv_header(const std::vector<std::string>& columns) {
  std::vector<std::string> h = {"index", "status"};
  h.insert(h.end(), columns.begin(), columns.end());
  h.insert(h.end(), models::kSweepMetrics.begin(), models::kSweepMetrics.end());
  h.push_back("message");
  return h;
}

std::string csv_comment(const SweepHeader& h) {
  return fmt::format("# clustersim sweep {}: fingerprint {}, {} points{}\n", h.name, h.fingerprint, h.points,
                     h.shard.empty() ? "" : ", shard " + h.shard);
}

std::string csv_record(const SweepRecord& r) {
  std::vector<std::string> f = {std::to_string(r.index), r.status};
  f.insert(f.end(), r.values.begin(), r.values.end());
  f.insert(f.end(), r.metrics.begin(), r.metrics.end());
  f.push_back(r.message);
  return csv_row(f);
}

json journal_header(const SweepHeader& h) {
  return {{"clustersim_sweep_journal", kSweepResultsSchemaVersion}, {"name", h.name}, {"fingerprint", h.fingerprint},
          {"points", h.points}, {"shard", h.shard}, {"columns", h.columns}};
}

std::string read_all(const std::string& path, bool& exists) {
  std::ifstream in(path, std::ios::binary);
  exists = static_cast<bool>(in);
  std::ostringstream s;
  if (exists) s << in.rdbuf();
  return s.str();
}

[[noreturn]] void other_sweep(const std::string& path, const std::string& found, const std::string& want) {
  throw hw::UserError(path, 1, 1, "holds the results of another sweep (fingerprint " + found + "; this sweep is " + want +
                                      "): remove it, or write this sweep's results to another file");
}

void check_record(const std::string& path, int line, const SweepRecord& r, const SweepHeader& h) {
  const bool ok = r.index >= 0 && r.index < h.points && (r.status == "ok" || r.status == "skipped" || r.status == "failed");
  if (!ok) throw hw::UserError(path, line, 1, "is not a point of this sweep (index " + std::to_string(r.index) + ", status '" + r.status + "')");
}

}  // namespace

std::vector<SweepRecord> read_sweep_results(const std::string& path, SweepFormat format, const SweepHeader& header) {
  bool exists = false;
  const std::string text = read_all(path, exists);
  std::vector<SweepRecord> out;
  if (!exists || text.empty()) return out;
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string::npos) break;  // the last line, cut short by a kill: dropped
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (format == SweepFormat::kCsv) {
    const std::string want = csv_comment(header);
    const std::string prefix = "# clustersim sweep ";
    if (lines.empty() || lines[0].rfind(prefix, 0) != 0)
      throw hw::UserError(path, 1, 1, "is not a clustersim sweep's CSV results file; remove it or write to another file");
    const size_t fp = lines[0].find("fingerprint ");
    const std::string found = fp == std::string::npos ? "?" : lines[0].substr(fp + 12, 16);
    if (found != header.fingerprint) other_sweep(path, found, header.fingerprint);
    if (lines.size() < 2) return out;
    std::vector<std::string> fields;
    if (!parse_csv_line(lines[1], fields) || fields != csv_header(header.columns)) other_sweep(path, found + " with other keys", header.fingerprint);
    const size_t n = fields.size();
    for (size_t i = 2; i < lines.size(); ++i) {
      if (!parse_csv_line(lines[i], fields) || fields.size() != n)
        throw hw::UserError(path, static_cast<int>(i + 1), 1, "is not a row of this sweep's results");
      SweepRecord r;
      char* end = nullptr;
      r.index = static_cast<int>(std::strtol(fields[0].c_str(), &end, 10));
      if (fields[0].empty() || *end) r.index = -1;
      r.status = fields[1];
      const auto cols = static_cast<std::ptrdiff_t>(header.columns.size());
      r.values.assign(fields.begin() + 2, fields.begin() + 2 + cols);
      r.metrics.assign(fields.begin() + 2 + cols, fields.end() - 1);
      r.message = fields.back();
      check_record(path, static_cast<int>(i + 1), r, header);
      out.push_back(std::move(r));
    }
    return out;
  }
  // JSON: a complete document, or the journal of a sweep still running (or killed).
  const json doc = json::parse(text, nullptr, false);
  try {
    if (!doc.is_discarded() && doc.is_object() && doc.value("kind", "") == "clustersim_sweep") {
      if (doc.at("fingerprint").get<std::string>() != header.fingerprint)
        other_sweep(path, doc.at("fingerprint").get<std::string>(), header.fingerprint);
      if (doc.at("columns").get<std::vector<std::string>>() != header.columns) other_sweep(path, "with other keys", header.fingerprint);
      for (const json& p : doc.at("points")) {
        out.push_back(record_of(p, header.columns));
        check_record(path, 0, out.back(), header);
      }
      return out;
    }
    const json head = lines.empty() ? json() : json::parse(lines[0], nullptr, false);
    if (head.is_discarded() || !head.is_object() || !head.contains("clustersim_sweep_journal"))
      throw hw::UserError(path, 1, 1, "is not a clustersim sweep's JSON results file; remove it or write to another file");
    if (head.at("fingerprint").get<std::string>() != header.fingerprint)
      other_sweep(path, head.at("fingerprint").get<std::string>(), header.fingerprint);
    if (head.at("columns").get<std::vector<std::string>>() != header.columns) other_sweep(path, "with other keys", header.fingerprint);
    for (size_t i = 1; i < lines.size(); ++i) {
      const json j = json::parse(lines[i], nullptr, false);
      if (j.is_discarded()) throw hw::UserError(path, static_cast<int>(i + 1), 1, "is not a point of this sweep's results");
      out.push_back(record_of(j, header.columns));
      check_record(path, static_cast<int>(i + 1), out.back(), header);
    }
  } catch (const json::exception& e) {
    throw hw::UserError(path, 0, 0, std::string("is not a clustersim sweep's results file: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw hw::UserError(path, 0, 0, std::string("a point ") + e.what());
  }
  return out;
}

// Every figure as the text it was written with (not as a JSON number), so a record that crossed to
// another rank gives the same bytes as one made here.
std::string sweep_record_line(const SweepRecord& r, const std::vector<std::string>& columns) {
  if (r.values.size() != columns.size()) throw std::invalid_argument("a record of another sweep");
  return json{{"index", r.index}, {"status", r.status}, {"values", r.values}, {"metrics", r.metrics}, {"message", r.message}}
      .dump();
}

SweepRecord sweep_record_from_line(const std::string& line, const std::vector<std::string>& columns) {
  const json j = json::parse(line);
  SweepRecord r;
  r.index = j.at("index").get<int>();
  r.status = j.at("status").get<std::string>();
  r.values = j.at("values").get<std::vector<std::string>>();
  r.metrics = j.at("metrics").get<std::vector<std::string>>();
  r.message = j.at("message").get<std::string>();
  if (r.values.size() != columns.size() || r.metrics.size() != models::kSweepMetrics.size())
    throw std::invalid_argument("a record of another sweep");
  return r;
}

SweepJournal::SweepJournal(std::string path, SweepFormat format, const SweepHeader& header,
                           const std::vector<SweepRecord>& kept)
    : path_(std::move(path)), format_(format), columns_(header.columns) {
  {
    AtomicFile f(path_);
    if (format_ == SweepFormat::kCsv) {
      f.stream() << csv_comment(header) << csv_row(csv_header(columns_));
      for (const SweepRecord& r : kept) f.stream() << csv_record(r);
    } else {
      f.stream() << journal_header(header).dump() << "\n";
      for (const SweepRecord& r : kept) f.stream() << record_json(r, columns_).dump() << "\n";
    }
    f.finish_writing();
    f.commit();
  }
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw hw::UserError(path_, 0, 0, "cannot append to the file");
}

void SweepJournal::append(const SweepRecord& r) {
  if (format_ == SweepFormat::kCsv) out_ << csv_record(r);
  else out_ << record_json(r, columns_).dump() << "\n";
  out_.flush();  // a point is on file as soon as it is done: a kill loses only the running ones
  if (!out_) throw hw::UserError(path_, 0, 0, "cannot write the point (disk full?)");
}

json sweep_answers_json(const models::SweepSpec& spec, const std::vector<SweepRecord>& records,
                        const models::SweepAnswers& a) {
  auto point = [&](int i) { return record_json(records[static_cast<size_t>(i)], spec.columns); };
  json j = {{"objective", models::objective_name(a.objective)}, {"ok", a.ok}, {"skipped", a.skipped}, {"failed", a.failed}};
  j["best"] = a.best ? point(*a.best) : json(nullptr);
  if (!a.objective_note.empty()) j["best_note"] = a.objective_note;
  json front = json::array();
  for (int i : a.pareto) front.push_back(point(i));
  j["pareto"] = {{"x", "gpus"}, {"y", a.pareto_time}, {"points", front}};
  if (!a.comm_optima.empty()) {
    json opt = json::array();
    for (const auto& o : a.comm_optima)
      opt.push_back({{"setting", o.setting}, {"points", o.points}, {"best", o.points ? point(o.record) : json(nullptr)}});
    j["comm_sms_optimum"] = opt;
  }
  return j;
}

std::string sweep_results_text(SweepFormat format, const SweepHeader& header, const models::SweepSpec& spec,
                               const std::vector<SweepRecord>& records, const models::SweepAnswers& answers) {
  if (format == SweepFormat::kCsv) {
    std::string out = csv_comment(header) + csv_row(csv_header(header.columns));
    for (const SweepRecord& r : records) out += csv_record(r);
    return out;
  }
  json points = json::array();
  for (const SweepRecord& r : records) points.push_back(record_json(r, header.columns));
  json doc = {{"schema_version", kSweepResultsSchemaVersion},
              {"kind", "clustersim_sweep"},
              {"clustersim_version", header.version},
              {"name", header.name},
              {"file", header.file},
              {"base", header.base},
              {"fingerprint", header.fingerprint},
              {"points_total", header.points},
              {"columns", header.columns},
              {"metrics", models::kSweepMetrics},
              {"points", points},
              {"answers", sweep_answers_json(spec, records, answers)}};
  if (!header.shard.empty()) doc["shard"] = header.shard;
  return doc.dump(1) + "\n";
}

}  // namespace cs::reports
