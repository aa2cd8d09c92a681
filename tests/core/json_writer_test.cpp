#include <gtest/gtest.h>

#include "core/json_writer.h"

TEST(JsonWriter, NestedCompact) {
  core::JsonWriter j(false);
  j.beginObject().field("a", 1).key("b").beginArray().value("x\"y").null().value(true).endArray();
  j.key("c").beginObject().endObject().field("d", 0.5).endObject();
  EXPECT_EQ(j.str(), R"({"a":1,"b":["x\"y",null,true],"c":{},"d":0.5})");
}

TEST(JsonWriter, EscapesControlCharacters) {
  EXPECT_EQ(core::JsonWriter::escape(std::string("a\nb\x01", 4)), "a\\nb\\u0001");
}
