"""Conformance: the image codecs of ops/cpu/image_codec_*.cc, run by
`weft run` against TensorFlow 2.21 on the same GraphDef (tf.compat.v1 graph
mode), the encoded files held in the graph as string constants:
  - DecodePng of TensorFlow's and Pillow's PNGs (8 and 16 bits; gray, gray
    with alpha, RGB, RGBA, palette), every `channels`, uint8 and uint16;
  - DecodeJpeg of TensorFlow's JPEGs (gray and RGB; every `ratio`,
    `fancy_upscaling` on and off, both DCT methods, `channels` 0, 1, 3),
    DecodeAndCropJpeg windows, ExtractJpegShape;
  - DecodeBmp of 24- and 32-bit BMPs both ways up;
  - DecodeGif of Pillow's GIFs: one frame, interlaced, and animations
    Pillow optimises into partial frames over transparency;
  - DecodeImage on each format: uint8, uint16 and float, with and without
    expand_animations;
  - EncodePng (every compression level, uint8 and uint16) and EncodeJpeg
    (qualities, chroma subsampling, progressive, optimize_size, density):
    the files Weft writes, decoded again in the graph, and their lengths.

Every value is compared exactly: both sides run the same libraries'
algorithms (libpng, libjpeg-turbo, giflib, zlib).

usage: image_codec_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow or Pillow is missing.
"""
import io
import os
import struct
import sys

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import compare_tf1_graph, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("image_codec", also=("PIL",))
from PIL import Image  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
raw = tf.raw_ops

rng = np.random.RandomState(31)


def smooth(h, w, c, dtype=np.uint8):
    """A smooth image with some noise: what cameras give JPEG."""
    y, x = np.mgrid[0:h, 0:w]
    top = 65535 if dtype == np.uint16 else 255
    planes = [(np.sin(x / (3.0 + k) + y / (5.0 + k)) * 0.4 + 0.5) * top for k in range(c)]
    img = np.stack(planes, axis=-1) + rng.uniform(-0.05, 0.05, (h, w, c)) * top
    return np.clip(img, 0, top).astype(dtype)


def run(case, build):
    """Builds fetches with build() in a fresh graph; compares all exactly."""
    g = tf1.Graph()
    with g.as_default():
        named = build()
        fetches = [tf1.identity(t, name=name).name[:-2] for name, t in named]
    compare_tf1_graph(WEFT, WORK, case, g, fetches, rtol=0, atol=0)


def encode_eager(fn, *args, **kwargs):
    """Bytes TensorFlow encodes, in a graph of its own."""
    g = tf1.Graph()
    with g.as_default(), tf1.Session(graph=g) as sess:
        return sess.run(fn(*args, **kwargs))


def pil_bytes(image, fmt, **kwargs):
    buf = io.BytesIO()
    image.save(buf, format=fmt, **kwargs)
    return buf.getvalue()


# ---- PNG.
pngs = {}
for c in (1, 2, 3, 4):
    pngs[f"u8_c{c}"] = encode_eager(tf.io.encode_png, smooth(9, 13, c))
    pngs[f"u16_c{c}"] = encode_eager(tf.io.encode_png, smooth(7, 5, c, np.uint16))
pngs["palette"] = pil_bytes(Image.fromarray(smooth(8, 11, 3)).convert("P"), "PNG")
pngs["gray_1bit"] = pil_bytes(Image.fromarray(smooth(6, 10, 1)[..., 0]).convert("1"), "PNG")


def png_fetches():
    out = []
    for name, data in pngs.items():
        s = tf1.constant(data)
        for channels in (0, 1, 3, 4):
            out.append((f"{name}_ch{channels}", raw.DecodePng(contents=s, channels=channels)))
            out.append((f"{name}_ch{channels}_u16",
                        raw.DecodePng(contents=s, channels=channels, dtype=tf.uint16)))
    return out


run("decode_png", png_fetches)

# ---- JPEG.
jpegs = {
    "rgb": encode_eager(tf.io.encode_jpeg, smooth(37, 53, 3), quality=90),
    "gray": encode_eager(tf.io.encode_jpeg, smooth(21, 30, 1), quality=75),
    "rgb_444": encode_eager(tf.io.encode_jpeg, smooth(16, 24, 3), chroma_downsampling=False),
    "progressive": encode_eager(tf.io.encode_jpeg, smooth(19, 17, 3), progressive=True),
}


def jpeg_fetches():
    out = []
    for name, data in jpegs.items():
        s = tf1.constant(data)
        out.append((f"{name}_shape", raw.ExtractJpegShape(contents=s)))
        for ratio in (1, 2, 4, 8):
            for fancy in (True, False):
                for dct in ("", "INTEGER_ACCURATE"):
                    for channels in (0, 1, 3):
                        out.append((f"{name}_r{ratio}_f{int(fancy)}_{dct or 'fast'}_ch{channels}",
                                    raw.DecodeJpeg(contents=s, channels=channels, ratio=ratio,
                                                   fancy_upscaling=fancy, dct_method=dct)))
        for k, window in enumerate(([0, 0, 8, 8], [3, 5, 10, 7], [1, 2, 15, 13])):
            out.append((f"{name}_crop{k}",
                        raw.DecodeAndCropJpeg(contents=s, crop_window=window, channels=3)))
    return out


run("decode_jpeg", jpeg_fetches)


# ---- BMP (written here: Pillow writes bottom-up 24-bit only).
def bmp(image, top_down):
    h, w, c = image.shape
    row = (w * c + 3) // 4 * 4
    rows = image if top_down else image[::-1]
    order = [2, 1, 0] + ([3] if c == 4 else [])  # RGB(A) to BGR(A)
    pixels = b"".join(np.ascontiguousarray(r[..., order]).tobytes() + b"\0" * (row - w * c)
                      for r in rows)
    header = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, 8 * c, 0,
                         len(pixels), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54) + header + pixels


bmps = {f"c{c}_{'down' if td else 'up'}": bmp(smooth(6, 7, c), td)
        for c in (3, 4) for td in (False, True)}


def bmp_fetches():
    out = []
    for name, data in bmps.items():
        for channels in (0, 3, 4):
            out.append((f"{name}_ch{channels}",
                        raw.DecodeBmp(contents=tf1.constant(data), channels=channels)))
    return out


run("decode_bmp", bmp_fetches)

# ---- GIF (Pillow's: palettes, interlacing, optimised animations).
frames = [Image.fromarray(smooth(24, 20, 3)).quantize(32)]
for k in range(1, 5):
    img = np.array(frames[0].convert("RGB"))
    img[3 * k:3 * k + 6, 2 * k:2 * k + 5] = [40 * k, 255 - 30 * k, 17 * k]
    frames.append(Image.fromarray(img).quantize(32))
gifs = {
    "one_frame": pil_bytes(frames[0], "GIF"),
    "interlaced": pil_bytes(Image.fromarray(smooth(40, 33, 3)).quantize(64), "GIF",
                            interlace=True),
    "animation": pil_bytes(frames[0], "GIF", save_all=True, append_images=frames[1:],
                           duration=40, loop=0),
    "optimised": pil_bytes(frames[0], "GIF", save_all=True, append_images=frames[1:],
                           optimize=True, disposal=1, transparency=0),
}


def gif_fetches():
    out = []
    for name, data in gifs.items():
        s = tf1.constant(data)
        out.append((f"{name}_gif", raw.DecodeGif(contents=s)))
        for expand in (True, False):
            for dtype in (tf.uint8, tf.uint16, tf.float32):
                out.append((f"{name}_image_{int(expand)}_{dtype.name}",
                            raw.DecodeImage(contents=s, channels=3, dtype=dtype,
                                            expand_animations=expand)))
    return out


run("decode_gif", gif_fetches)


# ---- DecodeImage on the other formats: uint16 and float widening.
def decode_image_fetches():
    out = []
    for name, data in (("png", pngs["u8_c3"]), ("png16", pngs["u16_c4"]),
                       ("jpeg", jpegs["rgb"]), ("bmp", bmps["c4_up"])):
        for dtype in (tf.uint8, tf.uint16, tf.float32):
            for channels in ((0, 3) if name != "png16" else (0, 4)):
                out.append((f"{name}_{dtype.name}_ch{channels}",
                            raw.DecodeImage(contents=tf1.constant(data), channels=channels,
                                            dtype=dtype)))
    return out


run("decode_image", decode_image_fetches)


# ---- Encoders: Weft's files decoded again, and their lengths.
def encode_fetches():
    out = []
    u8, u16 = tf1.constant(smooth(15, 22, 3)), tf1.constant(smooth(6, 9, 4, np.uint16))
    for level in (-1, 0, 1, 6, 9):
        for name, img in (("u8", u8), ("u16", u16)):
            enc = raw.EncodePng(image=img, compression=level)
            out.append((f"png_{name}_{level}", raw.DecodePng(contents=enc, channels=0,
                                                             dtype=img.dtype)))
            out.append((f"png_{name}_{level}_len", tf.strings.length(enc)))
    rgb, gray = tf1.constant(smooth(33, 41, 3)), tf1.constant(smooth(12, 10, 1))
    for k, kw in enumerate(({}, {"quality": 50}, {"quality": 100, "chroma_downsampling": False},
                            {"progressive": True}, {"optimize_size": True},
                            {"format": "grayscale"}, {"density_unit": "cm", "x_density": 72},
                            {"xmp_metadata": "weft"})):
        img = gray if kw.get("format") == "grayscale" else rgb
        enc = raw.EncodeJpeg(image=img, **kw)
        out.append((f"jpeg{k}", raw.DecodeJpeg(contents=enc)))
        out.append((f"jpeg{k}_len", tf.strings.length(enc)))
    return out


run("encode", encode_fetches)

sys.exit(summary_exit_code())
