// A profile text that the reader must refuse, at the line it names.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>

#include "hw/gpu_profile.h"
#include "hw/user_error.h"

namespace cs::test {

// `text` as a profile is refused on the line holding its character `at`, saying `why`.
inline void refused_on_line_of(const std::string& text, std::size_t at, const char* why) {
  try {
    hw::parse_profile(hw::parse_yaml(text, "bad.yaml"));
    FAIL("accepted");
  } catch (const hw::UserError& e) {
    CHECK(e.line() == static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1);
    CHECK_THAT(e.message(), Catch::Contains(why));
  }
}

}  // namespace cs::test
