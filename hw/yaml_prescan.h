// A first pass over a YAML text before yaml-cpp parses it: it refuses what the parser should never
// see, or would take silently, each as a UserError at the FILE:LINE:COL where the defect starts.
// Also the UTF-8 and position helpers that the YAML reader shares with it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace cs::hw {

// Length in bytes of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when there is none. Requires i < s.size().
size_t utf8_length(std::string_view s, size_t i);

// Line and column (1-based; a column counts bytes, as yaml-cpp's marks do) of byte offset `at`.
std::pair<int, int> position_of(std::string_view text, size_t at);

// Refuses NUL bytes, invalid UTF-8, flow nesting deeper than kMaxYamlDepth, a quoted string never
// closed (at its opening quote), a ',' where a node starts outside [ ] or { }, and a second
// document. Reads quotes, brackets and comments only where YAML does: a quote opens a string only
// where a node starts (at a line's start, after `: `, `- `, `[`, `{` or a `,` inside brackets), a
// bracket outside brackets likewise, and the lines of a block scalar (after `|` or `>`) are text.
void prescan_yaml(std::string_view text, const std::string& file);

}  // namespace cs::hw
