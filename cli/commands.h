// The subcommands. Each returns the process exit code: 0 success, 2 user error, 1 internal error.
#pragma once

#include <string>
#include <vector>

namespace cs::cli {

struct RunArgs {
  std::string file;
  std::string format = "console";
  std::string out;    // empty: stdout
  std::string trace;  // empty: no trace
};

int cmd_run(const RunArgs& args);
int cmd_check(const std::vector<std::string>& files);
int cmd_hw_list();
int cmd_hw_show(const std::string& name);
const char* version();
// Throws hw::UserError when standard output could not take what was written.
void check_stdout();

}  // namespace cs::cli
