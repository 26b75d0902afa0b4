#include <doctest/doctest.h>

#include "core/error.h"
#include "core/schema.h"

using namespace shardkit;

TEST_CASE("schema computes offsets and record size") {
  Schema s({{"input_ids", DType::kU16, {512}},
            {"length", DType::kU16, {}},
            {"labels", DType::kI64, {}}});
  CHECK(s.record_size() == 1024 + 2 + 8);
  CHECK(s.at("length").offset == 1024);
  CHECK(s.at("labels").offset == 1026);
  CHECK(s.canonical() == "input_ids:u16[512];length:u16[];labels:i64[]");
  CHECK(Schema::parse(s.canonical()) == s);
}

TEST_CASE("schema rejects bad fields") {
  CHECK_THROWS_AS(Schema(std::vector<Field>{}), Error);
  CHECK_THROWS_AS(Schema({{"a", DType::kU8, {}}, {"a", DType::kU8, {}}}), Error);
  CHECK_THROWS_AS(Schema({{"1a", DType::kU8, {}}}), Error);
  CHECK_THROWS_AS(Schema({{"a", DType::kU8, {0}}}), Error);
  CHECK_THROWS_AS(Schema({{"a", DType::kI64, {65536, 65536}}}), Error);
  CHECK_THROWS_AS(Schema::parse("a:u16[3"), Error);
  CHECK_THROWS_AS(Schema::parse("a:u17[3]"), Error);
  CHECK_THROWS_AS(Schema::parse("a:u16[03]"), Error);  // not canonical
  CHECK_THROWS_AS(Schema::parse(""), Error);
}
