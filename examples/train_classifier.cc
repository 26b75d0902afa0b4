// Trains a small text (or sentence-pair) classifier from a shardkit dataset with libtorch:
//
//   train_classifier --train DIR --valid DIR [--epochs 3] [--batch-size 32] [--lr 0.003]
//                    [--dim 64] [--vocab-size N] [--num-labels N] [--threads N] [--seed S]
//                    [--log-every 50]                    (--help lists them with defaults)
//
// The datasets need input_ids and labels (shardify --task cls or pair); length gives the
// attention mask and token_type_ids (stored or derived) are used when present. Training reads
// a shuffled stream; the held-out split is read in sequential order. The model is a masked mean
// of token (+ type) embeddings followed by an MLP: small enough for a CPU, enough to learn.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "example_args.h"
#include "loader/loader.h"
#include "malloc_tuning.h"
#include "torch_adapter/torch_loader.h"

namespace {

using shardkit::loader::LoaderOptions;
using shardkit::torch_adapter::TensorBatch;
using shardkit::torch_adapter::TorchLoader;

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl(int64_t vocab, int64_t dim, int64_t labels)
      : tokens(register_module("tokens", torch::nn::Embedding(vocab, dim))),
        types(register_module("types", torch::nn::Embedding(2, dim))),
        hidden(register_module("hidden", torch::nn::Linear(dim, dim))),
        out(register_module("out", torch::nn::Linear(dim, labels))) {}

  torch::Tensor forward(const TensorBatch& b) {
    const torch::Tensor& ids = b["input_ids"];
    torch::Tensor x = tokens(ids);
    if (b.contains("token_type_ids")) x = x + types(b["token_type_ids"].clamp(0, 1));
    const torch::Tensor mask = b.contains("attention_mask")
                                   ? b["attention_mask"].to(torch::kFloat).unsqueeze(-1)
                                   : torch::ones({ids.size(0), ids.size(1), 1});
    const torch::Tensor pooled = (x * mask).sum(1) / mask.sum(1).clamp_min(1.0);
    return out(torch::relu(hidden(pooled)));
  }

  torch::nn::Embedding tokens, types;
  torch::nn::Linear hidden, out;
};
TORCH_MODULE(Classifier);

// The largest token id and label in a dataset, read once in order: what the model must cover
// when the manifest does not say.
std::pair<int64_t, int64_t> scan_extent(const std::string& dir) {
  LoaderOptions o;
  o.shuffle = false;
  o.batch_size = 512;
  o.fields = {"input_ids", "labels"};
  shardkit::loader::Loader loader(dir, o);
  int64_t max_id = 0, max_label = 0;
  while (auto b = loader.next()) {
    const auto& ids = b->at("input_ids");
    const auto& labels = b->at("labels");
    for (size_t i = 0; i < ids.elements(); ++i) max_id = std::max(max_id, ids.get(i));
    for (size_t i = 0; i < labels.elements(); ++i) max_label = std::max(max_label, labels.get(i));
  }
  return {max_id + 1, max_label + 1};
}

// What the model is sized from: the manifest's vocabulary and labels (0 where it does not
// say), after checking that the held-out split was made like the training one.
struct Extent {
  int64_t vocab = 0, labels = 0;
};

// An error message when `valid` cannot be scored by a model of `train`: another tokenizer or
// other label names would index past the model, or silently score the wrong classes.
std::string mismatch(const shardkit::DatasetInfo& train, const shardkit::DatasetInfo& valid) {
  if (!train.tokenizer.fingerprint.empty() && !valid.tokenizer.fingerprint.empty() &&
      train.tokenizer.fingerprint != valid.tokenizer.fingerprint)
    return "was tokenized with another tokenizer than --train";
  if (!train.labels.names.empty() && !valid.labels.names.empty() &&
      train.labels.names != valid.labels.names)
    return "has other label names than --train";
  return "";
}

// The flag's value, refused when it is below what the manifest says the data holds.
int64_t at_least_manifest(const examples::Args& args, const char* flag, int64_t from_manifest,
                          const char* what) {
  if (!args.has(flag)) return from_manifest;
  const int64_t given = args.num(flag);
  if (given < from_manifest)
    throw examples::UsageError("--" + std::string(flag) + " " + std::to_string(given) +
                               " is below the training set's " + std::to_string(from_manifest) +
                               " " + what);
  return given;
}

struct Eval {
  double loss = 0, accuracy = 0;
  int64_t examples = 0;
};

Eval evaluate(Classifier& model, const std::string& dir, const LoaderOptions& base) {
  LoaderOptions o = base;
  o.shuffle = false;  // held-out data in its stored order, every example once
  o.drop_last = false;
  o.rank = 0;
  o.world_size = 1;
  TorchLoader loader(dir, o);
  torch::NoGradGuard no_grad;
  model->eval();
  Eval e;
  int64_t correct = 0;
  for (auto& batch : loader) {
    const torch::Tensor logits = model->forward(batch);
    const torch::Tensor labels = batch["labels"];
    e.loss +=
        torch::nn::functional::cross_entropy(
            logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
            .item<double>();
    correct += logits.argmax(1).eq(labels).sum().item<int64_t>();
    e.examples += labels.size(0);
  }
  model->train();
  if (e.examples) {
    e.loss /= static_cast<double>(e.examples);
    e.accuracy = static_cast<double>(correct) / static_cast<double>(e.examples);
  }
  return e;
}

const char kSynopsis[] =
    "usage: train_classifier --train DIR --valid DIR [flags]\n"
    "Trains a small classifier on DIR (shardify --task cls or pair), evaluated on the held-out "
    "split.";

const std::vector<examples::Flag> kFlags = {
    {"train", "DIR", "", "the training dataset (input_ids, labels); required"},
    {"valid", "DIR", "", "the held-out dataset, read in order; required"},
    {"epochs", "N", "3", "epochs", 1},
    {"batch-size", "N", "32", "samples a step", 1},
    {"lr", "X", "0.003", "Adam's learning rate"},
    {"dim", "N", "64", "model width", 1},
    {"vocab-size", "N", "the dataset's", "vocabulary size", 1},
    {"num-labels", "N", "the dataset's", "number of labels", 1},
    {"threads", "N", "0", "loader threads; 0: the cores the process may use", 0},
    {"seed", "S", "0", "seed of the order and the model", 0},
    {"log-every", "N", "50", "a progress line every N steps", 1},
};

int run(const examples::Args& args) {
  const std::string train_dir = args.str("train"), valid_dir = args.str("valid");
  if (train_dir.empty() || valid_dir.empty())
    throw examples::UsageError("--train DIR and --valid DIR are required");
  torch::manual_seed(static_cast<uint64_t>(args.num("seed")));
  LoaderOptions o;
  o.batch_size = static_cast<uint64_t>(args.num("batch-size"));
  o.seed = static_cast<uint64_t>(args.num("seed"));
  o.threads = static_cast<unsigned>(args.num("threads"));
  o.pad_to_multiple_of = 8;
  // Every step a full batch, as examples/python/train_classifier.py: both take the same steps.
  o.drop_last = true;
  {
    shardkit::loader::Loader probe(train_dir, o);
    for (const char* need : {"input_ids", "labels"})
      if (!probe.dataset().schema().find(need)) {
        std::fprintf(stderr, "train_classifier: %s has no '%s' field (schema %s)\n",
                     train_dir.c_str(), need, probe.dataset().schema().canonical().c_str());
        return 2;
      }
  }
  TorchLoader train(train_dir, o);
  if (train.batches() == 0) {
    std::fprintf(stderr,
                 "train_classifier: %s holds no full batch of %llu (%llu records): lower "
                 "--batch-size\n",
                 train_dir.c_str(), static_cast<unsigned long long>(o.batch_size),
                 static_cast<unsigned long long>(train.loader().dataset().size()));
    return 2;
  }
  // The training loader's dataset: opening it again would read its manifest a second time.
  const shardkit::DatasetInfo& train_info = train.loader().dataset().info();
  if (const std::string why = mismatch(train_info, shardkit::Dataset::open(valid_dir).info());
      !why.empty()) {
    std::fprintf(stderr, "train_classifier: --valid %s %s\n", valid_dir.c_str(), why.c_str());
    return 2;
  }
  int64_t vocab = at_least_manifest(
      args, "vocab-size", static_cast<int64_t>(train_info.tokenizer.vocab_size), "token ids");
  int64_t labels = at_least_manifest(
      args, "num-labels", static_cast<int64_t>(train_info.labels.names.size()), "labels");
  if (!vocab || !labels) {
    const auto [v, l] = scan_extent(train_dir);
    const auto [v2, l2] = scan_extent(valid_dir);
    if (!vocab) vocab = std::max(v, v2);
    if (!labels) labels = std::max(l, l2);
  }
  const int64_t dim = args.num("dim");
  const int epochs = static_cast<int>(args.num("epochs"));
  std::printf("vocab %lld, labels %lld, dim %lld, batch %llu\n", static_cast<long long>(vocab),
              static_cast<long long>(labels), static_cast<long long>(dim),
              static_cast<unsigned long long>(o.batch_size));

  Classifier model(vocab, dim, labels);
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(args.real("lr")));
  std::printf("loader: %u threads, window %llu blocks, %llu batches per epoch; torch: %d threads\n",
              train.loader().threads(),
              static_cast<unsigned long long>(train.loader().window_blocks()),
              static_cast<unsigned long long>(train.batches()), torch::get_num_threads());
  const Eval before = evaluate(model, valid_dir, o);
  std::printf("before training: valid_loss %.4f valid_accuracy %.4f (%lld examples)\n", before.loss,
              before.accuracy, static_cast<long long>(before.examples));
  double first_loss = -1, last_loss = 0;
  Eval after;
  const int64_t log_every = args.num("log-every");
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto epoch_start = Clock::now();
    train.set_epoch(static_cast<uint64_t>(epoch));
    double sum = 0, window_sum = 0;
    int64_t steps = 0;
    const auto total = static_cast<long long>(train.batches());
    for (auto& batch : train) {
      opt.zero_grad();
      const torch::Tensor loss =
          torch::nn::functional::cross_entropy(model->forward(batch), batch["labels"]);
      loss.backward();
      opt.step();
      const double value = loss.item<double>();
      sum += value;
      window_sum += value;
      ++steps;
      // The mean of the first ten steps, or of all of them in a shorter first epoch.
      if (epoch == 0 && steps <= 10) first_loss = sum / static_cast<double>(steps);
      if (steps % log_every == 0) {
        // Plain lines, no carriage returns: readable in a log file as on a terminal.
        std::printf("  epoch %d step %lld/%lld loss %.4f (%.1f s)\n", epoch + 1,
                    static_cast<long long>(steps), total, window_sum / double(log_every),
                    seconds_since(epoch_start));
        std::fflush(stdout);
        window_sum = 0;
      }
    }
    last_loss = steps ? sum / static_cast<double>(steps) : 0;
    const double train_secs = seconds_since(epoch_start);
    after = evaluate(model, valid_dir, o);
    std::printf(
        "epoch %d/%d steps %lld train_loss %.4f valid_loss %.4f valid_accuracy %.4f "
        "(%.1f s: train %.1f s, eval %.1f s)\n",
        epoch + 1, epochs, static_cast<long long>(steps), last_loss, after.loss, after.accuracy,
        seconds_since(epoch_start), train_secs, seconds_since(epoch_start) - train_secs);
    std::fflush(stdout);
  }
  std::printf(
      "RESULT first_train_loss %.4f last_train_loss %.4f valid_accuracy_before %.4f valid_accuracy "
      "%.4f\n",
      first_loss, last_loss, before.accuracy, after.accuracy);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  examples::keep_freed_tensor_memory();
  return examples::run_example("train_classifier", argc, argv, kSynopsis, kFlags, run);
}
