"""Pillow adapter: media are ``PIL.Image`` (RGB, loaded), outputs are forced into contiguous
NumPy arrays. Only direct ``Image`` / ``ImageOps`` / ``ImageEnhance`` / ``ImageFilter`` calls;
Albumentations-style composites (random crops, max-size resizes, jitter) are unsupported.
Pillow images hold at most 4 bands, so multichannel (9ch) media are refused at load.
"""

from __future__ import annotations

import io
import math
import random
from typing import Any

import numpy as np
import PIL
from PIL import Image, ImageEnhance, ImageFile, ImageFilter, ImageOps

from ..protocol import Unsupported
from .base import Adapter, registry

BUILDERS, builds = registry()
Transpose = Image.Transpose
_RESAMPLE = {"nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR}
_COMPOSITE = "Pillow has no {what}; building it from crop/resize arithmetic would imitate another library"

REASONS = {
    "RandomCrop224": _COMPOSITE.format(what="random crop"),
    "RandomResizedCrop": _COMPOSITE.format(what="random resized crop"),
    "LongestMaxSize": _COMPOSITE.format(what="longest-side resize"),
    "SmallestMaxSize": _COMPOSITE.format(what="smallest-side resize"),
    "ColorJitter": "Pillow's ImageEnhance has no hue adjustment and no combined jitter",
    "ColorJiggle": "Pillow's ImageEnhance has no hue adjustment and no combined jitter",
    "PhotoMetricDistort": "Pillow's ImageEnhance has no hue adjustment and no combined jitter",
    "Perspective": "Pillow's PERSPECTIVE transform takes caller-solved coefficients; it has no random perspective",
    "Elastic": "Pillow has no elastic deformation",
    "GaussianNoise": "Pillow has no additive noise (Image.effect_noise makes a new image)",
}


def _uniform(bounds: list[float]) -> float:
    return random.uniform(bounds[0], bounds[1])


@builds("Resize")
def _resize(p: dict) -> Any:
    size, resample = (p["target_size"], p["target_size"]), _RESAMPLE[p["interpolation"]]
    return lambda img: img.resize(size, resample)


@builds("CenterCrop224")
def _center_crop(p: dict) -> Any:
    height, width = p["height"], p["width"]

    def crop(img: Image.Image) -> Image.Image:
        # Image.crop fills with 0 outside the image, which is the padding of a smaller input.
        left, top = (img.width - width) // 2, (img.height - height) // 2
        return img.crop((left, top, left + width, top + height))

    return crop


@builds("HorizontalFlip")
def _hflip(p: dict) -> Any:
    return lambda img: img.transpose(Transpose.FLIP_LEFT_RIGHT)


@builds("VerticalFlip")
def _vflip(p: dict) -> Any:
    return lambda img: img.transpose(Transpose.FLIP_TOP_BOTTOM)


@builds("Transpose")
def _transpose(p: dict) -> Any:
    return lambda img: img.transpose(Transpose.TRANSPOSE)


@builds("RandomRotate90")
def _rot90(p: dict) -> Any:
    # times [0, 3] quarter turns; 0 leaves the image as it is (as the other libraries do).
    low, high = p["times"]
    turns = (None, Transpose.ROTATE_90, Transpose.ROTATE_180, Transpose.ROTATE_270)

    def rotate(img: Image.Image) -> Image.Image:
        method = turns[random.randint(low, high)]
        return img if method is None else img.transpose(method)

    return rotate


@builds("Pad")
def _pad(p: dict) -> Any:
    if p["border_mode"] != "constant":
        raise Unsupported("ImageOps.expand pads with a constant colour only")
    return lambda img: ImageOps.expand(img, border=p["padding"], fill=p["fill"])


@builds("Rotate")
def _rotate(p: dict) -> Any:
    bounds, resample, fill = p["angle_range"], _RESAMPLE[p["interpolation"]], p["fill"]
    # Image.rotate turns counter-clockwise by degrees; a symmetric range makes the sign moot.
    return lambda img: img.rotate(_uniform(bounds), resample=resample, fillcolor=fill)


def _inverse_affine(img: Image.Image, angle: float, shift: tuple, scale: float, shear: float) -> tuple:
    """Image.transform(AFFINE) wants the output→input map: invert centre·T·R·Shx·S·centre⁻¹."""
    cx, cy = img.width * 0.5, img.height * 0.5
    rad, sh = math.radians(angle), math.tan(math.radians(shear))
    # forward linear part: rotation · x-shear · scale
    a, b = math.cos(rad) * scale, (math.cos(rad) * sh - math.sin(rad)) * scale
    c, d = math.sin(rad) * scale, (math.sin(rad) * sh + math.cos(rad)) * scale
    det = a * d - b * c
    ia, ib, ic, id_ = d / det, -b / det, -c / det, a / det
    tx, ty = cx + shift[0], cy + shift[1]
    return (ia, ib, cx - ia * tx - ib * ty, ic, id_, cy - ic * tx - id_ * ty)


@builds("Affine")
def _affine(p: dict) -> Any:
    # angle: fixed degrees; scale: fixed factor; shear: x-shear degrees drawn from the range;
    # shift: at most shift px at reference_size px, i.e. a fraction of each side.
    fraction = [s / p["reference_size"] for s in p["shift"]]
    resample, fill = _RESAMPLE[p["interpolation"]], p["fill"]

    def affine(img: Image.Image) -> Image.Image:
        shift = (_uniform([-fraction[0], fraction[0]]) * img.width, _uniform([-fraction[1], fraction[1]]) * img.height)
        data = _inverse_affine(img, p["angle"], shift, p["scale"], _uniform(p["shear"]))
        return img.transform(img.size, Image.Transform.AFFINE, data, resample=resample, fillcolor=fill)

    return affine


@builds("Shear")
def _shear(p: dict) -> Any:
    # shear: x-shear in degrees drawn from [-shear, shear] (the scalar convention of torchvision/Kornia).
    limit = p["shear"]

    def shear(img: Image.Image) -> Image.Image:
        data = _inverse_affine(img, 0.0, (0.0, 0.0), 1.0, _uniform([-limit, limit]))
        return img.transform(img.size, Image.Transform.AFFINE, data, resample=Image.Resampling.BILINEAR, fillcolor=0)

    return shear


@builds("Grayscale")
def _grayscale(p: dict) -> Any:
    if p["num_output_channels"] != 3:
        raise Unsupported("this adapter keeps RGB images; num_output_channels must be 3")
    return lambda img: ImageOps.grayscale(img).convert("RGB")


@builds("Invert")
def _invert(p: dict) -> Any:
    return ImageOps.invert


@builds("Posterize")
def _posterize(p: dict) -> Any:
    return lambda img: ImageOps.posterize(img, p["bits"])


@builds("Solarize")
def _solarize(p: dict) -> Any:
    threshold = round(p["threshold"] * 255)  # fraction of the maximum → 0..255
    return lambda img: ImageOps.solarize(img, threshold)


@builds("AutoContrast")
def _autocontrast(p: dict) -> Any:
    return ImageOps.autocontrast


@builds("Equalize")
def _equalize(p: dict) -> Any:
    return ImageOps.equalize


@builds("Brightness")
def _brightness(p: dict) -> Any:
    bounds = p["brightness_limit"]  # additive limit l → multiplicative factor 1 + l
    return lambda img: ImageEnhance.Brightness(img).enhance(1.0 + _uniform(bounds))


@builds("Contrast")
def _contrast(p: dict) -> Any:
    bounds = p["contrast_limit"]  # limit l → factor 1 + l
    return lambda img: ImageEnhance.Contrast(img).enhance(1.0 + _uniform(bounds))


@builds("Saturation")
def _saturation(p: dict) -> Any:
    spread = p["saturation_factor"]  # factor drawn from [1 - s, 1 + s]
    return lambda img: ImageEnhance.Color(img).enhance(_uniform([1.0 - spread, 1.0 + spread]))


@builds("Sharpen")
def _sharpen(p: dict) -> Any:
    bounds = p["alpha"]  # blend alpha a → ImageEnhance factor 1 + a (1 = unchanged); lightness has no analogue
    return lambda img: ImageEnhance.Sharpness(img).enhance(1.0 + _uniform(bounds))


@builds("GaussianBlur")
def _gaussian_blur(p: dict) -> Any:
    # Pillow's radius is the Gaussian standard deviation; its kernel extent is chosen by Pillow.
    blur = ImageFilter.GaussianBlur(radius=p["sigma"])
    return lambda img: img.filter(blur)


@builds("MedianBlur")
def _median_blur(p: dict) -> Any:
    median = ImageFilter.MedianFilter(size=p["blur_limit"])
    return lambda img: img.filter(median)


@builds("Blur")
def _box_blur(p: dict) -> Any:
    # canonical radius 5 is the kernel size (5×5 box); BoxBlur(r) spans 2r + 1 pixels → r = 2.
    box = ImageFilter.BoxBlur(radius=(p["radius"] - 1) // 2)
    return lambda img: img.filter(box)


def _opencv_sigma(kernel: int) -> float:
    """Sigma OpenCV derives for a kernel when sigma is 0 (the canonical sigma_limit 0.0)."""
    return 0.3 * ((kernel - 1) * 0.5 - 1) + 0.8


@builds("UnsharpMask")
def _unsharp(p: dict) -> Any:
    kernels = range(p["blur_limit"][0] | 1, p["blur_limit"][1] + 1, 2)
    alpha, threshold = p["alpha"], p["threshold"]

    def unsharp(img: Image.Image) -> Image.Image:
        # radius = Gaussian sigma of the drawn odd kernel; percent = alpha as a percentage.
        radius = p["sigma_limit"] or _opencv_sigma(random.choice(kernels))
        mask = ImageFilter.UnsharpMask(radius=radius, percent=round(_uniform(alpha) * 100), threshold=threshold)
        return img.filter(mask)

    return unsharp


@builds("EnhanceEdge")
def _enhance_edge(p: dict) -> Any:
    # Pillow's EDGE_ENHANCE is a fixed kernel; the canonical alpha_range has no analogue.
    return lambda img: img.filter(ImageFilter.EDGE_ENHANCE)


@builds("EnhanceDetail")
def _enhance_detail(p: dict) -> Any:
    return lambda img: img.filter(ImageFilter.DETAIL)


@builds("JpegCompression")
def _jpeg(p: dict) -> Any:
    quality = p["quality"]

    def compress(img: Image.Image) -> Image.Image:
        buffer = io.BytesIO()
        img.save(buffer, format="JPEG", quality=quality)
        buffer.seek(0)
        return Image.open(buffer)  # decoded lazily; forcing to an array finishes the decode

    return compress


class PillowAdapter(Adapter):
    library = "pillow"
    layout = "PIL"
    native_type = "PIL.Image.Image"
    builders = BUILDERS
    reasons = REASONS

    decoder = "Pillow (Image.open, convert RGB)"
    own_decoder, decoded_form = "pillow", "pil"

    def versions(self) -> dict[str, str]:
        return {"pillow": PIL.__version__, "numpy": np.__version__}

    def recipe_crop(self, name: str, params: dict) -> Any:
        if name != "RandomCrop224":
            return super().recipe_crop(name, params)
        height, width = params["height"], params["width"]

        def crop(img: Image.Image) -> Image.Image:
            # The recipe's crop stage as Pillow training loaders do it: Image.crop at a uniformly
            # drawn box (zero-filled beyond a smaller image). As a measured row, RandomCrop224
            # stays unsupported: Pillow has no random crop of its own.
            left = random.randint(0, max(0, img.width - width))
            top = random.randint(0, max(0, img.height - height))
            return img.crop((left, top, left + width, top + height))

        return crop

    def build_recipe(self, crop, name, params, mean, std, split):  # type: ignore[no-untyped-def]
        if split:
            raise Unsupported("pillow runs on the CPU: it has no GPU split")
        from ..pipeline import pil_normalized  # the loader's tensor tail (torch), pipeline mode only

        transform = self.build(name, params) if name is not None else (lambda img: img)  # None: ceiling
        head = self.recipe_crop(crop["name"], crop["params"]) if crop else None

        def sample(img: Image.Image) -> Any:
            return pil_normalized(transform(head(img) if head else img), mean, std)

        return sample, None

    def pin_threads(self, single: bool) -> dict[str, str]:
        return {"pillow": "single-threaded by design"}

    def check_channels(self, channels: int) -> None:
        if channels != 3:
            raise Unsupported(f"pillow holds RGB images only (at most 4 bands); {channels} channels requested")

    def decode(self, path: str) -> Image.Image:
        with Image.open(path) as img:
            return img.convert("RGB")  # convert() returns a loaded copy

    def force(self, out: Any) -> np.ndarray:
        return np.ascontiguousarray(out)  # loads a lazy image and copies it into one array

    def is_native(self, out: Any) -> bool:
        return isinstance(out, Image.Image)

    def is_contiguous(self, out: Any) -> bool:
        """True once the pixels are in memory: only a file-backed image not read yet is lazy.
        ``force`` still converts the image to a numpy array, so its share is that copy."""
        return not (isinstance(out, ImageFile.ImageFile) and out.tile)

    def shape_dtype(self, value: Any) -> tuple[list[int], str]:
        if isinstance(value, Image.Image):
            return [value.height, value.width, len(value.getbands())], "uint8"
        return list(value.shape), value.dtype.name


ADAPTER = PillowAdapter
