// shardify --input PATH... --task lm|cls|pair|qa|sft --tokenizer FILE --out DIR [flags]: the
// default command, run when no subcommand is named.
#include <cstdio>
#include <memory>

#include "core/error.h"
#include "core/progress.h"
#include "option_flags.h"
#include "output_location.h"
#include "progress_options.h"
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
  shardkit::ProgressOptions progress;
  std::unique_ptr<shardkit::tools::OptionFlags<ConvertOptions>> flags;
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
  shardify_cli::OutputLocation out(destination, o.force, shardify_cli::temp_directory);
  o.out = out.local();

  shardkit::ProgressReporter reporter("shardify", shardkit::ProgressUnit::bytes(), a.progress);
  std::function<void(const ConvertProgress&)> progress;
  if (reporter.enabled())
    progress = [&reporter, again = false](const ConvertProgress& p) mutable {
      if (p.read_again_checked && !again) reporter.start_over(p.seconds);
      again = p.read_again_checked;
      reporter.update(p.input_bytes_done, p.input_bytes_total,
                      shardkit::count_text(p.records) + " records" +
                          (p.read_again_checked ? "; reading again, each compressed file checked "
                                                  "first (one was damaged)"
                                                : ""));
    };
  ConvertResult r = convert(o, progress);
  reporter.finish();
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
  shardkit::tools::add_progress_options(&app, a->progress);
  app.callback([a, &app] {
    if (!app.get_subcommands().empty()) return;
    run_convert(*a);
  });
});

}  // namespace
