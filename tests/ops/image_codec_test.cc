// The image codec kernels (ops/cpu/image_codec_*.cc): round trips through
// EncodePng/DecodePng (uint8 and uint16, every channel count, batches) and
// EncodeJpeg/DecodeJpeg, channel conversions, BMP rows both ways up, GIF
// animations composed frame over frame (partial, transparent, interlaced),
// DecodeImage's sniffing and float output, and the hostile inputs a server
// sees: truncated files, random bytes, a PNG and a JPEG claiming sizes no
// tensor should hold (refused before allocating), bad attrs and shapes.
// The values against TensorFlow itself are in
// tests/conformance/image_codec_test.py.
#include <gif_lib.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;

// An INVALID_ARGUMENT whose message holds `needle`.
void ExpectError(const absl::Status& s, absl::string_view needle) {
  EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument &&
              absl::StrContains(s.message(), needle))
      << "want INVALID_ARGUMENT with '" << needle << "', got " << s;
}

Tensor Bytes(const std::string& s) { return Scalar<std::string>(s); }

template <typename T>
Tensor Pattern(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape(shape));
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<T>()[i] = static_cast<T>(gen());
  return t;
}

NodeBuilder EncodePng(DataType t, int compression = -1) {
  return NodeBuilder("enc", "EncodePng").Attr("T", t).Attr("compression", compression);
}

NodeBuilder Decode(const std::string& op, int channels = 0) {
  NodeBuilder b("dec", op);
  if (op != "DecodeGif") b.Attr("channels", channels);
  return b;
}

std::string EncodedPng(const Tensor& image) {
  return RunOk(EncodePng(image.dtype()), {image}).data<std::string>()[0];
}

TEST(ImageCodec, PngRoundTripsEveryChannelCount) {
  for (int channels = 1; channels <= 4; ++channels) {
    Tensor image = Pattern<uint8_t>({7, 5, channels}, channels);
    Tensor back = RunOk(Decode("DecodePng"), {Bytes(EncodedPng(image))});
    ExpectTensorEqual(back, image);
    Tensor wide = Pattern<uint16_t>({3, 9, channels}, 10 + channels);
    Tensor back16 = RunOk(Decode("DecodePng").Attr("dtype", DT_UINT16),
                          {Bytes(EncodedPng(wide))});
    ExpectTensorEqual(back16, wide);
  }
}

TEST(ImageCodec, PngChannelConversions) {
  Tensor gray = MakeTensor<uint8_t>({1, 2, 1}, {10, 200});
  const std::string png = EncodedPng(gray);
  ExpectTensorEqual(RunOk(Decode("DecodePng", 3), {Bytes(png)}),
                    MakeTensor<uint8_t>({1, 2, 3}, {10, 10, 10, 200, 200, 200}));
  ExpectTensorEqual(RunOk(Decode("DecodePng", 4), {Bytes(png)}),
                    MakeTensor<uint8_t>({1, 2, 4}, {10, 10, 10, 255, 200, 200, 200, 255}));
  // 8-bit data widened to 16 bits is x * 257; 16-bit data keeps the top byte.
  ExpectTensorEqual(RunOk(Decode("DecodePng").Attr("dtype", DT_UINT16), {Bytes(png)}),
                    MakeTensor<uint16_t>({1, 2, 1}, {2570, 51400}));
  Tensor wide = MakeTensor<uint16_t>({1, 1, 1}, {0x1234});
  ExpectTensorEqual(RunOk(Decode("DecodePng"), {Bytes(EncodedPng(wide))}),
                    MakeTensor<uint8_t>({1, 1, 1}, {0x12}));
  Tensor rgba = MakeTensor<uint8_t>({1, 1, 4}, {1, 2, 3, 4});
  ExpectTensorEqual(RunOk(Decode("DecodePng", 3), {Bytes(EncodedPng(rgba))}),
                    MakeTensor<uint8_t>({1, 1, 3}, {1, 2, 3}));
}

TEST(ImageCodec, EncodePngBatchesAndChecks) {
  Tensor batch = Pattern<uint8_t>({2, 3, 4, 5, 3}, 7);
  Tensor out = RunOk(EncodePng(DT_UINT8), {batch});
  ASSERT_EQ(out.shape(), TensorShape({2, 3}));
  Tensor last = RunOk(Decode("DecodePng"), {Bytes(out.data<std::string>()[5])});
  for (int64_t i = 0; i < 60; ++i) {
    EXPECT_EQ(last.data<uint8_t>()[i], batch.data<uint8_t>()[5 * 60 + i]);
  }
  ExpectError(RunStatus(EncodePng(DT_UINT8), {Pattern<uint8_t>({3, 4}, 1)}),
              "images must be at least rank 3");
  ExpectError(RunStatus(EncodePng(DT_UINT8), {Pattern<uint8_t>({3, 4, 5}, 1)}),
              "image must have 1, 2, 3, or 4 channels, got 5");
  ExpectError(RunStatus(EncodePng(DT_UINT8, 10), {Pattern<uint8_t>({3, 4, 3}, 1)}),
              "compression should be in [-1,9], got 10");
  ExpectError(RunStatus(EncodePng(DT_UINT8), {Pattern<uint8_t>({0, 4, 3}, 1)}),
              "PNG encoding failed at the following flattened batch indices: 0");
}

// A PNG whose IHDR claims width x height (an RGB image), with one empty
// IDAT chunk: enough for libpng to read the header.
std::string PngClaiming(uint32_t width, uint32_t height) {
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  auto chunk = [&](const std::string& type, const std::string& body) {
    std::string typed = type + body;
    uLong crc = crc32(0, reinterpret_cast<const Bytef*>(typed.data()), typed.size());
    return be32(body.size()) + typed + be32(static_cast<uint32_t>(crc));
  };
  std::string ihdr = be32(width) + be32(height) + std::string("\x08\x02\x00\x00\x00", 5);
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) +
         chunk("IDAT", std::string("\x78\x9c\x03\x00\x00\x00\x00\x01", 8)) +
         chunk("IEND", "");
}

TEST(ImageCodec, HostilePngs) {
  ExpectError(RunStatus(Decode("DecodePng"), {Bytes(PngClaiming(100000, 100000))}),
              "PNG size too large for int: 100000 by 100000");
  ExpectError(RunStatus(Decode("DecodePng").Attr("dtype", DT_UINT16),
                        {Bytes(PngClaiming(20000, 20000))}),
              "over 2^31 bytes");
  // A small claim with no pixel data fails in the rows, not by aborting.
  ExpectError(RunStatus(Decode("DecodePng"), {Bytes(PngClaiming(64, 64))}),
              "Invalid PNG data");
  const std::string png = EncodedPng(Pattern<uint8_t>({32, 32, 3}, 3));
  for (size_t cut : {size_t{8}, size_t{20}, size_t{40}, png.size() / 2, png.size() - 13}) {
    absl::Status s = RunStatus(Decode("DecodePng"), {Bytes(png.substr(0, cut))});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << cut << ": " << s;
    EXPECT_NE(s.message().find("'dec'"), absl::string_view::npos) << s;
  }
  std::string flipped = png;
  flipped[png.size() / 2] ^= 0x55;
  EXPECT_EQ(RunStatus(Decode("DecodePng"), {Bytes(flipped)}).code(),
            absl::StatusCode::kInvalidArgument);
  std::mt19937 gen(5);
  for (int i = 0; i < 50; ++i) {
    std::string junk = std::string("\x89PNG\r\n\x1a\n", 8);
    for (int k = 0; k < 200; ++k) junk.push_back(static_cast<char>(gen()));
    EXPECT_EQ(RunStatus(Decode("DecodePng"), {Bytes(junk)}).code(),
              absl::StatusCode::kInvalidArgument);
  }
  ExpectError(RunStatus(Decode("DecodePng"), {Bytes("random bytes")}),
              "Unknown image file format");
  ExpectError(RunStatus(Decode("DecodePng"), {Bytes("")}), "Input is empty.");
  ExpectError(RunStatus(Decode("DecodePng", 2), {Bytes(png)}),
              "`channels` must be 0, 1, 3 or 4 but got 2");
}

std::string EncodedJpeg(const Tensor& image, int quality = 95) {
  return RunOk(NodeBuilder("enc", "EncodeJpeg").Attr("quality", quality), {image})
      .data<std::string>()[0];
}

// A smooth image: JPEG keeps it within a few levels.
Tensor Smooth(int64_t h, int64_t w, int64_t c) {
  Tensor t(DT_UINT8, TensorShape({h, w, c}));
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    const int64_t y = i / (w * c), x = (i / c) % w, k = i % c;
    t.data<uint8_t>()[i] = static_cast<uint8_t>(60 + y * 2 + x * 2 + k * 10);
  }
  return t;
}

TEST(ImageCodec, JpegRoundTripAndShape) {
  Tensor image = Smooth(24, 40, 3);
  const std::string jpeg = EncodedJpeg(image);
  Tensor back = RunOk(Decode("DecodeJpeg").Attr("dct_method", "INTEGER_ACCURATE"),
                      {Bytes(jpeg)});
  ASSERT_EQ(back.shape(), image.shape());
  for (int64_t i = 0; i < image.NumElements(); ++i) {
    ASSERT_NEAR(back.data<uint8_t>()[i], image.data<uint8_t>()[i], 12) << i;
  }
  Tensor shape = RunOk(NodeBuilder("s", "ExtractJpegShape"), {Bytes(jpeg)});
  ExpectTensorEqual(shape, MakeTensor<int32_t>({3}, {24, 40, 3}));
  EXPECT_EQ(RunOk(Decode("DecodeJpeg").Attr("ratio", 4), {Bytes(jpeg)}).shape(),
            TensorShape({6, 10, 3}));
  EXPECT_EQ(RunOk(Decode("DecodeJpeg", 1), {Bytes(jpeg)}).shape(),
            TensorShape({24, 40, 1}));
  Tensor crop = RunOk(Decode("DecodeAndCropJpeg"),
                      {Bytes(jpeg), MakeTensor<int32_t>({4}, {3, 17, 5, 9})});
  ASSERT_EQ(crop.shape(), TensorShape({5, 9, 3}));
  for (int64_t y = 0; y < 5; ++y) {
    for (int64_t i = 0; i < 27; ++i) {
      ASSERT_EQ(crop.data<uint8_t>()[y * 27 + i],
                RunOk(Decode("DecodeJpeg"), {Bytes(jpeg)})
                    .data<uint8_t>()[(y + 3) * 120 + 17 * 3 + i]);
    }
  }
  ExpectError(RunStatus(Decode("DecodeAndCropJpeg"),
                        {Bytes(jpeg), MakeTensor<int32_t>({4}, {20, 0, 5, 9})}),
              "Invalid JPEG data or crop window");
  Tensor gray = RunOk(NodeBuilder("e", "EncodeJpegVariableQuality"),
                      {Smooth(8, 8, 1), Scalar<int32_t>(50)});
  EXPECT_EQ(RunOk(Decode("DecodeImage"), {gray}).shape(), TensorShape({8, 8, 1}));
}

TEST(ImageCodec, HostileJpegs) {
  const std::string jpeg = EncodedJpeg(Smooth(64, 64, 3));
  for (size_t cut : {size_t{3}, size_t{50}, jpeg.size() / 2, jpeg.size() - 2}) {
    absl::Status s = RunStatus(Decode("DecodeJpeg"), {Bytes(jpeg.substr(0, cut))});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << cut << ": " << s;
  }
  // With try_recover_truncated, a file cut in its scan decodes in full.
  EXPECT_EQ(RunOk(Decode("DecodeJpeg").Attr("try_recover_truncated", true),
                  {Bytes(jpeg.substr(0, jpeg.size() - 200))})
                .shape(),
            TensorShape({64, 64, 3}));
  // A frame header claiming 65000 x 65000 is refused before decoding.
  std::string huge = jpeg;
  const size_t sof = huge.find("\xff\xc0");
  ASSERT_NE(sof, std::string::npos);
  huge[sof + 5] = huge[sof + 7] = static_cast<char>(0xfd);
  huge[sof + 6] = huge[sof + 8] = static_cast<char>(0xe8);
  ExpectError(RunStatus(Decode("DecodeJpeg"), {Bytes(huge)}),
              "JPEG size too large for int: 65000 by 65000");
  std::mt19937 gen(9);
  for (int i = 0; i < 50; ++i) {
    std::string junk = jpeg.substr(0, 20 + i * 10);
    for (int k = 0; k < 300; ++k) junk.push_back(static_cast<char>(gen()));
    absl::Status s = RunStatus(Decode("DecodeJpeg"), {Bytes(junk)});
    EXPECT_TRUE(s.ok() || s.code() == absl::StatusCode::kInvalidArgument) << s;
  }
  ExpectError(RunStatus(Decode("DecodeJpeg", 4), {Bytes(jpeg)}),
              "JPEG does not support 4 channels");
  ExpectError(RunStatus(Decode("DecodeJpeg").Attr("ratio", 3), {Bytes(jpeg)}),
              "ratio must be 1, 2, 4, or 8, got 3");
  ExpectError(RunStatus(NodeBuilder("s", "ExtractJpegShape"), {Bytes("\x89PNG")}),
              "Invalid JPEG data, size 4");
  ExpectError(RunStatus(NodeBuilder("e", "EncodeJpeg"), {Pattern<uint8_t>({2, 2, 2}, 1)}),
              "image must have 1 or 3 channels");
  ExpectError(RunStatus(NodeBuilder("e", "EncodeJpeg").Attr("quality", 101),
                        {Pattern<uint8_t>({2, 2, 3}, 1)}),
              "quality must be in [0,100], got 101");
  ExpectError(RunStatus(NodeBuilder("e", "EncodeJpeg"), {Pattern<uint8_t>({0, 2, 3}, 1)}),
              "JPEG encoding failed");
  ExpectError(RunStatus(Decode("DecodeAndCropJpeg"),
                        {Bytes(EncodedPng(Pattern<uint8_t>({2, 2, 3}, 1))),
                         MakeTensor<int32_t>({4}, {0, 0, 1, 1})}),
              "DecodeAndCropJpeg operation can run on JPEG only, but detected PNG.");
}

// A 24- or 32-bit BMP of `image` (RGB(A) rows), bottom-up unless top_down.
std::string Bmp(const Tensor& image, bool top_down) {
  const int64_t h = image.shape().dim_size(0), w = image.shape().dim_size(1);
  const int64_t c = image.shape().dim_size(2);
  const int64_t row = (8 * c * w + 31) / 32 * 4;
  auto le32 = [](int64_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (8 * i));
    return s;
  };
  std::string out = "BM" + le32(54 + row * h) + le32(0) + le32(54) + le32(40) +
                    le32(w) + le32(top_down ? -h : h) + std::string("\x01\x00", 2) +
                    std::string(1, static_cast<char>(c * 8)) + std::string(1, '\0') +
                    std::string(24, '\0');
  for (int64_t i = 0; i < h; ++i) {
    const int64_t y = top_down ? i : h - 1 - i;
    std::string line;
    for (int64_t x = 0; x < w; ++x) {
      const uint8_t* p = image.data<uint8_t>() + (y * w + x) * c;
      line += {static_cast<char>(p[2]), static_cast<char>(p[1]), static_cast<char>(p[0])};
      if (c == 4) line.push_back(static_cast<char>(p[3]));
    }
    line.resize(row, '\0');
    out += line;
  }
  return out;
}

TEST(ImageCodec, BmpBothWaysUp) {
  for (int c : {3, 4}) {
    Tensor image = Pattern<uint8_t>({3, 5, c}, c);
    for (bool top_down : {false, true}) {
      ExpectTensorEqual(RunOk(Decode("DecodeBmp"), {Bytes(Bmp(image, top_down))}), image);
    }
  }
  Tensor rgb = MakeTensor<uint8_t>({1, 1, 3}, {1, 2, 3});
  ExpectTensorEqual(RunOk(Decode("DecodeBmp", 4), {Bytes(Bmp(rgb, false))}),
                    MakeTensor<uint8_t>({1, 1, 4}, {1, 2, 3, 255}));
  Tensor f = RunOk(Decode("DecodeImage").Attr("dtype", DT_FLOAT), {Bytes(Bmp(rgb, false))});
  EXPECT_FLOAT_EQ(f.data<float>()[2], 3.0f / 255.0f);
  const std::string bmp = Bmp(Pattern<uint8_t>({4, 4, 3}, 2), false);
  ExpectError(RunStatus(Decode("DecodeBmp"), {Bytes(bmp.substr(0, 60))}),
              "Input size should match");
  ExpectError(RunStatus(Decode("DecodeBmp"), {Bytes(bmp.substr(0, 20))}),
              "Incomplete bmp content");
  ExpectError(RunStatus(Decode("DecodeBmp", 1), {Bytes(bmp)}),
              "`channels` must be 0, 3 or 4 for BMP, but got 1");
  ExpectError(RunStatus(Decode("DecodeBmp"), {Bytes(EncodedJpeg(Smooth(8, 8, 3)))}),
              "Trying to decode JPEG format using DecodeBmp op");
}

TEST(ImageCodec, DecodeImageSniffsAndConverts) {
  Tensor image = Pattern<uint8_t>({4, 6, 3}, 4);
  const std::string png = EncodedPng(image);
  Tensor f = RunOk(Decode("DecodeImage").Attr("dtype", DT_FLOAT), {Bytes(png)});
  ASSERT_EQ(f.shape(), image.shape());
  for (int64_t i = 0; i < image.NumElements(); ++i) {
    EXPECT_EQ(f.data<float>()[i],
              static_cast<float>(image.data<uint8_t>()[i] * 257) * (1.0f / 65535.0f));
  }
  // DecodeJpeg reads a PNG too; DecodeGif gives it a frame dimension.
  ExpectTensorEqual(RunOk(Decode("DecodeJpeg"), {Bytes(png)}), image);
  EXPECT_EQ(RunOk(Decode("DecodeGif"), {Bytes(png)}).shape(), TensorShape({1, 4, 6, 3}));
  ExpectError(RunStatus(Decode("DecodeImage"), {Bytes("hello, world")}),
              "Unknown image file format. One of JPEG, PNG, GIF, BMP required.");
  ExpectError(RunStatus(Decode("DecodePng"),
                        {MakeTensor<std::string>({1}, {png})}),
              "`contents` must be scalar");
}

// A GIF written by giflib's encoder: a logical screen and frames, each a
// rectangle of palette indices with an optional transparent index.
struct GifFrame {
  int left = 0, top = 0, width = 0, height = 0;
  std::vector<uint8_t> indices;  // height x width
  int transparent = NO_TRANSPARENT_COLOR;
  bool interlace = false;
};

int AppendGifBytes(GifFileType* gif, const GifByteType* data, int size) {
  static_cast<std::string*>(gif->UserData)->append(reinterpret_cast<const char*>(data),
                                                  size);
  return size;
}

// Palette entry i is (i, 2i, 255 - i), 16 entries.
GifColorType PaletteColor(int i) {
  return {static_cast<GifByteType>(i), static_cast<GifByteType>(2 * i),
          static_cast<GifByteType>(255 - i)};
}

std::string Gif(int width, int height, const std::vector<GifFrame>& frames) {
  std::string out;
  int error = 0;
  GifFileType* gif = EGifOpen(&out, AppendGifBytes, &error);
  EXPECT_NE(gif, nullptr);
  std::vector<GifColorType> colors;
  for (int i = 0; i < 16; ++i) colors.push_back(PaletteColor(i));
  ColorMapObject* map = GifMakeMapObject(16, colors.data());
  EGifSetGifVersion(gif, true);
  EXPECT_EQ(EGifPutScreenDesc(gif, width, height, 8, 0, map), GIF_OK);
  for (const GifFrame& f : frames) {
    if (f.transparent != NO_TRANSPARENT_COLOR) {
      GraphicsControlBlock gcb{};
      gcb.TransparentColor = f.transparent;
      GifByteType ext[4];
      const size_t n = EGifGCBToExtension(&gcb, ext);
      EXPECT_EQ(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(n), ext),
                GIF_OK);
    }
    EXPECT_EQ(EGifPutImageDesc(gif, f.left, f.top, f.width, f.height, f.interlace,
                               nullptr),
              GIF_OK);
    std::vector<int> rows;
    if (f.interlace) {
      for (auto [start, step] : {std::pair{0, 8}, {4, 8}, {2, 4}, {1, 2}}) {
        for (int y = start; y < f.height; y += step) rows.push_back(y);
      }
    } else {
      for (int y = 0; y < f.height; ++y) rows.push_back(y);
    }
    for (int y : rows) {
      std::vector<GifPixelType> line(f.indices.begin() + y * f.width,
                                     f.indices.begin() + (y + 1) * f.width);
      EXPECT_EQ(EGifPutLine(gif, line.data(), f.width), GIF_OK);
    }
  }
  EGifCloseFile(gif, &error);
  GifFreeMapObject(map);
  return out;
}

GifFrame Frame(int left, int top, int width, int height, uint32_t seed) {
  GifFrame f{left, top, width, height, {}};
  std::mt19937 gen(seed);
  for (int i = 0; i < width * height; ++i) f.indices.push_back(gen() % 16);
  return f;
}

// The frames TensorFlow's composition gives: frame k over frame k-1 (frame
// 0 over black), clipped to the screen, transparent indices see through.
Tensor Composed(int width, int height, const std::vector<GifFrame>& frames) {
  const int64_t n = static_cast<int64_t>(frames.size());
  Tensor t(DT_UINT8, TensorShape({n, height, width, 3}));
  uint8_t* p = t.data<uint8_t>();
  std::fill(p, p + t.NumElements(), 0);
  for (int64_t k = 0; k < n; ++k) {
    uint8_t* canvas = p + k * height * width * 3;
    if (k > 0) std::copy(canvas - height * width * 3, canvas, canvas);
    const GifFrame& f = frames[k];
    for (int y = 0; y < f.height; ++y) {
      for (int x = 0; x < f.width; ++x) {
        const int cy = f.top + y, cx = f.left + x, index = f.indices[y * f.width + x];
        if (cy >= height || cx >= width || index == f.transparent) continue;
        const GifColorType c = PaletteColor(index);
        uint8_t* px = canvas + (cy * width + cx) * 3;
        px[0] = c.Red;
        px[1] = c.Green;
        px[2] = c.Blue;
      }
    }
  }
  return t;
}

TEST(ImageCodec, GifFramesComposeOverTheLastOne) {
  std::vector<GifFrame> frames = {Frame(0, 0, 7, 5, 1)};
  ExpectTensorEqual(RunOk(Decode("DecodeGif"), {Bytes(Gif(7, 5, frames))}),
                    Composed(7, 5, frames));
  // A partial first frame over black; a transparent second frame; a third
  // past the screen's edge (clipped); an interlaced fourth.
  frames = {Frame(2, 1, 4, 3, 2), Frame(0, 0, 9, 6, 3), Frame(5, 3, 6, 6, 4),
            Frame(0, 0, 9, 6, 5)};
  frames[1].transparent = 7;
  frames[3].interlace = true;
  frames[3].transparent = 0;
  const std::string gif = Gif(9, 6, frames);
  Tensor want = Composed(9, 6, frames);
  ExpectTensorEqual(RunOk(Decode("DecodeGif"), {Bytes(gif)}), want);
  ExpectTensorEqual(RunOk(Decode("DecodeImage"), {Bytes(gif)}), want);
  // Without expand_animations, the first frame as [h, w, 3]; uint16 is
  // x * 256 and float x / 255, as TensorFlow widens GIF, JPEG and BMP.
  Tensor first = RunOk(Decode("DecodeImage").Attr("expand_animations", false), {Bytes(gif)});
  ASSERT_EQ(first.shape(), TensorShape({6, 9, 3}));
  Tensor wide = RunOk(Decode("DecodeImage").Attr("dtype", DT_UINT16), {Bytes(gif)});
  Tensor f = RunOk(Decode("DecodeImage").Attr("dtype", DT_FLOAT), {Bytes(gif)});
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const int v = want.data<uint8_t>()[i];
    if (i < first.NumElements()) ASSERT_EQ(first.data<uint8_t>()[i], v);
    ASSERT_EQ(wide.data<uint16_t>()[i], v * 256) << i;
    ASSERT_EQ(f.data<float>()[i], static_cast<float>(v) * (1.0f / 255.0f)) << i;
  }
  ExpectError(RunStatus(Decode("DecodeImage", 1), {Bytes(gif)}),
              "channels must be 0 or 3 for GIF, got 1");
}

TEST(ImageCodec, HostileGifs) {
  const std::string gif = Gif(8, 8, {Frame(0, 0, 8, 8, 6), Frame(0, 0, 8, 8, 7)});
  for (size_t cut : {size_t{6}, size_t{13}, size_t{40}, gif.size() / 2}) {
    ExpectError(RunStatus(Decode("DecodeGif"), {Bytes(gif.substr(0, cut))}),
                "Invalid GIF data");
  }
  // A screen of 60000 x 60000 in a few bytes: refused before allocating.
  std::string huge = gif;
  huge[6] = huge[8] = static_cast<char>(0x60);
  huge[7] = huge[9] = static_cast<char>(0xea);
  ExpectError(RunStatus(Decode("DecodeGif"), {Bytes(huge)}), "GIF size too large");
  // A frame descriptor claiming 65535 x 65535 inside a small screen.
  std::string frame = Gif(4, 4, {Frame(0, 0, 4, 4, 8)});
  const size_t desc = frame.find(',');  // the image separator
  ASSERT_NE(desc, std::string::npos);
  frame[desc + 5] = frame[desc + 6] = frame[desc + 7] = frame[desc + 8] =
      static_cast<char>(0xff);
  ExpectError(RunStatus(Decode("DecodeGif"), {Bytes(frame)}), "GIF frame size too large");
  // Indices past the palette: the global map cut to 2 colours (the pixels
  // still carry 4 bits each).
  std::string small = Gif(4, 4, {Frame(0, 0, 4, 4, 9)});
  small[10] = static_cast<char>(small[10] & ~0x07);
  small.erase(13 + 6, 48 - 6);
  ExpectError(RunStatus(Decode("DecodeGif"), {Bytes(small)}),
              "outside of color map range 2");
  // A screen with no image at all.
  ExpectError(RunStatus(Decode("DecodeGif"), {Bytes(Gif(4, 4, {}))}),
              "does not contain any image");
}

}  // namespace
}  // namespace weft
