"""Tests for rag_lab.data.images.measure_png: known shapes, bad input, determinism."""

from __future__ import annotations

import io
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

import rag_lab.data.images as images
from rag_lab.data.images import (
    COLOR_WORDS,
    MAX_IMAGE_PIXELS,
    SHAPE_WORDS,
    SIZE_WORDS,
    ImageMeasureError,
    measure_png,
)
from rag_lab.errors import RagLabError

WHITE = (255, 255, 255)
ROOT = Path(__file__).resolve().parents[2]
Draw = Callable[[ImageDraw.ImageDraw], None]


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def drawn(draw: Draw, size: tuple[int, int] = (200, 200), mode: str = "RGB",
          background: Any = WHITE) -> bytes:
    image = Image.new(mode, size, background)
    draw(ImageDraw.Draw(image))
    return png_bytes(image)


def patch_ihdr(data: bytes, width: int, height: int) -> bytes:
    """Rewrite the IHDR width/height of a PNG and fix its checksum."""
    body = b"IHDR" + struct.pack(">II", width, height) + data[24:29]
    return data[:12] + body + struct.pack(">I", zlib.crc32(body)) + data[33:]


def small_png() -> bytes:
    return drawn(lambda d: d.rectangle((2, 2, 5, 5), fill=(200, 0, 0)), size=(8, 8))


# --- known shapes ---------------------------------------------------------------------


def test_red_small_circle() -> None:
    result = measure_png(drawn(lambda d: d.ellipse((45, 45, 74, 74), fill=(220, 20, 20))))
    assert result == {
        "color": "红色",
        "size": "小",
        "shape": "圆形",
        "area": 696,
        "mean_color": [220.0, 20.0, 20.0],
        "bbox": [45, 45, 75, 75],
        "width": 200,
        "height": 200,
        "text": "红色 小 圆形",
    }


def test_blue_large_square() -> None:
    result = measure_png(drawn(lambda d: d.rectangle((35, 35, 164, 164), fill=(20, 40, 220))))
    assert (result["text"], result["area"], result["bbox"]) == (
        "蓝色 大 正方形", 130 * 130, [35, 35, 165, 165],
    )


def test_green_medium_triangle() -> None:
    data = drawn(lambda d: d.polygon([(100, 45), (155, 155), (45, 155)], fill=(20, 170, 40)))
    result = measure_png(data)
    assert result["text"] == "绿色 中 三角形"
    assert result["bbox"] == [45, 45, 156, 156]
    # Ideal area is 110 * 110 / 2 = 6050; rasterising the edges adds about one pixel row.
    assert 6050 <= result["area"] <= 6050 + 2 * 111
    assert result["mean_color"] == [20.0, 170.0, 40.0]


def test_rectangle() -> None:
    result = measure_png(drawn(lambda d: d.rectangle((20, 80, 179, 119), fill=(240, 130, 0))))
    assert (result["text"], result["area"], result["bbox"]) == (
        "橙色 中 长方形", 160 * 40, [20, 80, 180, 120],
    )


def test_ellipse() -> None:
    result = measure_png(drawn(lambda d: d.ellipse((40, 70, 159, 129), fill=(120, 40, 200))))
    assert result["text"] == "紫色 中 椭圆形"
    assert result["bbox"] == [40, 70, 160, 130]
    ideal = np.pi * 60 * 30
    assert abs(result["area"] - ideal) < 0.03 * ideal


def test_rgba_transparent_background_with_junk_rgb() -> None:
    image = Image.new("RGBA", (100, 100), (0, 0, 0, 0))
    # Invisible pixels with another RGB must not count as foreground.
    image.paste((255, 255, 255, 0), (0, 0, 50, 100))
    ImageDraw.Draw(image).rectangle((10, 20, 29, 39), fill=(0, 160, 160, 255))
    result = measure_png(png_bytes(image))
    assert (result["text"], result["area"], result["bbox"]) == (
        "青色 小 正方形", 400, [10, 20, 30, 40],
    )


def test_palette_mode() -> None:
    data = drawn(lambda d: d.rectangle((10, 10, 89, 89), fill=1), size=(100, 100), mode="P",
                 background=0)
    image = Image.open(io.BytesIO(data))
    assert image.mode == "P"
    image.putpalette([255, 255, 255, 240, 210, 0] + [0] * 762)
    result = measure_png(png_bytes(image))
    assert (result["text"], result["area"], result["bbox"]) == (
        "黄色 大 正方形", 6400, [10, 10, 90, 90],
    )


def test_grayscale_mode() -> None:
    data = drawn(lambda d: d.ellipse((0, 0, 39, 39), fill=128), size=(100, 100), mode="L",
                 background=0)
    assert Image.open(io.BytesIO(data)).mode == "L"
    result = measure_png(data)
    assert (result["text"], result["bbox"]) == ("灰色 中 圆形", [0, 0, 40, 40])
    assert result["mean_color"] == [128.0, 128.0, 128.0]


def test_sixteen_bit_grayscale_keeps_top_byte() -> None:
    pixels = np.zeros((50, 50), dtype=np.uint16)
    pixels[5:15, 5:45] = 0xFFFF
    result = measure_png(png_bytes(Image.fromarray(pixels)))
    assert (result["text"], result["area"], result["bbox"]) == (
        "白色 中 长方形", 400, [5, 5, 45, 15],
    )


def test_demo_corpus_images() -> None:
    folder = ROOT / "src" / "rag_lab" / "demo" / "corpus" / "images"
    texts = {p.name: measure_png(p.read_bytes())["text"] for p in sorted(folder.glob("*.png"))}
    assert texts == {
        "blue_square.png": "蓝色 大 正方形",
        "green_triangle.png": "绿色 中 三角形",
        "red_circle.png": "红色 小 圆形",
        "yellow_square.png": "黄色 小 正方形",
    }


def test_border_tie_goes_to_smallest_colour() -> None:
    # Left half black, right half white: the border is an exact tie, black wins.
    image = Image.new("RGB", (10, 10), WHITE)
    image.paste((0, 0, 0), (0, 0, 5, 10))
    result = measure_png(png_bytes(image))
    assert (result["color"], result["bbox"], result["area"]) == ("白色", [5, 0, 10, 10], 50)


def test_deterministic() -> None:
    data = drawn(lambda d: d.polygon([(10, 190), (100, 10), (190, 190)], fill=(200, 30, 90)))
    first, second = measure_png(data), measure_png(data)
    assert first == second
    assert list(first) == [
        "color", "size", "shape", "area", "mean_color", "bbox", "width", "height", "text",
    ]


# --- the naming rules -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rgb", "name"),
    [
        ((220, 20, 20), "红色"), ((255, 165, 0), "橙色"), ((240, 210, 0), "黄色"),
        ((20, 170, 40), "绿色"), ((0, 200, 200), "青色"), ((20, 40, 220), "蓝色"),
        ((128, 0, 128), "紫色"), ((255, 20, 147), "粉色"), ((255, 192, 203), "粉色"),
        ((250, 250, 250), "白色"), ((128, 128, 128), "灰色"), ((30, 30, 40), "黑色"),
    ],
)
def test_color_name(rgb: tuple[int, int, int], name: str) -> None:
    assert images.color_name(*rgb) == name


@pytest.mark.parametrize(
    ("fill", "aspect", "name"),
    [
        (1.0, 1.0, "正方形"), (0.95, 0.5, "长方形"), (0.785, 0.95, "圆形"),
        (0.785, 0.5, "椭圆形"), (0.5, 1.0, "三角形"), (0.3, 1.0, "不规则形"),
        (0.67, 1.0, "不规则形"),
    ],
)
def test_shape_name(fill: float, aspect: float, name: str) -> None:
    assert images.shape_name(fill, aspect) == name


@pytest.mark.parametrize(
    ("share", "word"), [(0.0999, "小"), (0.10, "中"), (0.2999, "中"), (0.30, "大")]
)
def test_size_class_thresholds(share: float, word: str) -> None:
    assert images.size_class(share) == word


def test_closed_grammar() -> None:
    assert SIZE_WORDS == ("大", "中", "小")
    assert {"圆形", "正方形", "三角形", "长方形", "椭圆形", "不规则形"} == set(SHAPE_WORDS)
    assert {word for _, word in images.HUE_BINS} <= set(COLOR_WORDS)
    assert len(COLOR_WORDS) == len(set(COLOR_WORDS)) == 11


def test_docs_name_every_word_and_threshold() -> None:
    doc = (ROOT / "docs" / "images.md").read_text(encoding="utf-8")
    for word in COLOR_WORDS + SIZE_WORDS + SHAPE_WORDS:
        assert word in doc
    for constant in ("MAX_IMAGE_PIXELS", "COLOR_TOLERANCE", "SMALL_MAX_SHARE",
                     "MEDIUM_MAX_SHARE", "RECT_MIN_FILL", "ELLIPSE_MIN_FILL",
                     "TRIANGLE_MIN_FILL", "TRIANGLE_MAX_FILL", "ROUND_MIN_ASPECT",
                     "BLACK_MAX_VALUE", "GREY_MAX_SATURATION", "WHITE_MIN_VALUE",
                     "PINK_MAX_SATURATION", "PINK_MIN_VALUE", "HUE_BINS"):
        assert f"`{constant}`" in doc


# --- bad input ------------------------------------------------------------------------


def test_error_is_a_value_error_and_a_rag_lab_error() -> None:
    assert issubclass(ImageMeasureError, ValueError)
    assert issubclass(ImageMeasureError, RagLabError)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "empty file (0 bytes)"),
        ("主题：不是图片\n".encode(), "not a PNG file (signature"),
        (b"\x89PNG", "truncated PNG data: only 4 bytes"),
        (b"\x89PNG\r\n\x1a\n", "truncated PNG data: 8 bytes, the header needs 33"),
    ],
)
def test_bad_bytes(data: bytes, fragment: str) -> None:
    with pytest.raises(ImageMeasureError, match="^" + re.escape(fragment)):
        measure_png(data)


def test_truncated_png() -> None:
    data = drawn(lambda d: d.ellipse((10, 10, 150, 150), fill=(0, 0, 255)))
    with pytest.raises(ImageMeasureError, match=r"^truncated PNG data: chunk b'IDAT'"):
        measure_png(data[: len(data) // 2])


def test_missing_iend() -> None:
    data = small_png()
    assert data.endswith(b"IEND\xaeB`\x82")
    with pytest.raises(ImageMeasureError, match="no IEND chunk"):
        measure_png(data[:-12])


def test_decompression_bomb_header() -> None:
    data = patch_ihdr(small_png(), 100_000, 100_000)
    expected = f"image has 10,000,000,000 pixels (100000x100000); the limit is {MAX_IMAGE_PIXELS:,}"
    with pytest.raises(ImageMeasureError, match="^" + re.escape(expected)):
        measure_png(data)


def test_pillow_limit_lower_than_ours_never_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 40)  # the 8x8 PNG is 64 pixels
    with pytest.raises(ImageMeasureError, match="the limit is 40 "):
        measure_png(small_png())


def test_bad_ihdr_checksum() -> None:
    data = bytearray(small_png())
    data[20] ^= 0xFF
    with pytest.raises(ImageMeasureError, match="IHDR checksum mismatch"):
        measure_png(bytes(data))


def test_zero_width_header() -> None:
    with pytest.raises(ImageMeasureError, match="image is 0x8 pixels"):
        measure_png(patch_ihdr(small_png(), 0, 8))


def test_corrupt_pixel_data_is_wrapped() -> None:
    data = small_png()
    start = data.index(b"IDAT") - 4
    (length,) = struct.unpack(">I", data[start : start + 4])
    body = b"IDAT" + b"\x00" * length  # not a zlib stream, but a well-formed chunk
    crc = struct.pack(">I", zlib.crc32(body))
    broken = data[: start + 4] + body + crc + data[start + 12 + length :]
    with pytest.raises(ImageMeasureError, match="^cannot decode the PNG pixels: "):
        measure_png(broken)


def test_single_colour_image() -> None:
    with pytest.raises(ImageMeasureError, match="^no foreground shape: the image is one colour"):
        measure_png(png_bytes(Image.new("RGB", (30, 20), (10, 200, 10))))


def test_difference_within_tolerance_is_background() -> None:
    data = drawn(lambda d: d.rectangle((5, 5, 14, 14), fill=(255 - 32, 255, 255)), size=(20, 20))
    with pytest.raises(ImageMeasureError, match="no foreground shape"):
        measure_png(data)


# --- property -------------------------------------------------------------------------


@st.composite
def rectangles(draw: st.DrawFn) -> tuple[int, int, int, int, int, int, tuple[int, int, int]]:
    width = draw(st.integers(3, 60))
    height = draw(st.integers(3, 60))
    x0 = draw(st.integers(1, width - 2))
    x1 = draw(st.integers(x0 + 1, width - 1))
    y0 = draw(st.integers(1, height - 2))
    y1 = draw(st.integers(y0 + 1, height - 1))
    channel = st.integers(0, 255)
    colour = draw(st.tuples(channel, channel, channel).filter(lambda c: min(c) < 255 - 32))
    return width, height, x0, y0, x1, y1, colour


@settings(max_examples=150, deadline=None)
@given(rectangles())
def test_rectangle_bbox_and_area_are_exact(
    case: tuple[int, int, int, int, int, int, tuple[int, int, int]],
) -> None:
    width, height, x0, y0, x1, y1, colour = case
    image = Image.new("RGB", (width, height), WHITE)
    ImageDraw.Draw(image).rectangle((x0, y0, x1 - 1, y1 - 1), fill=colour)
    result = measure_png(png_bytes(image))
    assert result["bbox"] == [x0, y0, x1, y1]
    assert result["area"] == (x1 - x0) * (y1 - y0)
    assert result["mean_color"] == [float(c) for c in colour]
    assert result["shape"] in ("正方形", "长方形")
    assert (result["width"], result["height"]) == (width, height)
