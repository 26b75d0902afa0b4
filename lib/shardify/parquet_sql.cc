#include "shardify/parquet_sql.h"

namespace shardkit::shardify::parquet_sql {
namespace {

std::string quoted(std::string_view text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote) out += quote;
    out += c;
  }
  return out + quote;
}

}  // namespace

std::string quote_identifier(std::string_view name) { return quoted(name, '"'); }
std::string quote_literal(std::string_view text) { return quoted(text, '\''); }

std::string field_expression(std::string_view path) {
  size_t dot = path.find('.');
  std::string expr = quote_identifier(path.substr(0, dot));
  while (dot != std::string_view::npos) {
    const size_t start = dot + 1;
    dot = path.find('.', start);
    expr += "[" +
            quote_literal(path.substr(start, dot == std::string_view::npos ? dot : dot - start)) +
            "]";
  }
  return expr;
}

std::string where_problem(std::string_view predicate) {
  // The predicate is the user's own DuckDB SQL and runs in a connection that can read only the
  // input file; this check catches a predicate that would end the clause or the statement.
  int depth = 0;
  bool blank = true;
  for (size_t i = 0; i < predicate.size(); ++i) {
    const char c = predicate[i];
    if (c == '\'' || c == '"') {
      const size_t close = [&] {
        for (size_t j = i + 1; j < predicate.size(); ++j) {
          if (predicate[j] != c) continue;
          if (j + 1 < predicate.size() && predicate[j + 1] == c) {
            ++j;  // a doubled quote stands for itself
            continue;
          }
          return j;
        }
        return std::string_view::npos;
      }();
      if (close == std::string_view::npos)
        return std::string("an unclosed ") + (c == '\'' ? "string literal" : "quoted identifier");
      i = close;
      blank = false;
      continue;
    }
    if (c == ';') return "';' would end the statement";
    if (predicate.substr(i, 2) == "--" || predicate.substr(i, 2) == "/*")
      return "comments are not allowed";
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) return "a ')' without its '('";
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') blank = false;
  }
  if (depth != 0) return "a '(' without its ')'";
  if (blank) return "the predicate is empty";
  return {};
}

}  // namespace shardkit::shardify::parquet_sql
