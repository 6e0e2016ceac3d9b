// The small expression language of a sweep's `derive` and `constraints` (scenarios/README.md,
// "Sweeps"): numbers, 'strings', scenario keys written as dotted paths (workload.layout.pp, a list
// item as training.phases.0.tokens), + - * / %, comparisons, and/or/not (also && || !), min, max,
// floor, ceil and parentheses. Comparisons and logic give 1 or 0; a constraint holds when its
// value is not 0.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "hw/yaml_reader.h"

namespace cs::models {

using SweepValue = std::variant<double, std::string>;

// A value as the sweep writes it into the scenario and its results: whole numbers without a
// decimal point (so `dp: 2048 / 16` loads as the integer 128), others with 17 significant digits.
std::string sweep_value_text(const SweepValue& v);
// A YAML scalar's text read back as a value: a number where the whole text is one, else a string.
SweepValue sweep_value_of(const std::string& scalar);

// Evaluation failed for this point (a key the scenario does not set, a type mismatch, a division
// by zero): the point is skipped with this message as its reason.
class SweepEvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SweepExpr {
 public:
  // Parses the node's scalar text; a syntax error is a UserError at the node, naming the column.
  static SweepExpr parse(const hw::YamlNode& node);
  const std::string& text() const { return text_; }
  // The dotted keys it reads, in order of first use.
  const std::vector<std::string>& keys() const { return keys_; }
  // `lookup` returns a key's value, or nothing when the scenario does not set it.
  using Lookup = std::function<std::optional<SweepValue>(const std::string& key)>;
  SweepValue eval(const Lookup& lookup) const;  // SweepEvalError

  struct Node {
    enum Kind { kNumber, kString, kKey, kUnary, kBinary, kCall } kind = kNumber;
    std::string op;  // operator or function name; the string or key for kString and kKey
    double number = 0;
    std::vector<int> args;  // indices into nodes_
  };

 private:
  SweepValue eval_node(int i, const Lookup& lookup) const;
  std::string text_;
  std::vector<Node> nodes_;
  int root_ = 0;
  std::vector<std::string> keys_;
  friend class SweepExprParser;
};

}  // namespace cs::models
