// A tiny --key value parser shared by the C++ examples, so each example file is about training,
// not plumbing.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

namespace examples {

class Args {
 public:
  Args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string key = argv[i];
      if (key.rfind("--", 0) != 0) throw std::runtime_error("unexpected argument: " + key);
      key = key.substr(2);
      if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
        values_[key] = argv[++i];
      else
        values_[key] = "1";
    }
  }
  bool has(const std::string& k) const { return values_.count(k) > 0; }
  std::string str(const std::string& k, const std::string& fallback = "") const {
    auto it = values_.find(k);
    return it == values_.end() ? fallback : it->second;
  }
  int64_t num(const std::string& k, int64_t fallback) const {
    return has(k) ? std::stoll(str(k)) : fallback;
  }
  double real(const std::string& k, double fallback) const {
    return has(k) ? std::stod(str(k)) : fallback;
  }

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace examples
