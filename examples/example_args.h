// A tiny --key value parser shared by the C++ examples, so each example file is about training,
// not plumbing. Each example declares its flags once (name, default, help): --help lists them,
// a flag not declared is refused with the closest declared one, and a value is read with the
// declared default.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/option_table.h"

namespace examples {

struct Flag {
  std::string name;          // without "--"
  std::string value;         // what --help shows for the value: N, DIR, X
  std::string default_text;  // a number, or words (the dataset's) that num() does not read
  std::string help;
  std::optional<int64_t> min = {};  // integer flags: the smallest value accepted
};

// A mistake on the command line: main() prints it with a hint of --help and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  Args(int argc, char** argv, std::string synopsis, std::vector<Flag> flags)
      : synopsis_(std::move(synopsis)), flags_(std::move(flags)) {
    for (int i = 1; i < argc; ++i) {
      std::string key = argv[i];
      if (key == "--help" || key == "-h") {
        help_ = true;
        continue;
      }
      if (key.rfind("--", 0) != 0) throw UsageError("unexpected argument: " + key);
      key = key.substr(2);
      check_known(key);
      if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
        values_[key] = argv[++i];
      else
        values_[key] = "1";
    }
    // Integer flags are checked before any work starts, not when the run first reads them.
    for (const Flag& f : flags_)
      if (f.min && values_.count(f.name)) num(f.name);
  }

  bool wants_help() const { return help_; }

  // The synopsis, then one line per flag with its default.
  std::string help() const {
    std::string out = synopsis_ + "\n\nflags:\n";
    for (const Flag& f : flags_) {
      std::string head = "  --" + f.name + (f.value.empty() ? "" : " " + f.value);
      head.resize(std::max<size_t>(head.size() + 2, 24), ' ');
      out += head + f.help + (f.default_text.empty() ? "" : " (default " + f.default_text + ")") +
             "\n";
    }
    return out + "  --help                print this and exit\n";
  }

  bool has(const std::string& k) const { return values_.count(flag(k).name) > 0; }
  std::string str(const std::string& k) const {
    auto it = values_.find(k);
    return it == values_.end() ? flag(k).default_text : it->second;
  }
  // An integer flag, given or its declared default; refused below the declared minimum.
  int64_t num(const std::string& k) const {
    const int64_t v = number<int64_t>(k, shardkit::options::Kind::kInt, "an integer");
    const Flag& f = flag(k);
    if (f.min && v < *f.min)
      throw UsageError("--" + k + " must be at least " + std::to_string(*f.min) + ", not " +
                       str(k));
    return v;
  }
  double real(const std::string& k) const {
    return number<double>(k, shardkit::options::Kind::kReal, "a number");
  }

 private:
  // A number flag read by the parser of the tools' option tables (core/option_table.h).
  template <typename T>
  T number(const std::string& k, shardkit::options::Kind kind, const char* what) const {
    const std::string text = str(k);
    try {
      const auto v = shardkit::options::parse_text("--" + k, kind, {text});
      return std::get<T>(
          shardkit::options::checked_value("--" + k, kind, {}, std::nullopt, std::nullopt, v));
    } catch (const shardkit::options::OptionError&) {
      throw UsageError("--" + k + " takes " + what + ", not '" + text + "'");
    }
  }

  const Flag& flag(const std::string& k) const {
    for (const Flag& f : flags_)
      if (f.name == k) return f;
    // The example's own code asked for a flag it did not declare.
    throw std::logic_error("flag --" + k + " is not declared");
  }

  // A misspelt flag would otherwise leave its option at the default, silently.
  void check_known(const std::string& key) const {
    std::vector<std::string> names;
    for (const Flag& f : flags_) {
      if (f.name == key) return;
      names.push_back("--" + f.name);
    }
    const auto close = shardkit::options::closest_names("--" + key, names);
    throw UsageError("unknown flag --" + key +
                     (close.empty() ? "" : "; did you mean " + close[0] + "?"));
  }

  std::string synopsis_;
  std::vector<Flag> flags_;
  std::map<std::string, std::string> values_;
  bool help_ = false;
};

// An example's main(): its flags read, --help answered, `run` called; a usage mistake exits 2
// with a hint of --help, any other error 1, each line starting with the example's name.
template <typename Run>
int run_example(const char* name, int argc, char** argv, const char* synopsis,
                const std::vector<Flag>& flags, Run&& run) {
  try {
    const Args args(argc, argv, synopsis, flags);
    if (args.wants_help()) {
      std::fputs(args.help().c_str(), stdout);
      return 0;
    }
    return run(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s (--help lists the flags)\n", name, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace examples
