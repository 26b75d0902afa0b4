// shardify --input PATH... --task lm|cls|pair|qa|sft --tokenizer FILE --out DIR [flags]: the
// default command, run when no subcommand is named.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "core/error.h"
#include "option_flags.h"
#include "output_location.h"
#include "shardify/commands.h"
#include "shardify/convert.h"
#include "shardify/convert_option_table.h"

namespace {

using namespace shardkit::shardify;

// What the command line adds to the converter's options: how to report.
struct ConvertArgs {
  ConvertOptions options;
  bool json = false;
  bool print_options = false;
  std::unique_ptr<shardkit::tools::OptionFlags<ConvertOptions>> flags;
};

class ProgressLine {
 public:
  void update(const ConvertProgress& p) {
    if (p.seconds - last_ < 0.5) return;
    last_ = p.seconds;
    const double mbs = p.seconds > 0 ? p.input_bytes_done / 1e6 / p.seconds : 0;
    const double rps = p.seconds > 0 ? p.records / p.seconds : 0;
    double eta = 0;
    if (p.input_bytes_done > 0 && p.input_bytes_total > p.input_bytes_done)
      eta =
          p.seconds * double(p.input_bytes_total - p.input_bytes_done) / double(p.input_bytes_done);
    std::fprintf(stderr, "\r%llu records  %.0f records/s  %.2f MB/s  %.0f%%  ETA %.0fs   ",
                 (unsigned long long)p.records, rps, mbs,
                 p.input_bytes_total ? 100.0 * p.input_bytes_done / p.input_bytes_total : 100.0,
                 eta);
    shown_ = true;
  }
  // Erases the line, so that the summary starts on a clean one.
  void clear() {
    if (shown_) std::fprintf(stderr, "\r%80s\r", "");
    shown_ = false;
  }
  ~ProgressLine() { clear(); }

 private:
  double last_ = 0;
  bool shown_ = false;
};

void run_convert(ConvertArgs& a) {
  ConvertOptions& o = a.options;
  a.flags->apply(o);
  if (a.print_options) {
    std::printf("%s\n", convert_option_table().to_json(resolve_defaults(o)).c_str());
    return;
  }
  if (o.inputs.empty())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "--input is required (see --help)");
  if (o.out.empty())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "--out is required (a directory or s3://bucket/prefix)");
  const std::string destination = o.out;
  shardify_cli::OutputLocation out(destination, o.force, std::filesystem::temp_directory_path());
  o.out = out.local();

  ProgressLine line;
  std::function<void(const ConvertProgress&)> progress;
  if (::isatty(STDERR_FILENO)) progress = [&line](const ConvertProgress& p) { line.update(p); };
  ConvertResult r = convert(o, progress);
  line.clear();
  out.publish();
  r.out = destination;
  if (a.json)
    std::printf("%s\n", r.to_json().c_str());
  else
    std::printf("%s", r.to_text().c_str());
}

const shardify_cli::RegisterCommand kConvert([](CLI::App& app) {
  auto a = std::make_shared<ConvertArgs>();
  a->flags =
      std::make_unique<shardkit::tools::OptionFlags<ConvertOptions>>(&app, convert_option_table());
  app.add_flag("--json", a->json, "Print the summary as one JSON object");
  app.add_flag("--print-options", a->print_options,
               "Print the options as resolved (every default applied) as JSON, and exit");
  app.callback([a, &app] {
    if (!app.get_subcommands().empty()) return;
    run_convert(*a);
  });
});

}  // namespace
