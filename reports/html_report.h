// The HTML report of a run: one self-contained page (inline CSS and SVG, no script, nothing
// fetched), readable on a laptop and printable. It is rendered from the result document alone
// (result_json with its `report` object, reports/report_data.h), so a saved result renders the
// same bytes later.
//
// Optional parts of the `report` object it shows where present:
//   sweep       {title, x_label, y_label, points[{x, predicted, measured?}], notes?[]}: a line chart
//               and the sweep's answers
//   validation  {profile, data[], holdout_every, cases[{kind, label, measured_us, predicted_us,
//               held_out}], summary[{what, cases, median, worst}]}: predicted against measured
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cs::reports {

// Throws std::invalid_argument when the document lacks what a report needs (no `report` object).
std::string render_html(const nlohmann::json& result);

}  // namespace cs::reports
