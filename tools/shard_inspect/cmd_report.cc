// shard-inspect report DIR [--mixture SPEC] [--decode TOKENIZER] -o report.html: one
// self-contained HTML page with the length histograms and truncation shares, label shares, the
// most frequent tokens, a mixture's sources and per-step shares, and the checksum pass.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "core/dataset_store.h"
#include "core/error.h"
#include "core/location.h"
#include "core/progress.h"
#include "count_check.h"
#include "progress_options.h"
#include "shard_inspect/commands.h"
#include "shard_inspect/report_html.h"
#include "shard_inspect/source_flags.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace shard_inspect;

struct ReportArgs {
  std::string dir, mixture, out, decode;
  shardkit::loader::LoaderOptions options;
  size_t top = 20;
  bool force = false;
  bool mixture_options_given = false;  // --batch-size or --max-samples
  shardkit::ProgressOptions progress;
};

std::unique_ptr<shardkit::tok::Tokenizer> dataset_tokenizer(const std::string& file,
                                                            const shardkit::Manifest& m) {
  if (file.empty()) return nullptr;
  auto tok = shardkit::tok::Tokenizer::from_file(file);
  const std::string& made_with = m.info.tokenizer.fingerprint;
  const std::string given = tok->describe().fingerprint;
  if (!made_with.empty() && given != made_with)
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, file,
                          "is not the tokenizer this dataset was made with (fingerprint " + given +
                              ", the dataset's " + made_with + ")");
  return tok;
}

ReportData gather(const ReportArgs& args) {
  ReportData d;
  d.dir = shardkit::without_secrets(args.dir);
  // The checksum pass reads what is at the location, not a cached copy (verify_options()), and
  // checks the shards against the manifest the page shows.
  const auto store =
      shardkit::open_store(args.dir, shardkit::verify_options(shard_inspect::source_options()));
  d.manifest = store->load_manifest();
  const auto tok = dataset_tokenizer(args.decode, d.manifest);
  {
    shardkit::ProgressReporter reporter("report: verify", shardkit::ProgressUnit::items("blocks"),
                                        args.progress);
    d.verify = shardkit::verify_shards(
        *store, d.manifest,
        [&reporter](uint64_t done, uint64_t total) { reporter.update(done, total); });
  }
  if (!d.verify.ok()) return d;
  d.scanned = true;
  d.stats = compute_stats(args.dir, args.top > 0);
  d.truncation = truncation_rows(d.stats);
  d.top_tokens = top_tokens(d.stats, args.top, tok.get());
  d.decoded = tok != nullptr;
  if (!args.mixture.empty()) d.mixture.push_back(mixture_view(args.mixture, args.options, false));
  return d;
}

// Written beside `out` and moved into place: `out` appears whole or not at all, and an existing
// file is replaced only with --force (link() refuses to replace, rename() replaces).
void write_new_file(const std::string& out, const std::string& text, bool force) {
  // Named before the temporary file is: --force never replaces a directory (rename() refuses),
  // and a missing directory is the output's, not the temporary file's.
  std::error_code ec;
  if (std::filesystem::is_directory(out, ec))
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, out,
                          "is a directory: --output names the HTML file to write");
  const std::filesystem::path dir = std::filesystem::path(out).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
    throw shardkit::Error(shardkit::ErrorCode::kIo, out,
                          "cannot create: its directory " + dir.string() + " does not exist");
  const std::string tmp = out + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw shardkit::Error(shardkit::ErrorCode::kIo, tmp,
                          std::string("cannot create: ") + std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  const int saved = errno;
  const bool closed = ::close(fd) == 0;
  const bool placed =
      written && closed &&
      (force ? ::rename(tmp.c_str(), out.c_str()) : ::link(tmp.c_str(), out.c_str())) == 0;
  const int placed_errno = errno;
  if (!placed || !force) ::unlink(tmp.c_str());
  if (!written || !closed)
    throw shardkit::Error(shardkit::ErrorCode::kIo, out,
                          std::string("cannot write: ") + std::strerror(written ? errno : saved));
  if (!placed && placed_errno == EEXIST)
    throw shardkit::Error(shardkit::ErrorCode::kExists, out, "exists; --force replaces it");
  if (!placed)
    throw shardkit::Error(shardkit::ErrorCode::kIo, out,
                          std::string("cannot create: ") + std::strerror(placed_errno));
}

void run_report(const ReportArgs& args) {
  // They shape the mixture's steps only: without one they would change nothing, silently.
  if (args.mixture.empty() && args.mixture_options_given)
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "--batch-size and --max-samples set a mixture's steps: they need "
                          "--mixture");
  const ReportData d = gather(args);
  write_new_file(args.out, report_html(d), args.force);
  if (!d.verify.ok()) {
    std::fprintf(stderr, "shard-inspect: %s: %zu checksum fault(s), listed in %s\n", d.dir.c_str(),
                 d.verify.faults.size(), args.out.c_str());
    shard_inspect::exit_code() = 1;
  }
}

const shard_inspect::RegisterCommand kReport([](CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page of charts: lengths and truncation, labels, "
      "top tokens, a mixture's shares, checksums");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)")
      ->required();
  cmd->add_option("-o,--output", args->out, "The HTML file to write")->required();
  cmd->add_option("--mixture", args->mixture,
                  "A mixture spec (as for order): its sources' tokens and each step's shares");
  cmd->add_option("--decode,--tokenizer", args->decode,
                  "Tokenizer file the dataset was made with: show the top tokens as text");
  cmd->add_option("--batch-size", args->options.batch_size, "Batch size of the mixture's steps")
      ->default_val(args->options.batch_size)
      ->check(shardkit::tools::kPositiveCount);
  cmd->add_option("--max-samples", args->options.max_samples,
                  "Samples per epoch (a weighted mixture's length)")
      ->default_val(0)
      ->check(shardkit::tools::kCount);
  cmd->add_option("--top", args->top, "How many of the most frequent tokens to show (0: none)")
      ->capture_default_str()
      ->check(shardkit::tools::kCount);
  cmd->add_flag("--force", args->force, "Replace an existing output file");
  shardkit::tools::add_progress_options(cmd, args->progress);
  const auto apply_source_flags = shard_inspect::add_source_flags(cmd);
  cmd->callback([args, apply_source_flags, cmd] {
    apply_source_flags();
    args->mixture_options_given = cmd->count("--batch-size") + cmd->count("--max-samples") > 0;
    run_report(*args);
  });
});

}  // namespace
