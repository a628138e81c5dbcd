"""Decoders a production cell asks for by name (docs/pipeline.md, "Decoders"): the one the
workload reads an implementation's files with where it is not the library's own (the reference:
SimpleJPEG for AlbumentationsX, torchvision.io for Kornia). Each gives the form the library's own
decoder gives (an adapter's ``decoded_form``), so the recipe gets the input it always gets. Imported
only when a cell asks for a decoder; each decoder's package is imported in the process that reads
with it (the loader workers), on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .protocol import BadRequest

# Name → (the form it gives, what the cell records). ``pillow`` is Pillow's own adapter decoder, so
# it has no entry of its own here: a cell that asks for a library's own decoder reads with it.
FORMS: dict[str, tuple[str, str]] = {
    "simplejpeg": ("hwc-uint8", "simplejpeg.decode_jpeg (libjpeg-turbo), RGB"),
    "torchvision.io": ("chw-uint8", "torchvision.io.decode_image, RGB"),
}


def simplejpeg_rgb(path: str) -> Any:
    """H×W×3 uint8 numpy, as the reference's AlbumentationsX loader reads a JPEG."""
    import simplejpeg

    with open(path, "rb") as f:
        return simplejpeg.decode_jpeg(f.read(), colorspace="RGB")


def torchvision_io_rgb(path: str) -> Any:
    """3×H×W uint8 tensor, as the reference's torchvision and Kornia loaders read a JPEG."""
    from torchvision.io import ImageReadMode, decode_image

    return decode_image(path, mode=ImageReadMode.RGB)


READERS: dict[str, Callable[[str], Any]] = {"simplejpeg": simplejpeg_rgb, "torchvision.io": torchvision_io_rgb}


def reader(adapter: Any, name: str) -> tuple[Callable[[str], Any] | None, str]:
    """How a cell of ``adapter`` reads its files when it asks for decoder ``name``, and what its
    record calls that decoder (the library's own where ``name`` is its own)."""
    if name == adapter.own_decoder:
        return (None if adapter.preloaded else adapter.pipeline_read), adapter.decoder
    if name == "pillow":
        raise BadRequest(f"pillow gives PIL images, which only Pillow's recipes read; {adapter.library} reads {adapter.decoded_form}")
    if name not in FORMS:
        known = sorted([*FORMS, "pillow"])
        raise BadRequest(f'"decoder" must be one of {known} or the library\'s own, got {name!r}')
    if adapter.preloaded or adapter.video:
        raise BadRequest(f'"decoder" {name!r} reads image files: load the run\'s files as paths')
    form, described = FORMS[name]
    if form != adapter.decoded_form:
        raise BadRequest(f"{name} gives {form} images and {adapter.library} reads {adapter.decoded_form or 'its own form'}")
    return READERS[name], described
