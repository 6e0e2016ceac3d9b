// The expressions of a sweep's `derive` and `constraints`.
#include <catch2/catch.hpp>

#include <map>

#include "hw/user_error.h"
#include "models/sweep_expr.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

SweepExpr parse(const std::string& text) {
  // The expression as the value of a YAML key, so errors carry its position.
  const cs::hw::YamlNode root = cs::hw::parse_yaml("x: \"" + text + "\"\n", "e.yaml");
  return SweepExpr::parse(cs::hw::YamlMap(root, {"x"}).required("x"));
}

SweepValue eval(const std::string& text, const std::map<std::string, SweepValue>& keys = {}) {
  return parse(text).eval([&](const std::string& k) -> std::optional<SweepValue> {
    const auto it = keys.find(k);
    if (it == keys.end()) return std::nullopt;
    return it->second;
  });
}

double num(const std::string& text, const std::map<std::string, SweepValue>& keys = {}) {
  return std::get<double>(eval(text, keys));
}

std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

std::string eval_error(const std::string& text, const std::map<std::string, SweepValue>& keys = {}) {
  try {
    eval(text, keys);
  } catch (const SweepEvalError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep expressions: arithmetic with the usual precedence", "[sweep][expr]") {
  CHECK(num("1 + 2 * 3") == 7);
  CHECK(num("(1 + 2) * 3") == 9);
  CHECK(num("2048 / 16 / 1") == 128);
  CHECK(num("10 % 4") == 2);
  CHECK(num("-3 + 5") == 2);
  CHECK(num("2 - -3") == 5);
  CHECK(num("min(4, 2, 8) + max(1, 3)") == 5);
  CHECK(num("floor(7 / 2) + ceil(7 / 2)") == 7);
  CHECK(num("1.5e3") == 1500);
}

TEST_CASE("sweep expressions: keys, strings, comparisons and logic", "[sweep][expr]") {
  const std::map<std::string, SweepValue> k = {{"workload.layout.pp", 16.0},
                                               {"workload.pipeline.schedule", std::string("dualpipe")},
                                               {"training.phases.0.tokens", 14.8e12}};
  CHECK(num("2048 / workload.layout.pp", k) == 128);
  CHECK(num("workload.pipeline.schedule == 'dualpipe' and workload.layout.pp % 2 == 0", k) == 1);
  CHECK(num("workload.pipeline.schedule != \\\"dualpipe\\\" || workload.layout.pp > 8", k) == 1);
  CHECK(num("not (workload.layout.pp >= 16)", k) == 0);
  CHECK(num("!(workload.layout.pp < 16) && workload.layout.pp <= 16", k) == 1);
  CHECK(num("training.phases.0.tokens / 1e12", k) == Approx(14.8));
  CHECK(num("workload.pipeline.schedule == 1", k) == 0);  // a string is never equal to a number
  CHECK(std::get<std::string>(eval("'dual' + 'pipe'")) == "dualpipe");
  // `or` stops at a true left side: the right may read a key that only some points set.
  CHECK(num("workload.layout.pp > 0 or missing.key > 0", k) == 1);
}

TEST_CASE("sweep expressions: what a point cannot evaluate says why", "[sweep][expr]") {
  CHECK(eval_error("missing.key + 1") == "the scenario does not set 'missing.key'");
  CHECK(eval_error("s * 2", {{"s", std::string("dualpipe")}}) == "'*' needs a number, found 'dualpipe'");
  CHECK(eval_error("1 / (2 - 2)") == "division by zero in '1 / (2 - 2)'");
  CHECK(eval_error("1e308 * 1e308") == "'1e308 * 1e308' is not finite");
}

TEST_CASE("sweep expressions: syntax errors point at the key and the character", "[sweep][expr]") {
  CHECK(parse_error("1 +") == "e.yaml:1:4: in the expression '1 +', at character 4: the expression ends where a value is expected");
  CHECK(parse_error("(1 + 2") == "e.yaml:1:4: in the expression '(1 + 2', at character 7: ')' expected");
  CHECK(parse_error("1 $ 2") == "e.yaml:1:4: in the expression '1 $ 2', at character 3: unexpected '$'");
  CHECK(parse_error("sqrt(4)") == "e.yaml:1:4: in the expression 'sqrt(4)', at character 6: unknown function 'sqrt' (there are min, max, floor and ceil)");
  CHECK(parse_error("min(4)") == "e.yaml:1:4: in the expression 'min(4)', at character 7: min takes two values or more");
  CHECK(parse_error("'open") == "e.yaml:1:4: in the expression ''open', at character 1: the string is not closed");
}

TEST_CASE("sweep values are written as the scenario reads them", "[sweep][expr]") {
  CHECK(sweep_value_text(SweepValue(128.0)) == "128");
  CHECK(sweep_value_text(SweepValue(-4.0)) == "-4");
  CHECK(sweep_value_text(SweepValue(2.5)) == "2.5");
  CHECK(sweep_value_text(SweepValue(1.0 / 3)) == "0.33333333333333331");
  CHECK(sweep_value_text(SweepValue(std::string("1f1b"))) == "1f1b");
  CHECK(std::get<double>(sweep_value_of("16")) == 16);
  CHECK(std::get<std::string>(sweep_value_of("1f1b")) == "1f1b");
  CHECK(std::get<std::string>(sweep_value_of("")).empty());
}

}  // namespace CS_TEST_FILE
