#include <catch2/catch.hpp>

#include "reports/html_escape.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::reports::html_escape;

TEST_CASE("html_escape turns markup into text") {
  CHECK(html_escape("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(html_escape("a & b") == "a &amp; b");
  CHECK(html_escape("\"x\" 'y'") == "&quot;x&quot; &#39;y&#39;");
  CHECK(html_escape("&amp;") == "&amp;amp;");  // escaped again, never taken as already escaped
  CHECK(html_escape("") == "");
}

TEST_CASE("html_escape keeps UTF-8 and whitespace, replaces control bytes and invalid UTF-8") {
  CHECK(html_escape("DeepSeek-V3 \xE2\x80\x94 14.8T tokens") == "DeepSeek-V3 \xE2\x80\x94 14.8T tokens");
  CHECK(html_escape("a\tb\nc\r") == "a\tb\nc\r");
  CHECK(html_escape(std::string("a\0b", 3)) == "a\xEF\xBF\xBD" "b");
  CHECK(html_escape("\x1B[31m") == "\xEF\xBF\xBD[31m");
  CHECK(html_escape("\xC0\xBC") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // an overlong '<'
  CHECK(html_escape("\xE2\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
  CHECK(html_escape("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
}

}  // namespace CS_TEST_FILE
