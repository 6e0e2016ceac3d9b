// A sweep's results for people: the console table and answers, and the chart and notes the HTML
// report shows beside the best point's run.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/sweep_answers.h"
#include "models/sweep_run.h"
#include "models/sweep_spec.h"

namespace cs::reports {

// Every point when there are few, else the best ones by the objective; then the answers.
std::string sweep_console(const models::SweepSpec& spec, const std::vector<models::SweepRecord>& records,
                          const models::SweepAnswers& answers);

// The answers as sentences (best point, Pareto front, best SM split per setting).
std::vector<std::string> sweep_answer_lines(const models::SweepSpec& spec, const std::vector<models::SweepRecord>& records,
                                            const models::SweepAnswers& answers);

// The report's `sweep` object (reports/html_report.h): the objective against the SM split of the
// best point's setting when the sweep varies comm_sms, else against the point index; plus the notes.
nlohmann::json sweep_chart(const models::SweepSpec& spec, const std::vector<models::SweepRecord>& records,
                           const models::SweepAnswers& answers);

}  // namespace cs::reports
