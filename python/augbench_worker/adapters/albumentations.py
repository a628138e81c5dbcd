"""Albumentations 2.0.8 adapter (MIT, the last release before AlbumentationsX): the same media,
calls and forcing as the AlbumentationsX adapter (NumPy HWC uint8 from OpenCV, ``transform(image=…)``,
``images=`` for clips, its own Compose + ToTensorV2 in pipelines), built with 2.0.8's argument names.

Both distributions install the module ``albumentations``. The builders that use names both accept
are shared with the AlbumentationsX adapter; the transforms whose arguments AlbumentationsX renamed
(``blur_limit`` → ``blur_range``, ``limit`` → ``angle_range``, …) are built here with the 2.0.8
names. The parameter guard (tests/test_guard.py) builds every one of them and fails on an argument
2.0.8 would drop. Targets go through the same Compose as AlbumentationsX's, with 2.0.8's ``format=``
in ``BboxParams`` / ``KeypointParams``.
"""

from __future__ import annotations

from typing import Any

import albumentations as A

from ..protocol import Unsupported
from . import albumentationsx as ax
from .albumentationsx import _call, _fixed, _jitter_range

_ABSENT = "albumentations 2.0.8 has no {what} (added later, in AlbumentationsX)"
REASONS = {
    "PhotoMetricDistort": _ABSENT.format(what="PhotoMetricDistort"),
    "EnhanceEdge": _ABSENT.format(what="Enhance transform"),
    "EnhanceDetail": _ABSENT.format(what="Enhance transform"),
}
# 9ch: 2.0.8 raises on anything but 1 or 3 channels in these (beside AlbumentationsX's list).
RGB_ONLY = {
    **ax.RGB_ONLY,
    "CLAHE": "CLAHE raises on images that are not 1- or 3-channel",
    "Equalize": "Equalize raises on images that are not RGB or gray",
    "Rain": "RandomRain raises on images that are not 3-channel",
    "Snow": "RandomSnow raises on images that are not 3-channel",
}
BUILDERS = {name: build for name, build in ax.BUILDERS.items() if name not in REASONS}


def _builds(name: str) -> Any:
    def register(fn: Any) -> Any:
        BUILDERS[name] = fn
        return fn

    return register


@_builds("RandomRotate90")
def _rot90(p: dict) -> Any:
    # 2.0.8 always draws 0..3 quarter turns; any other range has no 2.0.8 form.
    if list(p["times"]) != [0, 3]:
        raise Unsupported(f"albumentations 2.0.8 RandomRotate90 draws 0..3 quarter turns only, not {p['times']}")
    return _call(A.RandomRotate90(p=1))


@_builds("Rotate")
def _rotate(p: dict) -> Any:
    t = A.Rotate(
        limit=tuple(p["angle_range"]),
        interpolation=ax._INTERP[p["interpolation"]],
        border_mode=ax._BORDER[p["mode"]],
        fill=p["fill"],
        p=1,
    )
    return _call(t)


@_builds("Elastic")
def _elastic(p: dict) -> Any:
    # 2.0.8 still has the Gaussian-smoothed noise field: the canonical alpha/sigma as they are.
    t = A.ElasticTransform(
        alpha=p["alpha"],
        sigma=p["sigma"],
        interpolation=ax._INTERP[p["interpolation"]],
        approximate=p["approximate"],
        same_dxdy=p["same_dxdy"],
        p=1,
    )
    return _call(t)


@_builds("OpticalDistortion")
def _optical(p: dict) -> Any:
    limit = p["distort_limit"]  # scalar limit l → range [-l, l]
    return _call(A.OpticalDistortion(distort_limit=(-limit, limit), mode=p["mode"], p=1))


@_builds("ColorJitter")
def _color_jitter(p: dict) -> Any:
    # scalar factors f → multiplicative ranges [1 - f, 1 + f]; hue h → shift range [-h, h] of a turn.
    t = A.ColorJitter(
        brightness=_jitter_range(p["brightness"]),
        contrast=_jitter_range(p["contrast"]),
        saturation=_jitter_range(p["saturation"]),
        hue=(-p["hue"], p["hue"]),
        p=1,
    )
    return _call(t)


@_builds("ColorJiggle")
def _color_jiggle(p: dict) -> Any:
    t = A.ColorJitter(
        brightness=tuple(p["brightness"]),
        contrast=tuple(p["contrast"]),
        saturation=tuple(p["saturation"]),
        hue=tuple(p["hue"]),
        p=1,
    )
    return _call(t)


@_builds("RGBShift")
def _rgb_shift(p: dict) -> Any:
    span = (-p["pixel_shift"], p["pixel_shift"])  # 0..255 units per channel
    return _call(A.RGBShift(r_shift_limit=span, g_shift_limit=span, b_shift_limit=span, p=1))


def _hsv(hue: float = 0, sat: float = 0) -> Any:
    zero = (0, 0)
    return A.HueSaturationValue(hue_shift_limit=(-hue, hue), sat_shift_limit=(-sat, sat), val_shift_limit=zero, p=1)


@_builds("Hue")
def _hue(p: dict) -> Any:
    return _call(_hsv(hue=p["hue"] / 2))  # degrees → OpenCV's 180-unit hue turn, as AlbumentationsX


@_builds("Saturation")
def _saturation(p: dict) -> Any:
    return _call(_hsv(sat=p["saturation_factor"] * 255))  # factor s → ± s·255 HSV units


@_builds("Brightness")
def _brightness(p: dict) -> Any:
    return _call(A.RandomBrightnessContrast(brightness_limit=tuple(p["brightness_limit"]), contrast_limit=(0.0, 0.0), p=1))


@_builds("Contrast")
def _contrast(p: dict) -> Any:
    return _call(A.RandomBrightnessContrast(brightness_limit=(0.0, 0.0), contrast_limit=tuple(p["contrast_limit"]), p=1))


@_builds("RandomGamma")
def _gamma(p: dict) -> Any:
    return _call(A.RandomGamma(gamma_limit=_fixed(p["gamma"]), p=1))  # gamma in percent, as the spec


@_builds("GaussianBlur")
def _gaussian_blur(p: dict) -> Any:
    return _call(A.GaussianBlur(blur_limit=_fixed(p["kernel_size"][0]), sigma_limit=_fixed(p["sigma"]), p=1))


@_builds("MedianBlur")
def _median_blur(p: dict) -> Any:
    return _call(A.MedianBlur(blur_limit=_fixed(p["blur_limit"]), p=1))


@_builds("Blur")
def _blur(p: dict) -> Any:
    return _call(A.Blur(blur_limit=_fixed(p["radius"]), p=1))  # canonical radius 5 = 5×5 box kernel


@_builds("MotionBlur")
def _motion_blur(p: dict) -> Any:
    t = A.MotionBlur(
        blur_limit=_fixed(p["kernel_size"]),
        angle_range=tuple(p["angle_range"]),
        direction_range=tuple(p["direction_range"]),
        p=1,
    )
    return _call(t)


@_builds("SaltAndPepper")
def _salt_pepper(p: dict) -> Any:
    return _call(A.SaltAndPepper(amount=tuple(p["amount"]), salt_vs_pepper=tuple(p["salt_vs_pepper"]), p=1))


@_builds("Posterize")
def _posterize(p: dict) -> Any:
    return _call(A.Posterize(num_bits=p["bits"], p=1))


@_builds("Sharpen")
def _sharpen(p: dict) -> Any:
    return _call(A.Sharpen(alpha=tuple(p["alpha"]), lightness=tuple(p["lightness"]), p=1))


@_builds("UnsharpMask")
def _unsharp(p: dict) -> Any:
    t = A.UnsharpMask(
        blur_limit=tuple(p["blur_limit"]),
        sigma_limit=_fixed(p["sigma_limit"]),
        alpha=tuple(p["alpha"]),
        threshold=p["threshold"],
        p=1,
    )
    return _call(t)


@_builds("CLAHE")
def _clahe(p: dict) -> Any:
    return _call(A.CLAHE(clip_limit=tuple(p["clip_limit"]), tile_grid_size=tuple(p["tile_grid_size"]), p=1))


class AlbumentationsAdapter(ax.AlbumentationsXAdapter):
    library = "albumentations"
    builders = BUILDERS
    reasons = REASONS
    rgb_only = RGB_ONLY
    target_reasons: dict[tuple[str, str], str] = {}  # 2.0.8 moves every target of the paper set
    format_argument = "format"  # 2.0.8's BboxParams / KeypointParams name (AlbumentationsX: coord_format)

    def versions(self) -> dict[str, str]:
        versions = super().versions()
        versions["albumentations"] = versions.pop("albumentationsx")
        return versions


ADAPTER = AlbumentationsAdapter
