#include "models/sweep_expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace cs::models {

std::string sweep_value_text(const SweepValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  const double d = std::get<double>(v);
  if (d == std::floor(d) && std::fabs(d) < 9e15) return std::to_string(static_cast<long long>(d));
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

SweepValue sweep_value_of(const std::string& scalar) {
  double d = 0;
  const char* end = scalar.data() + scalar.size();
  const auto r = std::from_chars(scalar.data(), end, d);
  if (!scalar.empty() && r.ec == std::errc() && r.ptr == end && std::isfinite(d)) return d;
  return scalar;
}

// Recursive descent over the grammar, loosest first:
//   or: and (('||' | 'or') and)*      and: not (('&&' | 'and') not)*     not: ('!' | 'not') not | cmp
//   cmp: sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum)?      sum: prod (('+' | '-') prod)*
//   prod: unary (('*' | '/' | '%') unary)*      unary: '-' unary | atom
//   atom: number | 'string' | key | name '(' or (',' or)* ')' | '(' or ')'
class SweepExprParser {
 public:
  SweepExprParser(const hw::YamlNode& node, SweepExpr& out) : node_(node), out_(out), t_(out.text_) {}

  void parse() {
    out_.root_ = parse_or();
    skip_space();
    if (p_ < t_.size()) fail("unexpected '" + std::string(1, t_[p_]) + "'");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    node_.fail("in the expression '" + t_ + "', at character " + std::to_string(p_ + 1) + ": " + why);
  }
  void skip_space() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  // Consumes `tok` if it comes next; a word only where no name character follows it.
  bool accept(std::string_view tok) {
    skip_space();
    if (t_.compare(p_, tok.size(), tok) != 0) return false;
    const bool word = std::isalpha(static_cast<unsigned char>(tok[0]));
    const size_t after = p_ + tok.size();
    if (word && after < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[after])) || t_[after] == '_'))
      return false;
    p_ = after;
    return true;
  }
  int add(SweepExpr::Node n) {
    out_.nodes_.push_back(std::move(n));
    return static_cast<int>(out_.nodes_.size()) - 1;
  }
  int binary(const std::string& op, int a, int b) {
    SweepExpr::Node n;
    n.kind = SweepExpr::Node::kBinary;
    n.op = op;
    n.args = {a, b};
    return add(std::move(n));
  }
  int parse_or() {
    int a = parse_and();
    while (accept("||") || accept("or")) a = binary("or", a, parse_and());
    return a;
  }
  int parse_and() {
    int a = parse_not();
    while (accept("&&") || accept("and")) a = binary("and", a, parse_not());
    return a;
  }
  int parse_not() {
    skip_space();
    if (t_.compare(p_, 2, "!=") != 0 && (accept("!") || accept("not"))) {
      SweepExpr::Node n;
      n.kind = SweepExpr::Node::kUnary;
      n.op = "not";
      n.args = {parse_not()};
      return add(std::move(n));
    }
    return parse_cmp();
  }
  int parse_cmp() {
    const int a = parse_sum();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"})
      if (accept(op)) return binary(op, a, parse_sum());
    return a;
  }
  int parse_sum() {
    int a = parse_prod();
    for (;;) {
      if (accept("+")) a = binary("+", a, parse_prod());
      else if (accept("-")) a = binary("-", a, parse_prod());
      else return a;
    }
  }
  int parse_prod() {
    int a = parse_unary();
    for (;;) {
      if (accept("*")) a = binary("*", a, parse_unary());
      else if (accept("/")) a = binary("/", a, parse_unary());
      else if (accept("%")) a = binary("%", a, parse_unary());
      else return a;
    }
  }
  int parse_unary() {
    if (accept("-")) {
      SweepExpr::Node n;
      n.kind = SweepExpr::Node::kUnary;
      n.op = "-";
      n.args = {parse_unary()};
      return add(std::move(n));
    }
    return parse_atom();
  }
  int parse_atom() {
    skip_space();
    if (p_ >= t_.size()) fail("the expression ends where a value is expected");
    const char c = t_[p_];
    if (accept("(")) {
      const int a = parse_or();
      if (!accept(")")) fail("')' expected");
      return a;
    }
    SweepExpr::Node n;
    if (c == '\'' || c == '"') {
      const size_t close = t_.find(c, p_ + 1);
      if (close == std::string::npos) fail("the string is not closed");
      n.kind = SweepExpr::Node::kString;
      n.op = t_.substr(p_ + 1, close - p_ - 1);
      p_ = close + 1;
      return add(std::move(n));
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const auto r = std::from_chars(t_.data() + p_, t_.data() + t_.size(), n.number);
      if (r.ec != std::errc() || !std::isfinite(n.number)) fail("not a number");
      p_ = static_cast<size_t>(r.ptr - t_.data());
      return add(std::move(n));
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') fail("unexpected '" + std::string(1, c) + "'");
    // A name: a key's dotted segments (a segment after a dot may be a list index), or a function.
    const size_t start = p_;
    while (p_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[p_])) || t_[p_] == '_' ||
                              (t_[p_] == '.' && p_ + 1 < t_.size() &&
                               (std::isalnum(static_cast<unsigned char>(t_[p_ + 1])) || t_[p_ + 1] == '_'))))
      ++p_;
    const std::string name = t_.substr(start, p_ - start);
    if (accept("(")) {
      static const std::vector<std::string> kFunctions = {"min", "max", "floor", "ceil"};
      if (std::find(kFunctions.begin(), kFunctions.end(), name) == kFunctions.end())
        fail("unknown function '" + name + "' (there are min, max, floor and ceil)");
      n.kind = SweepExpr::Node::kCall;
      n.op = name;
      do n.args.push_back(parse_or());
      while (accept(","));
      if (!accept(")")) fail("')' expected");
      const bool variadic = name == "min" || name == "max";
      if (variadic ? n.args.size() < 2 : n.args.size() != 1)
        fail(name + " takes " + (variadic ? "two values or more" : "one value"));
      return add(std::move(n));
    }
    n.kind = SweepExpr::Node::kKey;
    n.op = name;
    if (std::find(out_.keys_.begin(), out_.keys_.end(), name) == out_.keys_.end()) out_.keys_.push_back(name);
    return add(std::move(n));
  }

  const hw::YamlNode& node_;
  SweepExpr& out_;
  const std::string& t_;
  size_t p_ = 0;
};

SweepExpr SweepExpr::parse(const hw::YamlNode& node) {
  SweepExpr e;
  e.text_ = node.as_string();
  if (e.text_.size() > 4096) node.fail("an expression of more than 4096 characters");
  SweepExprParser(node, e).parse();
  return e;
}

SweepValue SweepExpr::eval(const Lookup& lookup) const { return eval_node(root_, lookup); }

namespace {

double number_of(const SweepValue& v, const std::string& what) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  throw SweepEvalError(what + " needs a number, found '" + std::get<std::string>(v) + "'");
}

}  // namespace

SweepValue SweepExpr::eval_node(int i, const Lookup& lookup) const {
  const Node& n = nodes_[static_cast<size_t>(i)];
  switch (n.kind) {
    case Node::kNumber: return n.number;
    case Node::kString: return n.op;
    case Node::kKey: {
      auto v = lookup(n.op);
      if (!v) throw SweepEvalError("the scenario does not set '" + n.op + "'");
      return *v;
    }
    case Node::kUnary: {
      const SweepValue a = eval_node(n.args[0], lookup);
      if (n.op == "-") return -number_of(a, "'-'");
      return number_of(a, "'not'") == 0 ? 1.0 : 0.0;
    }
    case Node::kCall: {
      std::vector<double> a;
      for (int arg : n.args) a.push_back(number_of(eval_node(arg, lookup), n.op));
      if (n.op == "min") return *std::min_element(a.begin(), a.end());
      if (n.op == "max") return *std::max_element(a.begin(), a.end());
      return n.op == "floor" ? std::floor(a[0]) : std::ceil(a[0]);
    }
    case Node::kBinary: break;
  }
  const std::string& op = n.op;
  if (op == "and" || op == "or") {  // short-circuit: `b` may read keys only set where `a` holds
    const bool a = number_of(eval_node(n.args[0], lookup), op) != 0;
    if (op == "and" ? !a : a) return a ? 1.0 : 0.0;
    return number_of(eval_node(n.args[1], lookup), op) != 0 ? 1.0 : 0.0;
  }
  const SweepValue a = eval_node(n.args[0], lookup), b = eval_node(n.args[1], lookup);
  if (op == "==" || op == "!=") {
    // A number and a string are never equal: `schedule == 1` is false, not an error.
    const bool eq = a == b;
    return (op == "==") == eq ? 1.0 : 0.0;
  }
  if (op == "+" && std::holds_alternative<std::string>(a) && std::holds_alternative<std::string>(b))
    return std::get<std::string>(a) + std::get<std::string>(b);
  const double x = number_of(a, "'" + op + "'"), y = number_of(b, "'" + op + "'");
  if (op == "<") return x < y ? 1.0 : 0.0;
  if (op == "<=") return x <= y ? 1.0 : 0.0;
  if (op == ">") return x > y ? 1.0 : 0.0;
  if (op == ">=") return x >= y ? 1.0 : 0.0;
  if ((op == "/" || op == "%") && y == 0) throw SweepEvalError("division by zero in '" + text_ + "'");
  const double r = op == "+" ? x + y : op == "-" ? x - y : op == "*" ? x * y : op == "/" ? x / y : std::fmod(x, y);
  if (!std::isfinite(r)) throw SweepEvalError("'" + text_ + "' is not finite");
  return r;
}

}  // namespace cs::models
