// Helpers shared by tests: run the built clustersim program, temporary folders, file reading.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cs::test {

inline std::string source_dir() { return CLUSTERSIM_SOURCE_DIR; }
inline std::string clustersim_binary() { return CLUSTERSIM_BINARY; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A fresh folder under the system temp dir, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "clustersim-test-XXXXXX").string();
    path_ = mkdtemp(templ.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Names of the entries in the folder (to check that nothing half-written was left behind).
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
    return out;
  }

 private:
  std::string path_;
};

struct RunOutput {
  int exit_code = -1;
  std::string out, err;
};

// Runs clustersim with `args` (no shell), capturing stdout and stderr, stdin from /dev/null.
inline RunOutput run_clustersim(const std::vector<std::string>& args) {
  TempDir tmp;
  const std::string out_path = tmp.file("stdout"), err_path = tmp.file("stderr");
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* in = std::fopen("/dev/null", "r");
    FILE* o = std::fopen(out_path.c_str(), "w");
    FILE* e = std::fopen(err_path.c_str(), "w");
    dup2(fileno(in), 0);
    dup2(fileno(o), 1);
    dup2(fileno(e), 2);
    std::vector<char*> argv;
    std::string bin = clustersim_binary();
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  RunOutput r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

}  // namespace cs::test
