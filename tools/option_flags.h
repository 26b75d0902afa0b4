// Command-line flags made from an option table (core/option_table.h): each option becomes
// --its-name (with its short form, and --no-its-name for a boolean that defaults to true or
// depends on others), with the table's help and default; deprecated names still work and warn.
// Values are checked by the table after parsing, and refused with the flag's name.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/option_table.h"

namespace shardkit::tools {

template <class S>
class OptionFlags {
 public:
  using Keep = std::function<bool(const options::Option<S>&)>;

  // Adds the CLI options of `table` that `keep` accepts (all when empty) to `app`.
  OptionFlags(CLI::App* app, const options::OptionTable<S>& table, Keep keep = {}) : table_(table) {
    for (const options::Option<S>& e : table.entries())
      if ((e.surfaces & options::kCli) && (!keep || keep(e))) add(app, e);
  }

  // Stores every flag given, in table order; a refused value is a usage error naming the flag
  // (CLI::ValidationError: the tools exit 2).
  void apply(S& s) const {
    for (const options::Option<S>& e : table_.entries()) {
      auto it = given_.find(e.name);
      if (it == given_.end() || !it->second->given()) continue;
      const Given& g = *it->second;
      if (!g.alias_used.empty())
        std::fprintf(stderr, "warning: %s is deprecated; use %s\n",
                     options::flag_name(g.alias_used).c_str(), options::flag_name(e.name).c_str());
      try {
        if (e.kind == options::Kind::kBool)
          table_.set(s, e.name, options::Value(g.flag_count > 0));
        else
          table_.set_text(s, e.name, g.texts);
      } catch (const options::OptionError& error) {
        throw CLI::ValidationError(options::flag_name(e.name) + " " + error.why());
      }
    }
  }
  bool given(const std::string& name) const {
    auto it = given_.find(name);
    return it != given_.end() && it->second->given();
  }

 private:
  struct Given {
    std::vector<std::string> texts;
    int64_t flag_count = 0;
    std::string alias_used;
    bool given() const { return !texts.empty() || flag_count != 0; }
  };

  void add(CLI::App* app, const options::Option<S>& e) {
    auto g = std::make_shared<Given>();
    given_[e.name] = g;
    std::string names = options::flag_name(e.name);
    if (!e.short_flag.empty()) names = e.short_flag + "," + names;
    const std::string help = e.help + describe_default(e);
    if (e.kind == options::Kind::kBool) {
      if (e.has_negated_flag()) names += ",!--no-" + options::flag_name(e.name).substr(2);
      app->add_flag_function(
          names, [g](int64_t n) { g->flag_count = n; }, help);
    } else {
      CLI::Option* opt =
          e.multi_token
              ? app->add_option(names, g->texts, help)
              // One value; a flag given twice takes the last, so a script can override it.
              : app->add_option_function<std::string>(
                       names, [g](const std::string& v) { g->texts = {v}; }, help)
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
      if (!e.choices.empty())
        opt->type_name(choices_text(e.choices));
      else
        opt->type_name(type_text(e.kind));
    }
    add_aliases(app, e, g);
  }

  // Hidden flags for deprecated names (a negated alias of a boolean is its --no- form already).
  void add_aliases(CLI::App* app, const options::Option<S>& e, const std::shared_ptr<Given>& g) {
    for (const options::Alias& a : e.aliases) {
      if (e.kind == options::Kind::kBool && a.negated && a.name == "no_" + e.name) continue;
      const std::string flag = options::flag_name(a.name);
      if (e.kind == options::Kind::kBool) {
        const bool negated = a.negated;
        app->add_flag_function(flag,
                               [g, negated, name = a.name](int64_t n) {
                                 g->flag_count = negated ? -n : n;
                                 g->alias_used = name;
                               })
            ->group("");
      } else {
        app->add_option_function<std::vector<std::string>>(
               flag,
               [g, name = a.name](const std::vector<std::string>& v) {
                 g->texts = v;
                 g->alias_used = name;
               })
            ->group("");
      }
    }
  }

  std::string describe_default(const options::Option<S>& e) const {
    const std::string d = table_.default_text(e);
    if (d == "none" || d == "''" || d == "[]") return "";
    return " [default: " + d + "]";
  }
  static std::string choices_text(const std::vector<std::string>& choices) {
    std::string s;
    for (const std::string& c : choices) s += (s.empty() ? "" : "|") + c;
    return s;
  }
  static std::string type_text(options::Kind kind) {
    switch (kind) {
      case options::Kind::kInt:
      case options::Kind::kUInt:
        return "INT";
      case options::Kind::kReal:
        return "FLOAT";
      case options::Kind::kPath:
        return "PATH";
      case options::Kind::kTextList:
      case options::Kind::kIntList:
        return "LIST";
      default:
        return "TEXT";
    }
  }

  const options::OptionTable<S>& table_;
  std::map<std::string, std::shared_ptr<Given>> given_;
};

}  // namespace shardkit::tools
