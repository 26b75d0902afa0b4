#include "loader/mixture_spec.h"

#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/location.h"

namespace shardkit::loader {

namespace {

bool is_url(const std::string& p) { return location_scheme(p) != Scheme::kLocal; }

}  // namespace

MixtureSpec parse_mixture_spec(const std::string& json, const std::string& file,
                               const std::filesystem::path& base_dir) {
  auto bad = [&](const std::string& why) -> Error {
    return Error(ErrorCode::kInput, file, "mixture spec: " + why);
  };
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(json).get(root))
    throw bad(std::string("not valid JSON: ") + simdjson::error_message(err));
  simdjson::dom::object top;
  if (root.get_object().get(top)) throw bad("the top level must be an object");
  auto number = [&](simdjson::dom::element v, const std::string& what) {
    double d;
    if (v.get_double().get(d)) throw bad(what + " must be a number");
    return d;
  };
  auto count = [&](simdjson::dom::element v, const std::string& what) {
    uint64_t u;
    if (v.get_uint64().get(u)) throw bad(what + " must be a non-negative integer");
    return u;
  };
  MixtureSpec spec;
  bool have_sources = false;
  for (auto [key, value] : top) {
    if (key == "seed") {
      spec.seed = count(value, "\"seed\"");
    } else if (key == "max_samples") {
      spec.max_samples = count(value, "\"max_samples\"");
    } else if (key == "sources") {
      have_sources = true;
      simdjson::dom::array list;
      if (value.get_array().get(list)) throw bad("\"sources\" must be an array");
      for (simdjson::dom::element item : list) {
        const std::string where = "source " + std::to_string(spec.sources.size());
        simdjson::dom::object o;
        if (item.get_object().get(o)) throw bad(where + " must be an object");
        MixtureSource s;
        for (auto [k, v] : o) {
          const std::string name = where + " \"" + std::string(k) + "\"";
          if (k == "path") {
            std::string_view p;
            if (v.get_string().get(p)) throw bad(name + " must be a string");
            s.path = std::string(p);
          } else if (k == "weight") {
            s.weight = number(v, name);
          } else if (k == "repeat") {
            s.repeat = number(v, name);
          } else if (k == "choose") {
            s.choose = count(v, name);
          } else {
            throw bad(where + " has an unknown key \"" + std::string(k) +
                      "\" (known: path, weight, repeat, choose)");
          }
        }
        if (s.path.empty()) throw bad(where + " has no \"path\"");
        if (!is_url(s.path) && std::filesystem::path(s.path).is_relative())
          s.path = (base_dir / s.path).lexically_normal().string();
        spec.sources.push_back(std::move(s));
      }
    } else {
      throw bad("unknown key \"" + std::string(key) + "\" (known: sources, seed, max_samples)");
    }
  }
  if (!have_sources || spec.sources.empty())
    throw bad("\"sources\" must name at least one dataset");
  return spec;
}

MixtureSpec read_mixture_spec(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, file.string(), "cannot open the mixture spec");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_mixture_spec(text.str(), file.string(), file.parent_path());
}

}  // namespace shardkit::loader
