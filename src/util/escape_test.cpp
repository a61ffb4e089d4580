#include <catch2/catch.hpp>

#include "util/escape.h"
#include "util/text.h"

using namespace dbform;

TEST_CASE("escape: text shows every control character as an escape, on one line") {
  CHECK(shown_text("orders") == "orders");
  CHECK(shown_text("a\nb\r\tc") == "a\\nb\\r\\tc");
  CHECK(shown_text("\x1b[1A\x1b[2K ok\x07\x7f") == "\\x1b[1A\\x1b[2K ok\\x07\\x7f");
  CHECK(shown_text(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(shown_text("c1 \xc2\x9b" "2J") == "c1 \\u{9b}2J");                      // CSI as one C1 byte
  CHECK(shown_text("rtl \xe2\x80\xae" "gpj.exe") == "rtl \\u{202e}gpj.exe");  // a direction override
  CHECK(shown_text("line\xe2\x80\xa8sep") == "line\\u{2028}sep");
  CHECK(shown_text("caf\xc3\xa9 \xe2\x80\x94 ok") == "caf\xc3\xa9 \xe2\x80\x94 ok");  // other text is kept
  CHECK(shown_text("bad \xff") == "bad \xef\xbf\xbd");
  remember_secret("escape-test-secret-123");
  CHECK(shown_text("key escape-test-secret-123\n") == "key ***\\n");
}

TEST_CASE("escape: markdown puts outside text in a code span that nothing in it closes") {
  CHECK(markdown_code("orders") == "`orders`");
  CHECK(markdown_code("0002_md`<b>x [click](y) @team.sql") == "``0002_md`<b>x [click](y) @team.sql``");
  CHECK(markdown_code("a``b") == "```a``b```");
  CHECK(markdown_code("`edge`") == "`` `edge` ``");
  CHECK(markdown_code(" both ") == "`  both  `");
  CHECK(markdown_code("") == "` `");
  CHECK(markdown_code("x\n- **fake bullet**") == "`x\\n- **fake bullet**`");
  CHECK(markdown_cell("a|b") == "`a\\|b`");
  CHECK(markdown_cell("a\\|b") == "`a\\\\\\|b`");  // the backslash cannot escape the escape
  CHECK(markdown_fence("no ticks") == "```");
  CHECK(markdown_fence("x ```` y") == "`````");
}
