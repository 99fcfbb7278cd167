"""Measure the one foreground shape of a PNG from its pixels (spec §1 "Images").

``measure_png(data)`` is pure and deterministic: the same bytes always give the same
dict. Every threshold below is a module constant and is explained in ``docs/images.md``.

Pipeline: check the PNG signature, the IHDR header (size, checksum, pixel limit) and the
chunk layout ourselves, only then let Pillow decode; convert to RGBA; background = the
most common border colour; foreground = pixels that differ from it by more than
``COLOR_TOLERANCE`` on some RGBA channel; then name colour, size and shape.
"""

from __future__ import annotations

import colorsys
import io
import struct
import zlib
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image

from rag_lab.errors import RagLabError

COLOR_WORDS: tuple[str, ...] = (
    "红色",
    "橙色",
    "黄色",
    "绿色",
    "青色",
    "蓝色",
    "紫色",
    "粉色",
    "白色",
    "灰色",
    "黑色",
)
SIZE_WORDS: tuple[str, ...] = ("大", "中", "小")
SHAPE_WORDS: tuple[str, ...] = ("圆形", "正方形", "三角形", "长方形", "椭圆形", "不规则形")

MAX_IMAGE_PIXELS: int = 25_000_000
"""Decompression-bomb guard, checked from the IHDR header before any decoding."""

COLOR_TOLERANCE: int = 32
"""A pixel is foreground when some RGBA channel differs from the background by more."""

SMALL_MAX_SHARE: float = 0.10
"""Foreground area / image area below this is 小."""
MEDIUM_MAX_SHARE: float = 0.30
"""Below this (and at least SMALL_MAX_SHARE) is 中; from here on 大."""

RECT_MIN_FILL: float = 0.90
"""Fill ratio (area / bbox area) from here on: 正方形 or 长方形."""
ELLIPSE_MIN_FILL: float = 0.70
"""Fill ratio in [ELLIPSE_MIN_FILL, RECT_MIN_FILL): 圆形 or 椭圆形 (ideal π/4 ≈ 0.785)."""
TRIANGLE_MIN_FILL: float = 0.40
TRIANGLE_MAX_FILL: float = 0.65
"""Fill ratio in [TRIANGLE_MIN_FILL, TRIANGLE_MAX_FILL): 三角形 (ideal 0.5)."""
ROUND_MIN_ASPECT: float = 0.90
"""bbox min side / max side from here on: 正方形 / 圆形, below: 长方形 / 椭圆形."""

BLACK_MAX_VALUE: float = 0.20
"""HSV value below this is 黑色, whatever the hue."""
GREY_MAX_SATURATION: float = 0.20
"""HSV saturation below this is achromatic: 白色 or 灰色."""
WHITE_MIN_VALUE: float = 0.85
"""An achromatic colour with HSV value from here on is 白色, else 灰色."""
PINK_MAX_SATURATION: float = 0.50
PINK_MIN_VALUE: float = 0.80
"""A light red (red hue, saturation < PINK_MAX_SATURATION, value >= PINK_MIN_VALUE): 粉色."""
HUE_BINS: tuple[tuple[float, str], ...] = (
    (15.0, "红色"),
    (45.0, "橙色"),
    (70.0, "黄色"),
    (165.0, "绿色"),
    (195.0, "青色"),
    (260.0, "蓝色"),
    (320.0, "紫色"),
    (345.0, "粉色"),
    (360.0, "红色"),
)
"""(upper bound in degrees, exclusive; name) in increasing order; hue 0° is red."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_U8 = npt.NDArray[np.uint8]


class ImageMeasureError(RagLabError, ValueError):
    """The bytes are not a measurable PNG; the message says what is wrong."""


def measure_png(data: bytes) -> dict[str, Any]:
    """Measure the one foreground shape of a PNG from its pixels.

    Returns exactly ``{"color", "size", "shape", "area", "mean_color", "bbox", "width",
    "height", "text"}``: ``area`` is the foreground pixel count, ``mean_color`` the mean
    ``[r, g, b]`` of the foreground rounded to 3 decimals, ``bbox`` ``[x0, y0, x1, y1]``
    with ``x1``/``y1`` exclusive, ``width``/``height`` the image size and ``text``
    ``f"{color} {size} {shape}"``. Raises :class:`ImageMeasureError` on bad input.
    """
    width, height = _check_png(data)
    pixels = _decode_rgba(data)
    background = _background(pixels)
    distance = np.zeros((height, width), dtype=np.int16)
    for channel in range(4):
        diff = np.abs(pixels[..., channel].astype(np.int16) - int(background[channel]))
        np.maximum(distance, diff, out=distance)
    mask = distance > COLOR_TOLERANCE
    area = int(mask.sum())
    if area == 0:
        raise ImageMeasureError(
            "no foreground shape: the image is one colour (within a tolerance of "
            f"{COLOR_TOLERANCE} per channel); draw a shape that differs from the border"
        )
    ys, xs = np.nonzero(mask)
    x0, y0, x1, y1 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
    foreground = pixels[mask]
    mean = foreground[:, :3].mean(axis=0)
    red, green, blue, _ = (int(v) for v in _most_common(foreground))
    color = color_name(red, green, blue)
    size = size_class(area / (width * height))
    box_w, box_h = x1 - x0, y1 - y0
    shape = shape_name(area / (box_w * box_h), min(box_w, box_h) / max(box_w, box_h))
    return {
        "color": color,
        "size": size,
        "shape": shape,
        "area": area,
        "mean_color": [round(float(v), 3) for v in mean],
        "bbox": [x0, y0, x1, y1],
        "width": width,
        "height": height,
        "text": f"{color} {size} {shape}",
    }


def color_name(red: int, green: int, blue: int) -> str:
    """Name an 8-bit RGB colour with one of :data:`COLOR_WORDS` (HSV rules)."""
    hue, saturation, value = colorsys.rgb_to_hsv(red / 255, green / 255, blue / 255)
    if value < BLACK_MAX_VALUE:
        return "黑色"
    if saturation < GREY_MAX_SATURATION:
        return "白色" if value >= WHITE_MIN_VALUE else "灰色"
    degrees = hue * 360.0
    name = next(word for bound, word in HUE_BINS if degrees < bound)
    if name == "红色" and saturation < PINK_MAX_SATURATION and value >= PINK_MIN_VALUE:
        return "粉色"
    return name


def size_class(share: float) -> str:
    """Size word for the foreground area as a fraction of the image area."""
    if share < SMALL_MAX_SHARE:
        return "小"
    return "中" if share < MEDIUM_MAX_SHARE else "大"


def shape_name(fill: float, aspect: float) -> str:
    """Shape word from fill ratio (area / bbox area) and aspect (min side / max side)."""
    round_ = aspect >= ROUND_MIN_ASPECT
    if fill >= RECT_MIN_FILL:
        return "正方形" if round_ else "长方形"
    if fill >= ELLIPSE_MIN_FILL:
        return "圆形" if round_ else "椭圆形"
    if TRIANGLE_MIN_FILL <= fill < TRIANGLE_MAX_FILL:
        return "三角形"
    return "不规则形"


def _check_png(data: bytes) -> tuple[int, int]:
    """Validate signature, IHDR, pixel limit and chunk layout; return (width, height)."""
    if len(data) == 0:
        raise ImageMeasureError("empty file (0 bytes): expected a PNG image")
    if not data.startswith(PNG_SIGNATURE):
        if PNG_SIGNATURE.startswith(data):
            raise ImageMeasureError(f"truncated PNG data: only {len(data)} bytes of signature")
        raise ImageMeasureError(
            f"not a PNG file (signature {data[:8]!r}, expected {PNG_SIGNATURE!r}); " "save the image as PNG"
        )
    if len(data) < 33:
        raise ImageMeasureError(f"truncated PNG data: {len(data)} bytes, the header needs 33")
    length, kind, width, height = struct.unpack(">I4sII", data[8:24])
    if kind != b"IHDR" or length != 13:
        raise ImageMeasureError(f"broken PNG: first chunk is {kind!r} of {length} bytes, not IHDR")
    (crc,) = struct.unpack(">I", data[29:33])
    if zlib.crc32(data[12:29]) != crc:
        raise ImageMeasureError("broken PNG: IHDR checksum mismatch; re-save the image")
    if width == 0 or height == 0:
        raise ImageMeasureError(f"broken PNG: image is {width}x{height} pixels")
    # Stay at or below Pillow's own limit too, so its DecompressionBombWarning never fires.
    pillow_limit = Image.MAX_IMAGE_PIXELS
    limit = MAX_IMAGE_PIXELS if pillow_limit is None else min(MAX_IMAGE_PIXELS, pillow_limit)
    if width * height > limit:
        raise ImageMeasureError(
            f"image has {width * height:,} pixels ({width}x{height}); the limit is {limit:,} "
            "(decompression-bomb guard); scale the image down"
        )
    _check_chunks(data)
    return width, height


def _check_chunks(data: bytes) -> None:
    """Walk the chunks up to IEND; raise if one runs past the end of the data."""
    pos = len(PNG_SIGNATURE)
    while True:
        if pos + 8 > len(data):
            raise ImageMeasureError(
                f"truncated PNG data: {len(data)} bytes, no IEND chunk (next chunk at byte {pos})"
            )
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        end = pos + 12 + length
        if end > len(data):
            raise ImageMeasureError(
                f"truncated PNG data: chunk {kind!r} at byte {pos} needs {end - pos} bytes, "
                f"only {len(data) - pos} remain"
            )
        if kind == b"IEND":
            return
        pos = end


def _decode_rgba(data: bytes) -> _U8:
    """Decode with Pillow into an (h, w, 4) uint8 array; transparent pixels become 0."""
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
            image.load()
            if image.mode.startswith("I"):  # 16-bit grey: keep the top byte (convert clips)
                grey = (np.asarray(image, dtype=np.int64) >> 8).clip(0, 255).astype(np.uint8)
                opaque = np.full_like(grey, 255)
                pixels: _U8 = np.dstack([grey, grey, grey, opaque])
            else:
                pixels = np.array(image.convert("RGBA"), dtype=np.uint8)
    except Exception as exc:  # Pillow raises OSError, SyntaxError, ValueError, zlib.error...
        raise ImageMeasureError(f"cannot decode the PNG pixels: {exc}") from exc
    pixels[pixels[..., 3] == 0] = 0  # invisible pixels carry no colour
    return pixels


def _background(pixels: _U8) -> _U8:
    """Most common RGBA among the border pixels; ties go to the smallest packed value."""
    border = np.zeros(pixels.shape[:2], dtype=bool)
    border[0, :] = border[-1, :] = border[:, 0] = border[:, -1] = True
    return _most_common(pixels[border])


def _most_common(rows: _U8) -> _U8:
    """Most common RGBA row of an (n, 4) array; ties go to the smallest packed value."""
    packed = rows.astype(np.uint32) @ np.array([1 << 24, 1 << 16, 1 << 8, 1], dtype=np.uint32)
    values, counts = np.unique(packed, return_counts=True)
    best = int(values[int(np.argmax(counts))])
    return np.array([(best >> shift) & 0xFF for shift in (24, 16, 8, 0)], dtype=np.uint8)
