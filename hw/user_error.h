// An error the user can fix (bad input), reported as `FILE:LINE:COL: message` and exit code 2.
// Lines and columns are 1-based; 0 means "the whole file".
#pragma once

#include <stdexcept>
#include <string>

namespace cs::hw {

class UserError : public std::runtime_error {
 public:
  UserError(std::string file, int line, int col, const std::string& message)
      : std::runtime_error(format(file, line, col, message)),
        file_(std::move(file)), line_(line), col_(col), message_(message) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int col() const { return col_; }
  const std::string& message() const { return message_; }

 private:
  static std::string format(const std::string& f, int line, int col, const std::string& m) {
    if (line <= 0) return f + ": " + m;
    return f + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + m;
  }
  std::string file_;
  int line_, col_;
  std::string message_;
};

}  // namespace cs::hw
