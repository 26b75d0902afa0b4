// Trains a small masked language model from a shardkit dataset with libtorch, using the
// loader's MLM transform (15% of real tokens; 80% [MASK], 10% random, 10% kept):
//
//   train_mlm --data DIR [--mask-id M] [--special 0,101,102] [--vocab-size V] [--epochs 2]
//             [--batch-size 32] [--dim 64] [--layers 2] [--heads 4] [--lr 0.001] [--max-steps N]
//             [--log-every 20] [--seed 0] [--threads 0]      (--help lists them with defaults)
//
// The dataset needs input_ids (and ideally length; shardify --task lm). The mask id, special
// ids and vocabulary size come from the flags or else from the dataset's tokenizer, which
// shardify records with its special ids, [MASK] included (DatasetInfo).
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "example_args.h"
#include "loader/loader.h"
#include "malloc_tuning.h"
#include "torch_adapter/torch_loader.h"

namespace {

using shardkit::loader::LoaderOptions;
using shardkit::torch_adapter::TensorBatch;
using shardkit::torch_adapter::TorchLoader;

struct MaskedLmImpl : torch::nn::Module {
  MaskedLmImpl(int64_t vocab, int64_t max_len, int64_t dim, int64_t layers, int64_t heads)
      : tokens(register_module("tokens", torch::nn::Embedding(vocab, dim))),
        positions(register_module("positions", torch::nn::Embedding(max_len, dim))),
        encoder(register_module("encoder",
                                torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(
                                    torch::nn::TransformerEncoderLayerOptions(dim, heads)
                                        .dim_feedforward(dim * 4)
                                        .dropout(0.0),
                                    layers)))),
        norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        head(register_module("head", torch::nn::Linear(dim, vocab))) {}

  torch::Tensor forward(const TensorBatch& b) {
    const torch::Tensor& ids = b["input_ids"];
    const torch::Tensor pos = torch::arange(ids.size(1), torch::kLong).unsqueeze(0);
    torch::Tensor x = tokens(ids) + positions(pos);
    torch::Tensor padding;
    if (b.contains("attention_mask")) padding = b["attention_mask"].eq(0);
    // libtorch's encoder takes [sequence, batch, dim].
    x = encoder->forward(x.transpose(0, 1), torch::Tensor(), padding).transpose(0, 1);
    return norm(x);
  }

  // Loss over the selected (labelled) positions only: the vocabulary projection, the costly
  // part with a real vocabulary, runs on 15% of the tokens.
  torch::Tensor loss(const TensorBatch& b) {
    const torch::Tensor hidden = forward(b);
    const torch::Tensor labels = b["labels"].reshape({-1});
    const torch::Tensor selected = labels.ne(-100).nonzero().squeeze(1);
    const torch::Tensor logits =
        head(hidden.reshape({-1, hidden.size(-1)}).index_select(0, selected));
    return torch::nn::functional::cross_entropy(logits, labels.index_select(0, selected));
  }

  torch::nn::Embedding tokens, positions;
  torch::nn::TransformerEncoder encoder;
  torch::nn::LayerNorm norm;
  torch::nn::Linear head;
};
TORCH_MODULE(MaskedLm);

std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) ids.push_back(std::stoll(item));
  return ids;
}

const char kSynopsis[] =
    "usage: train_mlm --data DIR [flags]\n"
    "Trains a small masked language model on DIR (shardify --task lm), masked by the loader.";

const std::vector<examples::Flag> kFlags = {
    {"data", "DIR", "", "the dataset (input_ids, ideally length); required"},
    {"mask-id", "M", "the dataset's [MASK]", "the id that replaces a masked token", 0},
    {"special", "IDS", "the dataset's", "comma-separated special ids, never masked"},
    {"vocab-size", "V", "the dataset's", "vocabulary size", 1},
    {"epochs", "N", "2", "epochs", 1},
    {"batch-size", "N", "32", "samples a step", 1},
    {"dim", "N", "64", "model width", 1},
    {"layers", "N", "2", "transformer layers", 1},
    {"heads", "N", "4", "attention heads", 1},
    {"lr", "X", "0.001", "Adam's learning rate"},
    {"max-steps", "N", "none", "stop after this many steps", 1},
    {"log-every", "N", "20", "a progress line every N steps", 1},
    {"seed", "S", "0", "seed of the order, the masks and the model", 0},
    {"threads", "N", "0", "loader threads; 0: the cores the process may use", 0},
};

int run(const examples::Args& args) {
  const std::string dir = args.str("data");
  if (dir.empty()) throw examples::UsageError("--data DIR is required");
  torch::manual_seed(static_cast<uint64_t>(args.num("seed")));
  const auto ds = shardkit::Dataset::open(dir);
  const shardkit::Field* ids_field = ds.schema().find("input_ids");
  if (!ids_field || ids_field->shape.size() != 1) {
    std::fprintf(stderr, "train_mlm: %s has no input_ids[L] field (schema %s)\n", dir.c_str(),
                 ds.schema().canonical().c_str());
    return 2;
  }
  LoaderOptions o;
  o.batch_size = static_cast<uint64_t>(args.num("batch-size"));
  o.seed = static_cast<uint64_t>(args.num("seed"));
  o.threads = static_cast<unsigned>(args.num("threads"));
  o.fields = {"input_ids"};
  if (ds.schema().find("length")) o.fields.push_back("length");
  o.mlm.enabled = true;
  // Unless given, [MASK], the vocabulary size and the special ids come from the dataset's
  // tokenizer (its DatasetInfo), as the loader would fill them.
  o.mlm.mask_token_id = args.has("mask-id") ? args.num("mask-id") : -1;
  o.mlm.vocab_size = args.has("vocab-size") ? static_cast<uint64_t>(args.num("vocab-size")) : 0;
  if (args.has("special")) o.mlm.special_ids = parse_ids(args.str("special"));
  o = shardkit::loader::with_dataset_defaults(std::move(o), ds.info());
  if (o.mlm.mask_token_id < 0 || o.mlm.vocab_size == 0) {
    const bool no_mask = o.mlm.mask_token_id < 0, no_vocab = o.mlm.vocab_size == 0;
    std::fprintf(stderr, "train_mlm: %s's manifest does not say %s%s%s: give %s%s%s\n", dir.c_str(),
                 no_mask ? "the [MASK] id" : "", no_mask && no_vocab ? " or " : "",
                 no_vocab ? "the vocabulary size" : "", no_mask ? "--mask-id" : "",
                 no_mask && no_vocab ? " and " : "", no_vocab ? "--vocab-size" : "");
    return 2;
  }
  const int64_t vocab = static_cast<int64_t>(o.mlm.vocab_size);
  const int64_t max_len = ids_field->shape[0];
  MaskedLm model(vocab, max_len, args.num("dim"), args.num("layers"), args.num("heads"));
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(args.real("lr")));
  TorchLoader loader(dir, o);
  const int epochs = static_cast<int>(args.num("epochs"));
  const int64_t max_steps = args.has("max-steps") ? args.num("max-steps") : INT64_MAX;
  const int64_t log_every = args.num("log-every");
  std::printf("vocab %lld, max_len %lld, mask id %lld, %llu batches per epoch, %u loader threads\n",
              static_cast<long long>(vocab), static_cast<long long>(max_len),
              static_cast<long long>(o.mlm.mask_token_id),
              static_cast<unsigned long long>(loader.batches()), loader.loader().threads());
  int64_t step = 0;
  double window = 0, first = -1, last = 0;
  int64_t in_window = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int epoch = 0; epoch < epochs && step < max_steps; ++epoch) {
    loader.set_epoch(static_cast<uint64_t>(epoch));
    for (auto& batch : loader) {
      opt.zero_grad();
      const torch::Tensor loss = model->loss(batch);
      loss.backward();
      opt.step();
      window += loss.item<double>();
      ++in_window;
      if (++step % log_every == 0) {
        last = window / static_cast<double>(in_window);
        if (first < 0) first = last;
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("epoch %d step %lld mlm_loss %.4f (%.1f s)\n", epoch + 1,
                    static_cast<long long>(step), last, secs);
        std::fflush(stdout);
        window = 0;
        in_window = 0;
      }
      if (step >= max_steps) break;
    }
  }
  // A run shorter than --log-every, or ending between two progress lines, still reports its steps.
  if (in_window) {
    last = window / static_cast<double>(in_window);
    if (first < 0) first = last;
  }
  std::printf("RESULT first_mlm_loss %.4f last_mlm_loss %.4f steps %lld\n", first, last,
              static_cast<long long>(step));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  examples::keep_freed_tensor_memory();
  return examples::run_example("train_mlm", argc, argv, kSynopsis, kFlags, run);
}
