// Learning-curve plots as a user sees them: `anycl plot` and `anycl train --plot` write an SVG,
// which a real renderer (rsvg-convert, librsvg2-bin) turns into a PNG with the curves visible.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <sstream>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;
using anycl::test::slurp;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t i = text.find(what); i != std::string::npos; i = text.find(what, i + 1)) ++n;
  return n;
}

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width*height*3, alpha composited on white
};

uint32_t be32(const std::string& s, size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 |
         uint32_t(uint8_t(s[at + 2])) << 8 | uint32_t(uint8_t(s[at + 3]));
}

// Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what rsvg-convert writes) with zlib.
Image decode_png(const std::string& png) {
  REQUIRE_MESSAGE(png.size() > 33, "PNG too short");
  REQUIRE_MESSAGE(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0, "not a PNG");
  Image img;
  int color_type = -1;
  std::string idat;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t len = be32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (type == "IHDR") {
      img.width = be32(png, at + 8), img.height = be32(png, at + 12);
      REQUIRE_MESSAGE(png[at + 16] == 8, "bit depth");
      color_type = png[at + 17];
      REQUIRE_MESSAGE(png[at + 20] == 0, "interlaced PNG");
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, len);
    }
    at += 12 + len;
  }
  REQUIRE_MESSAGE((color_type == 6 || color_type == 2), "PNG colour type ", color_type);
  const size_t bpp = color_type == 6 ? 4 : 3, stride = img.width * bpp;
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf raw_size = uLongf(raw.size());
  REQUIRE(uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()),
                     uLong(idat.size())) == Z_OK);
  REQUIRE(raw_size == raw.size());
  std::vector<uint8_t> pixels(stride * img.height), prev(stride, 0);
  for (size_t y = 0; y < img.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* out = &pixels[y * stride];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? out[x - bpp] : 0, b = prev[x], c = x >= bpp ? prev[x - bpp] : 0;
      int pred = 0;
      if (filter == 1) pred = a;
      if (filter == 2) pred = b;
      if (filter == 3) pred = (a + b) / 2;
      if (filter == 4) {
        const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[x] = uint8_t(in[x] + pred);
    }
    std::copy(out, out + stride, prev.begin());
  }
  img.rgb.resize(size_t(img.width) * img.height * 3);
  for (size_t i = 0; i < size_t(img.width) * img.height; ++i)
    for (size_t ch = 0; ch < 3; ++ch) {
      const int v = pixels[i * bpp + ch], alpha = bpp == 4 ? pixels[i * bpp + 3] : 255;
      img.rgb[i * 3 + ch] = uint8_t((v * alpha + 255 * (255 - alpha)) / 255);
    }
  return img;
}

// Pixels near `r,g,b` (anti-aliasing blurs edges, so a loose match).
size_t pixels_like(const Image& img, int r, int g, int b) {
  size_t n = 0;
  for (size_t i = 0; i < img.rgb.size(); i += 3)
    n += std::abs(img.rgb[i] - r) < 40 && std::abs(img.rgb[i + 1] - g) < 40 &&
         std::abs(img.rgb[i + 2] - b) < 40;
  return n;
}

// Renders `svg` with rsvg-convert and checks the picture: right size, mostly white, with dark
// axes and text and both series' colours present. Skips the test where rsvg-convert is missing (a
// failure under CI=true): the SVG's own checks come before it.
void check_renders(const anycl::test::TempDir& dir, const std::string& svg) {
  if (run_command("command -v rsvg-convert").exit_code != 0)
    ANYCL_SKIP_TEST(Missing::installed_by_setup,
                    "rsvg-convert not found — apt-get install librsvg2-bin (tools/setup.sh installs it)");
  const std::string png = dir.file("curves.png");
  const auto r = run_command(fmt::format("rsvg-convert -o {} {}", png, svg));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const Image img = decode_png(slurp(png));
  CHECK(img.width == 960);
  CHECK(img.height == 420);
  const size_t total = size_t(img.width) * img.height;
  const size_t white = pixels_like(img, 255, 255, 255), dark = pixels_like(img, 30, 30, 30);
  const size_t blue = pixels_like(img, 0x1f, 0x77, 0xb4), orange = pixels_like(img, 0xff, 0x7f, 0x0e);
  MESSAGE(fmt::format("{}x{}: {} white, {} dark, {} blue, {} orange pixels", img.width, img.height, white,
                      dark, blue, orange));
  CHECK(white > total / 2);         // a white page...
  CHECK(white < total * 98 / 100);  // ...that is not blank
  CHECK(dark > 1000);               // axes, ticks and text
  CHECK(blue > 300);                // the train curves
  CHECK(orange > 300);              // the test curves
}

}  // namespace

TEST_CASE("anycl plot draws a metrics CSV that rsvg-convert renders") {
  anycl::test::TempDir dir;
  const std::string csv = dir.file("run.csv"), svg = dir.file("curves.svg");
  {
    std::ofstream out(csv);
    out << "epoch,train_loss,train_acc,test_loss,test_acc,seconds,samples_per_s\n";
    for (int e = 1; e <= 12; ++e)
      out << fmt::format("{},{:.4f},{:.4f},{:.4f},{:.4f},1.0,1000\n", e, 1.2 / e + 0.2, 0.95 - 0.4 / e,
                         1.0 / e + 0.35, 0.9 - 0.35 / e);
  }
  const auto r = run_command(fmt::format("{} plot {} -o {}", anycl_cli(), csv, svg));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string text = slurp(svg);
  CHECK(text.rfind("<?xml", 0) == 0);
  CHECK(count(text, "<polyline") == 4);  // train and test, in two panels
  CHECK(count(text, ">train</text>") == 2);
  CHECK(count(text, ">test</text>") == 2);
  CHECK(text.find(">Loss</text>") != std::string::npos);
  CHECK(text.find(">Accuracy</text>") != std::string::npos);
  CHECK(count(text, ">epoch</text>") == 2);
  check_renders(dir, svg);
}

TEST_CASE("anycl plot reads JSON Lines and rejects what is not a metrics file") {
  anycl::test::TempDir dir;
  const std::string jsonl = dir.file("run.jsonl"), bad = dir.file("bad.csv"), svg = dir.file("c.svg");
  {
    std::ofstream out(jsonl);
    out << "{\"epoch\": 1, \"train_loss\": 0.9, \"train_acc\": 0.6, \"val_loss\": 0.8, \"val_acc\": 0.7, "
           "\"seconds\": 1.0, \"samples_per_s\": 10.0}\n"
           "{\"epoch\": 2, \"train_loss\": 0.5, \"train_acc\": 0.8, \"val_loss\": 0.6, \"val_acc\": 0.75, "
           "\"seconds\": 1.0, \"samples_per_s\": 10.0}\n";
    std::ofstream(bad) << "hello,world\n1,2\n";
  }
  auto r = run_command(fmt::format("{} plot {} -o {}", anycl_cli(), jsonl, svg));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(count(slurp(svg), ">val</text>") == 2);
  r = run_command(fmt::format("{} plot {} -o {}", anycl_cli(), bad, svg));
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("epoch") != std::string::npos);
  r = run_command(fmt::format("{} plot {}", anycl_cli(), jsonl));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("-o") != std::string::npos);
  r = run_command(fmt::format("{} plot {} -o {}", anycl_cli(), dir.file("missing.csv"), svg));
  CHECK(r.exit_code == 1);
}

TEST_CASE("anycl train --plot writes the learning curves") {
  anycl::test::TempDir dir;
  const std::string svg = dir.file("train.svg");
  const auto r = run_command(
      fmt::format("{} train --limit 300 --epochs 2 --layers 16 --quiet --plot {}", anycl_cli(), svg));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string text = slurp(svg);
  CHECK(count(text, "<polyline") == 4);
  CHECK(count(text, "<circle") == 8);  // 2 epochs × 4 series
  check_renders(dir, svg);
}
