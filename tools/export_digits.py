"""Exports scikit-learn's bundled 8x8 digits to Weft's data set file.

usage: export_digits.py OUT_PATH

The layout is documented in graph/models/datasets.h: magic "WEFTDS1\\n",
five little-endian uint32 (count, rows, cols, num_classes, pixel_max = 16),
then per example 64 uint8 pixels (row-major) and one uint8 label. Written to
a temporary file and renamed, so a partial file never appears.
"""
import os
import struct
import sys


def main():
    out = sys.argv[1]
    from sklearn.datasets import load_digits  # bundled: no download
    digits = load_digits()
    images = digits.images.astype("uint8")  # values 0..16
    labels = digits.target.astype("uint8")
    count, rows, cols = images.shape
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"WEFTDS1\n")
        f.write(struct.pack("<5I", count, rows, cols, 10, 16))
        for image, label in zip(images, labels):
            f.write(image.tobytes())
            f.write(bytes([int(label)]))
    os.replace(tmp, out)
    print("setup: wrote %d digits to %s" % (count, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
