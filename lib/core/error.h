// Errors are values that say what happened: a code a program can branch on, plus the file,
// the block (when one is involved) and a sentence a person can act on.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace shardkit {

enum class ErrorCode {
  kIo,               // the operating system refused (open, read, write, rename, mmap)
  kInvalidArgument,  // the caller asked for something impossible (bad schema, index out of range)
  kCorrupt,          // a checksum or structural invariant of a stored file does not hold
  kUnsupported,      // a valid file or option this version does not handle
  kExists,           // refusing to overwrite an existing dataset
  kInput,            // malformed corpus or tokenizer input (file and line in the message)
  kTimeout,          // a wait ran past its configured limit
  kCancelled,        // a wait was stopped on request (Ctrl-C, its reader closing)
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string file, std::string what, std::optional<uint64_t> block = {});

  ErrorCode code() const { return code_; }
  // The file the error is about; empty when none is.
  const std::string& file() const { return file_; }
  // The block index inside that file, when the error is about one block.
  std::optional<uint64_t> block() const { return block_; }
  // The bare reason, without file and block.
  const std::string& reason() const { return reason_; }

 private:
  struct Redacted {
    std::string file, what;
  };
  Error(ErrorCode code, Redacted parts, std::optional<uint64_t> block);

  ErrorCode code_;
  std::string file_;
  std::string reason_;
  std::optional<uint64_t> block_;
};

}  // namespace shardkit
