// The YAML prescan: valid YAML that must pass it (and then parse), defects it must refuse at the
// exact LINE:COL, and CRLF text that must parse like its LF twin.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hw/user_error.h"
#include "hw/yaml_prescan.h"
#include "hw/yaml_reader.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::hw;
using namespace std::string_literals;

namespace {

// "LINE:COL: message" of the prescan's error, or "" when it passes.
std::string prescan_error(const std::string& text) {
  try {
    prescan_yaml(text, "t.yaml");
  } catch (const UserError& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.col()) + ": " + e.message();
  }
  return "";
}

std::string value(const std::string& text, const std::string& key) {
  return YamlMap::with_any_keys(parse_yaml(text, "t.yaml"), "keys").required(key).as_string();
}

const std::string kNeverClosed = "a quoted string starting here is never closed";
const std::string kComma = "YAML syntax error: ',' outside [ ] or { }";
const std::string kBadUtf8 = "invalid UTF-8: a scenario is UTF-8 text";
const std::string kNul = "binary data (a NUL byte): a scenario is UTF-8 text";
const std::string kTwoDocs = "more than one YAML document; a file holds one";

}  // namespace

TEST_CASE("prescan: valid YAML passes the prescan and parses", "[hw][yaml][prescan]") {
  const std::vector<std::string> valid = {
      // Apostrophes and quotes inside plain scalars are text.
      "description: x-'y\n",
      "description: it's Bob's GPU, isn't it\n",
      "description: a - 'b\nname: c:'d\n",
      "- O'Brien\n- x-'y\n- \"quoted\"\n",
      "url: http://example.com/'x\n",
      "description: ASCII art " + std::string(70, '[') + " and " + std::string(70, '{') + "\n",
      "a: 1 # it's a comment with \"quotes\", [brackets] and commas\n",
      // Block scalars: every line indented under the header is text.
      "description: |\n  It's \"open\" [not flow], {nor this},\n  , a comma starts this line\n"
      "  # not a comment 'either\n\n  last\nname: x\n",
      "description: >- # folded, with a comment\n  'open\n\n  \"also open\n  [[[[[\nname: x\n",
      "description: |2+\n    indented 'text\nname: x\n",
      "list:\n  - |\n    it's\n  - >\n    , here\n  - plain\n",
      "a: |\n",  // an empty block scalar at the end of the file
      // Quoted keys and flow collections.
      "'key one': 1\n\"key two\": 2\n? 'key three'\n: 3\n",
      "m: {a: 'x', \"b\": \"y,z\", c: [1, 'it''s', \"q\"]}\n",
      "m: {\"a\":\"b\", \"c\":'d'}\n",
      "m: ['a','b',\"c\"]\ns: [ 'x' ]\n",
      "m: [1, 2,\n  'three', {four: 4}]\n",
      // Escaped quotes and multi-line quoted strings.
      "a: 'it''s'\nb: \"say \\\"hi\\\" \\\\\"\n",
      "a: \"first line\n  second 'line', [x]\n  third\"\nb: 'x\n  # not a comment\n  y'\n",
      // Tags, anchors, aliases and documents.
      "a: !!str 'x, y'\nb: &anchor \"q #\"\nc: *anchor\n",
      "%YAML 1.2\n---\na: 1\n...\n# trailing comment\n",
  };
  for (const std::string& text : valid) {
    INFO(text);
    CHECK(prescan_error(text).empty());
    CHECK_NOTHROW(parse_yaml(text, "t.yaml"));
  }
}

TEST_CASE("prescan: yaml-cpp reads the values the prescan let through", "[hw][yaml][prescan]") {
  CHECK(value("description: x-'y\n", "description") == "x-'y");
  CHECK(value("description: |\n  It's, [a]\n  'b\nname: x\n", "description") == "It's, [a]\n'b\n");
  CHECK(value("a: 'it''s'\n", "a") == "it's");
  CHECK(value("a: \"say \\\"hi\\\"\"\n", "a") == "say \"hi\"");
  CHECK(value("a: \"one\n  two\"\n", "a") == "one two");
}

TEST_CASE("prescan: an unclosed quote is reported at its opening", "[hw][yaml][prescan]") {
  CHECK(prescan_error("a: 1\nb: 'open\nc: 2\n") == "2:4: " + kNeverClosed);
  CHECK(prescan_error("a: \"open\n") == "1:4: " + kNeverClosed);
  CHECK(prescan_error("a: [1, 'x]\n") == "1:8: " + kNeverClosed);
  CHECK(prescan_error("- x\n- \"y\\\"\n") == "2:3: " + kNeverClosed);     // \" does not close it
  CHECK(prescan_error("a: 'it''s\n") == "1:4: " + kNeverClosed);          // '' does not close it
  CHECK(prescan_error("'key: 1\n") == "1:1: " + kNeverClosed);
  // The scan goes on after a block scalar ends.
  CHECK(prescan_error("a: |\n  it's\nb: 'open\n") == "3:4: " + kNeverClosed);
}

TEST_CASE("prescan: bytes that are not UTF-8 text are refused where they are", "[hw][yaml][prescan]") {
  CHECK(prescan_error("a: 1\nb: x\0y\n"s) == "2:5: " + kNul);
  CHECK(prescan_error("a: |\n  x\0\n"s) == "2:4: " + kNul);  // in a block scalar
  CHECK(prescan_error("a: \"\\\0\"\n"s) == "1:6: " + kNul);  // escaped
  CHECK(prescan_error("a: \xC3\x28\n") == "1:4: " + kBadUtf8);
  CHECK(prescan_error("a: x\xC0\xAF\n") == "1:5: " + kBadUtf8);          // overlong
  CHECK(prescan_error("a: 'x\xED\xA0\x80'\n") == "1:6: " + kBadUtf8);    // surrogate, quoted
  CHECK(prescan_error("a: >\n  ok\n  \xFF\n") == "3:3: " + kBadUtf8);    // in a block scalar
  CHECK(prescan_error("a: 1 # \xE2\x82\n") == "1:8: " + kBadUtf8);       // truncated, in a comment
}

TEST_CASE("prescan: flow nesting deeper than the limit is refused at the bracket too many",
          "[hw][yaml][prescan]") {
  CHECK(prescan_error("a: " + std::string(kMaxYamlDepth, '[') + std::string(kMaxYamlDepth, ']') + "\n").empty());
  CHECK(prescan_error("a: " + std::string(kMaxYamlDepth + 1, '[') + "\n") ==
        "1:" + std::to_string(4 + kMaxYamlDepth) + ": nesting deeper than 64 levels");
  CHECK(prescan_error("a: [" + std::string(kMaxYamlDepth, '{') + "\n") ==
        "1:" + std::to_string(4 + kMaxYamlDepth) + ": nesting deeper than 64 levels");
}

TEST_CASE("prescan: a second document is refused at its start", "[hw][yaml][prescan]") {
  CHECK(prescan_error("a: 1\n---\nb: 2\n") == "2:1: " + kTwoDocs);
  CHECK(prescan_error("---\na: 1\n...\nb: 2\n") == "4:1: " + kTwoDocs);
  CHECK(prescan_error("a: |\n  text\n---\n") == "3:1: " + kTwoDocs);  // a marker ends a block scalar
}

TEST_CASE("prescan: a ',' where a node starts outside brackets is refused", "[hw][yaml][prescan]") {
  CHECK(prescan_error("a: 1\n, b\n") == "2:1: " + kComma);
  CHECK(prescan_error("a: , b\n") == "1:4: " + kComma);
  CHECK(prescan_error("- ,\n") == "1:3: " + kComma);
  CHECK(prescan_error("a: [1], 2\n") == "1:7: " + kComma);
  CHECK(prescan_error("a: |\n  text\n, b\n") == "3:1: " + kComma);  // after the block scalar
}

TEST_CASE("CRLF text parses like its LF twin, with or without a final line end", "[hw][yaml][crlf]") {
  const std::string lf =
      "schema_version: 1\nname: twin\ncluster:\n  gpus: 8\n  parts: {compute: 112, comm: 20}\n"
      "text: |\n  it's\n  two lines\nlist:\n  - a\n  - 'b'\n  - \"c\"\nlast: 12\nflow: {x: [1, 2]}";
  std::string crlf;
  for (char c : lf) crlf += c == '\n' ? "\r\n"s : std::string(1, c);
  // The last: a CRLF text whose final "\n" was cut, leaving its '\r' at the end.
  for (const std::string& text : {lf, lf + "\n", crlf, crlf + "\r\n", crlf + "\r"}) {
    INFO(text);
    const YamlNode doc = parse_yaml(text, "t.yaml");
    const YamlMap top = YamlMap::with_any_keys(doc, "keys");
    CHECK(top.keys() ==
          std::vector<std::string>{"schema_version", "name", "cluster", "text", "list", "last", "flow"});
    CHECK(YamlMap(top.required("flow"), {"x"}).required("x").items().size() == 2);
    CHECK(top.required("last").as_int(0, 100) == 12);
    CHECK(top.required("last").line() == 13);
    CHECK(top.required("last").col() == 7);
    CHECK(top.required("text").as_string() == "it's\ntwo lines\n");
    const YamlMap cluster(top.required("cluster"), {"gpus", "parts"});
    CHECK(cluster.required("gpus").as_int(1, 8) == 8);
    CHECK(cluster.required("gpus").line() == 4);
    CHECK(cluster.required("gpus").col() == 9);
    const std::vector<YamlNode> items = top.required("list").items();
    REQUIRE(items.size() == 3);
    CHECK(items[2].as_string() == "c");
    CHECK(items[2].line() == 12);
    CHECK(items[2].col() == 5);
  }
}

TEST_CASE("CRLF: an error in a CRLF text is at the same LINE:COL as in its LF twin", "[hw][yaml][crlf]") {
  const std::string lf = "a: 1\nb: [1, 2\nc: 3";
  const std::string crlf = "a: 1\r\nb: [1, 2\r\nc: 3";
  std::string lf_err, crlf_err;
  try {
    parse_yaml(lf, "t.yaml");
  } catch (const UserError& e) {
    lf_err = e.what();
  }
  try {
    parse_yaml(crlf, "t.yaml");
  } catch (const UserError& e) {
    crlf_err = e.what();
  }
  CHECK_FALSE(lf_err.empty());
  CHECK(crlf_err == lf_err);
}

}  // namespace CS_TEST_FILE
