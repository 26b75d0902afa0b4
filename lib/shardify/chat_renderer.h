// Renders conversations with the chat template of a HF tokenizer_config.json. Jinja has no C++
// library in Debian, so shardify runs shardkit's one renderer, python/shardkit/chat_template.py
// (Debian's python3-jinja2, configured as HF transformers configures it), as coprocesses: one
// JSON line of messages in, one line of rendered text and assistant byte spans out. Each worker
// thread that renders checks a process out of a pool and back in, so rendering runs in parallel;
// rendering is a pure function of the conversation, so the output does not depend on which
// process rendered what.
//
// A template is code, and each conversation's rendering is bounded (RenderLimits): its bytes, its
// time, and the renderer's memory (chat_template.py); whatever the template raises, or a renderer
// that stops answering (killed and replaced), is that conversation's error. Renderers die with
// shardify (TetheredLauncher), and are killed, never waited for, when it is done with them.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardify/tethered_process.h"

namespace shardkit::shardify {

struct RenderLimits {
  // A conversation rendered to more UTF-8 bytes is an error (--max-render-bytes).
  uint64_t max_bytes = 64 << 10;
  // A conversation that takes longer to render is an error (--render-timeout); a renderer that
  // gives no answer for 2 s more is killed.
  double seconds = 10;
  // When set (write_dataset on Ctrl-C), render() stops within 0.1 s with Error(kTimeout).
  const std::atomic<bool>* cancel = nullptr;
};

struct RenderedChat {
  std::string text;
  // [start, end) UTF-8 byte spans of the assistant turns in `text`, in order.
  std::vector<std::pair<uint32_t, uint32_t>> spans;
  // Why this conversation has no rendering: the template raised (raise_exception, any Python
  // exception), went past a limit, or its renderer died on it.
  std::string error;
};

class ChatRenderer {
 public:
  enum class Spans { kAll, kLast, kNone };

  // Starts one renderer process for `config` (tokenizer_config.json) and waits until it has read
  // the template. Throws Error(kInvalidArgument) when Python, jinja2 or the script is missing or
  // the file has no usable chat template.
  ChatRenderer(std::filesystem::path config, Spans spans, RenderLimits limits = {});
  ~ChatRenderer();
  ChatRenderer(const ChatRenderer&) = delete;
  ChatRenderer& operator=(const ChatRenderer&) = delete;

  // Each of `messages_json` is one JSON array of {role, content} objects, without newlines
  // outside strings. They go through one process: `each(i, chat)` gets them in order as they
  // arrive, while the process renders the next ones. One round trip for all instead of one each
  // (a round trip wakes two processes), and the caller's work overlaps the rendering.
  // Thread-safe. Throws what `each` throws, and Error(kTimeout) when limits.cancel is set.
  void render(const std::vector<std::string>& messages_json,
              const std::function<void(size_t, RenderedChat&&)>& each) const;

  // Whether the template marks assistant turns itself with {% generation %}.
  bool template_marks_generation() const { return generation_; }
  // XXH3-64 (16 hex digits) of the config's chat_template text: what determines the ids.
  const std::string& fingerprint() const { return fingerprint_; }

  // The renderer script: $SHARDKIT_CHAT_RENDERER, else beside the installed programs
  // (<bin>/../share/shardkit/chat_template.py, or <bin>/../../chat_template.py inside a pip
  // installed package), else the source tree this program was built from.
  static std::filesystem::path script_path();

 private:
  class Process;
  // Starts a process and reads its ready line (whether the template has {% generation %}).
  std::unique_ptr<Process> start(bool* generation = nullptr) const;
  std::unique_ptr<Process> check_out() const;
  void check_in(std::unique_ptr<Process> process) const;
  // Sends messages [*next, end) to `process` and hands each reply to `each`, advancing *next.
  // Returns why the process stopped answering before `end` ("died (killed by signal 9)"), or
  // nothing when it answered every one.
  std::string exchange(Process& process, const std::vector<std::string>& messages, size_t* next,
                       size_t end, const std::function<void(size_t, RenderedChat&&)>& each) const;

  std::filesystem::path config_;
  Spans spans_;
  RenderLimits limits_;
  bool generation_ = false;
  std::string fingerprint_;
  mutable TetheredLauncher launcher_;  // before idle_: outlives the processes
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Process>> idle_;
};

}  // namespace shardkit::shardify
