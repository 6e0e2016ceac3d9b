// The one escaping function of the HTML report: every string that reaches the page (scenario and
// model names, file paths, labels, SVG <text> and <title>) goes through it.
#pragma once

#include <string>
#include <cstdint>
#include <string_view>

namespace cs::reports {

// Text safe inside HTML or SVG element content and inside double- or single-quoted attributes:
// & < > " ' become character references. Control characters other than tab, newline and carriage
// return (invalid in HTML) become U+FFFD, as do bytes that are not valid UTF-8.
std::string html_escape(std::string_view text);

}  // namespace cs::reports
