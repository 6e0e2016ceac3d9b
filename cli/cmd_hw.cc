#include <iostream>

#include "cli/commands.h"
#include "reports/hw_report.h"

namespace cs::cli {

int cmd_hw_list() {
  std::cout << reports::hw_list();
  check_stdout();
  return 0;
}

int cmd_hw_show(const std::string& name) {
  std::cout << reports::hw_show(name);
  check_stdout();
  return 0;
}

}  // namespace cs::cli
