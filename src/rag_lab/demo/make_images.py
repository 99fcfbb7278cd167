"""Draw the demo corpus images: one solid shape on a white 200x200 canvas each.

Run ``python -m rag_lab.demo.make_images [FOLDER]`` (default: the bundled
``corpus/images`` folder next to this file). The output is deterministic: shapes are
drawn without anti-aliasing, so every pixel is either pure white or the shape colour,
and the PNGs are saved without metadata, so the same Pillow/zlib writes the same bytes.

| file | colour (RGB) | shape | geometry | area px | share |
|---|---|---|---|---|---|
| red_circle.png | 红色 (220, 20, 20) | 圆形 | centre (60, 60), r 15 | 696 | 1.7 % 小 |
| blue_square.png | 蓝色 (20, 40, 220) | 正方形 | 130 x 130 at (35, 35) | 16900 | 42 % 大 |
| green_triangle.png | 绿色 (20, 170, 40) | 三角形 | (100,45) (155,155) (45,155) | 6161 | 15 % 中 |
| yellow_square.png | 黄色 (240, 210, 0) | 正方形 | 30 x 30 at (140, 130) | 900 | 2.3 % 小 |

Shares are of the 40 000-pixel canvas.

The size words are what these shapes are meant to exercise; the thresholds
themselves belong to the pixel-measurement function, not to this script.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from PIL import Image, ImageDraw

CANVAS = (200, 200)
WHITE = (255, 255, 255)
DEFAULT_FOLDER = Path(__file__).resolve().parent / "corpus" / "images"


def _red_circle(draw: ImageDraw.ImageDraw) -> None:
    cx, cy, r = 60, 60, 15
    draw.ellipse((cx - r, cy - r, cx + r - 1, cy + r - 1), fill=(220, 20, 20))


def _blue_square(draw: ImageDraw.ImageDraw) -> None:
    draw.rectangle((35, 35, 35 + 130 - 1, 35 + 130 - 1), fill=(20, 40, 220))


def _green_triangle(draw: ImageDraw.ImageDraw) -> None:
    draw.polygon([(100, 45), (155, 155), (45, 155)], fill=(20, 170, 40))


def _yellow_square(draw: ImageDraw.ImageDraw) -> None:
    draw.rectangle((140, 130, 140 + 30 - 1, 130 + 30 - 1), fill=(240, 210, 0))


SHAPES: dict[str, Callable[[ImageDraw.ImageDraw], None]] = {
    "red_circle.png": _red_circle,
    "blue_square.png": _blue_square,
    "green_triangle.png": _green_triangle,
    "yellow_square.png": _yellow_square,
}


def write_images(folder: str | os.PathLike[str]) -> list[Path]:
    """Write every demo PNG into ``folder`` (created if missing); return the paths."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, draw_shape in SHAPES.items():
        image = Image.new("RGB", CANVAS, WHITE)
        draw_shape(ImageDraw.Draw(image))
        path = out / name
        # No text chunks, fixed compression level: identical pixels → identical bytes.
        image.save(path, format="PNG", optimize=False, compress_level=9)
        written.append(path)
    return written


def main(argv: Sequence[str] | str | os.PathLike[str] | None = None) -> int:
    """Write the demo images into a folder.

    ``argv`` is either command-line arguments (``[FOLDER]``) or directly the target
    folder (``main("some/dir")``); with nothing given, the bundled corpus folder.
    """
    if isinstance(argv, str | os.PathLike):
        argv = [os.fspath(argv)]
    parser = argparse.ArgumentParser(description="Draw the demo corpus images.")
    parser.add_argument("folder", nargs="?", default=str(DEFAULT_FOLDER))
    args = parser.parse_args(argv)
    for path in write_images(args.folder):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
