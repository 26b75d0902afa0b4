// SQL text for reading Parquet through DuckDB: quoted names and literals, field paths, and the
// check that keeps a --where predicate inside its WHERE clause.
#pragma once

#include <string>
#include <string_view>

namespace shardkit::shardify::parquet_sql {

std::string quote_identifier(std::string_view name);  // "a""b"
std::string quote_literal(std::string_view text);     // 'it''s'

// "meta.title" -> "meta"['title']: a top-level column, then fields of struct columns.
std::string field_expression(std::string_view dotted_path);

// Empty when `predicate` is a single expression that stays inside `WHERE (...)`: balanced
// parentheses, closed quotes, no ';' and no comments. Otherwise what is wrong with it.
std::string where_problem(std::string_view predicate);

}  // namespace shardkit::shardify::parquet_sql
