#include "loader/mixture_spec.h"

#include <simdjson.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/json_keys.h"
#include "core/location.h"

namespace shardkit::loader {

namespace {

using simdjson::dom::element;

bool is_url(const std::string& p) { return location_scheme(p) != Scheme::kLocal; }

// The spec's values, each checked with an error that names the file and the key.
class SpecReader {
 public:
  SpecReader(std::string file, std::filesystem::path base_dir)
      : file_(std::move(file)), base_dir_(std::move(base_dir)) {}

  Error bad(const std::string& why) const {
    return Error(ErrorCode::kInput, file_, "mixture spec: " + why);
  }
  double number(element v, const std::string& what) const {
    double d;
    if (v.get_double().get(d)) throw bad(what + " must be a number");
    return d;
  }
  uint64_t count(element v, const std::string& what) const {
    uint64_t u;
    if (v.get_uint64().get(u)) throw bad(what + " must be a non-negative integer");
    return u;
  }
  // A position on the schedule's axis: an integer, or a whole number written as 2e9.
  uint64_t position(element v, const std::string& what) const {
    uint64_t u;
    if (!v.get_uint64().get(u)) return u;
    const double d = number(v, what);
    if (!(d >= 0) || d >= 0x1p63 || std::floor(d) != d)
      throw bad(what + " must be a whole number of samples or tokens, not " + std::to_string(d));
    return static_cast<uint64_t>(d);
  }
  MixtureSource source(element item, size_t index) const;
  WeightSchedule schedule(element root, size_t sources) const;

 private:
  std::string file_;
  std::filesystem::path base_dir_;
};

MixtureSource SpecReader::source(element item, size_t index) const {
  const std::string where = "source " + std::to_string(index);
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
    s.path = (base_dir_ / s.path).lexically_normal().string();
  return s;
}

// The mixture-level "schedule" with "interpolation" and "tokens_per_sample", as one source's
// WeightSchedule whose points hold the weights of every source in turn (see spread()).
WeightSchedule SpecReader::schedule(element root, size_t sources) const {
  WeightSchedule w;
  if (element v; !root["interpolation"].get(v)) {
    std::string_view mode;
    if (v.get_string().get(mode) || (mode != "step" && mode != "linear"))
      throw bad("\"interpolation\" must be \"step\" or \"linear\"");
    w.linear = mode == "linear";
  }
  if (element v; !root["tokens_per_sample"].get(v))
    w.tokens_per_sample = count(v, "\"tokens_per_sample\"");
  simdjson::dom::array list;
  if (root["schedule"].get_array().get(list)) throw bad("\"schedule\" must be an array");
  for (element item : list) {
    const std::string where = "schedule point " + std::to_string(w.points.size() / sources);
    simdjson::dom::object o;
    if (item.get_object().get(o)) throw bad(where + " must be an object");
    std::optional<uint64_t> at;
    std::optional<ScheduleAxis> axis;
    simdjson::dom::array weights;
    bool have_weights = false;
    for (auto [k, v] : o) {
      if (k == "at_samples" || k == "at_tokens") {
        if (at) throw bad(where + " gives both \"at_samples\" and \"at_tokens\"");
        at = position(v, where + " \"" + std::string(k) + "\"");
        axis = k == "at_tokens" ? ScheduleAxis::kTokens : ScheduleAxis::kSamples;
      } else if (k == "weights") {
        if (v.get_array().get(weights)) throw bad(where + " \"weights\" must be an array");
        have_weights = true;
      } else {
        throw bad(where + " has an unknown key \"" + std::string(k) +
                  "\" (known: at_samples, at_tokens, weights)");
      }
    }
    if (!at) throw bad(where + " needs \"at_samples\" or \"at_tokens\"");
    if (!have_weights || weights.size() != sources)
      throw bad(where + " needs \"weights\" with one weight per source (" +
                std::to_string(sources) + ")");
    if (w.points.empty())
      w.axis = *axis;
    else if (w.axis != *axis)
      throw bad(where + ": every point uses the same axis (at_samples or at_tokens)");
    for (element x : weights) w.points.push_back({*at, number(x, where + " weight")});
  }
  if (w.points.empty()) throw bad("\"schedule\" needs at least one point");
  return w;
}

// Source i's schedule: the i-th weight of every point.
void spread(const WeightSchedule& all, std::vector<MixtureSource>& sources) {
  const size_t n = sources.size();
  for (size_t i = 0; i < n; ++i) {
    WeightSchedule w = all;
    w.points.clear();
    for (size_t p = i; p < all.points.size(); p += n) w.points.push_back(all.points[p]);
    sources[i].schedule = std::move(w);
  }
}

}  // namespace

MixtureSpec parse_mixture_spec(const std::string& json, const std::string& file,
                               const std::filesystem::path& base_dir) {
  const SpecReader r(file, base_dir);
  simdjson::dom::parser parser;
  element root;
  if (auto err = parser.parse(json).get(root))
    throw r.bad(std::string("not valid JSON: ") + simdjson::error_message(err));
  simdjson::dom::object top;
  if (root.get_object().get(top)) throw r.bad("the top level must be an object");
  if (auto key = repeated_key(root))
    throw r.bad("key \"" + *key + "\" appears twice in one object");
  MixtureSpec spec;
  bool have_sources = false, scheduled = false;
  for (auto [key, value] : top) {
    if (key == "seed") {
      spec.seed = r.count(value, "\"seed\"");
    } else if (key == "max_samples") {
      spec.max_samples = r.count(value, "\"max_samples\"");
    } else if (key == "sources") {
      have_sources = true;
      simdjson::dom::array list;
      if (value.get_array().get(list)) throw r.bad("\"sources\" must be an array");
      for (element item : list) spec.sources.push_back(r.source(item, spec.sources.size()));
    } else if (key == "schedule") {
      scheduled = true;
    } else if (key != "interpolation" && key != "tokens_per_sample") {
      throw r.bad("unknown key \"" + std::string(key) +
                  "\" (known: sources, seed, max_samples, schedule, interpolation, "
                  "tokens_per_sample)");
    }
  }
  if (!have_sources || spec.sources.empty())
    throw r.bad("\"sources\" must name at least one dataset");
  if (scheduled) {
    spread(r.schedule(root, spec.sources.size()), spec.sources);
  } else if (element v; !root["interpolation"].get(v) || !root["tokens_per_sample"].get(v)) {
    throw r.bad("\"interpolation\" and \"tokens_per_sample\" belong to a \"schedule\"");
  }
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
