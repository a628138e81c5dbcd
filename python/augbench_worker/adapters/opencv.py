"""OpenCV adapter: the floor every NumPy-based library builds on. Media are NumPy HWC uint8 arrays
decoded by ``cv2.imread`` (RGB order); each transform is one direct ``cv2`` call (random ones draw
their parameter with Python's seeded ``random`` first, as a training loop would), and outputs are
forced with ``np.ascontiguousarray`` (cv2 already returns fresh arrays). Random crops, jitters,
noise, geometric warps from random corner jitter and the like are composites OpenCV does not have:
they are ``unsupported``, never rebuilt here.
"""

from __future__ import annotations

import random
from typing import Any

import cv2
import numpy as np

from ..protocol import Unsupported
from .base import Adapter, registry

BUILDERS, builds = registry()
_INTERP = {"nearest": cv2.INTER_NEAREST, "bilinear": cv2.INTER_LINEAR}
_BORDER = {"constant": cv2.BORDER_CONSTANT, "reflect": cv2.BORDER_REFLECT, "reflect101": cv2.BORDER_REFLECT_101}
_COMPOSITE = "OpenCV has no {what}; building it from NumPy and cv2 pieces would imitate another library"

REASONS = {
    "RandomCrop224": "OpenCV has no crop: a crop is a NumPy slice, not an OpenCV call",
    "CenterCrop224": "OpenCV has no crop: a crop is a NumPy slice, not an OpenCV call",
    "RandomResizedCrop": _COMPOSITE.format(what="random resized crop"),
    "Affine": _COMPOSITE.format(what="random affine (warpAffine takes a caller-built matrix)"),
    "Shear": _COMPOSITE.format(what="random shear (warpAffine takes a caller-built matrix)"),
    "Perspective": _COMPOSITE.format(what="random perspective (warpPerspective takes a caller-built matrix)"),
    "Elastic": _COMPOSITE.format(what="elastic deformation (remap takes caller-built maps)"),
    "ColorJitter": _COMPOSITE.format(what="colour jitter"),
    "ColorJiggle": _COMPOSITE.format(what="colour jitter"),
    "GaussianNoise": _COMPOSITE.format(what="additive Gaussian noise transform"),
    "Sharpen": _COMPOSITE.format(what="sharpen transform (filter2D takes a caller-built kernel)"),
    "MotionBlur": _COMPOSITE.format(what="motion blur (filter2D takes a caller-built kernel)"),
    "CLAHE": "cv2's CLAHE works on one channel; its RGB form (through LAB) is a composite",
    "Erasing": _COMPOSITE.format(what="random erasing"),
}
# 9ch: these OpenCV calls take 1, 3 or 4 channels (cv2 asserts on more).
RGB_ONLY = {
    "Transpose": "cv2.transpose asserts on elements of 9 bytes",
    "RandomRotate90": "cv2.rotate asserts on elements of 9 bytes",
    "Grayscale": "cv2.cvtColor converts from RGB",
    "JpegCompression": "cv2.imencode writes 1-, 3- or 4-channel JPEGs",
}


def _lut(table: np.ndarray) -> Any:
    lut = np.ascontiguousarray(table.astype(np.uint8))
    return lambda img: cv2.LUT(img, lut)


@builds("Resize")
def _resize(p: dict) -> Any:
    size, interp = (p["target_size"], p["target_size"]), _INTERP[p["interpolation"]]
    return lambda img: cv2.resize(img, size, interpolation=interp)


def _max_size(p: dict, side: Any) -> Any:
    target, interp = p["max_size"], _INTERP[p["interpolation"]]

    def resize(img: np.ndarray) -> np.ndarray:
        height, width = img.shape[:2]
        scale = target / side(height, width)
        return cv2.resize(img, (round(width * scale), round(height * scale)), interpolation=interp)

    return resize


BUILDERS["LongestMaxSize"] = lambda p: _max_size(p, max)
BUILDERS["SmallestMaxSize"] = lambda p: _max_size(p, min)


@builds("HorizontalFlip")
def _hflip(p: dict) -> Any:
    return lambda img: cv2.flip(img, 1)


@builds("VerticalFlip")
def _vflip(p: dict) -> Any:
    return lambda img: cv2.flip(img, 0)


@builds("Transpose")
def _transpose(p: dict) -> Any:
    return cv2.transpose


@builds("RandomRotate90")
def _rot90(p: dict) -> Any:
    # times k quarter turns counter-clockwise; k = 0 is the identity (a copy, as the others return).
    codes = [None, cv2.ROTATE_90_COUNTERCLOCKWISE, cv2.ROTATE_180, cv2.ROTATE_90_CLOCKWISE]
    low, high = p["times"]

    def rotate(img: np.ndarray) -> np.ndarray:
        code = codes[random.randint(low, high) % 4]
        return img.copy() if code is None else cv2.rotate(img, code)

    return rotate


@builds("Pad")
def _pad(p: dict) -> Any:
    pad, border, fill = p["padding"], _BORDER[p["border_mode"]], p["fill"]
    return lambda img: cv2.copyMakeBorder(img, pad, pad, pad, pad, border, value=fill)


@builds("Rotate")
def _rotate(p: dict) -> Any:
    low, high = p["angle_range"]
    flags, border, fill = _INTERP[p["interpolation"]], _BORDER[p["mode"]], p["fill"]

    def rotate(img: np.ndarray) -> np.ndarray:
        height, width = img.shape[:2]
        matrix = cv2.getRotationMatrix2D(((width - 1) / 2, (height - 1) / 2), random.uniform(low, high), 1.0)
        return cv2.warpAffine(img, matrix, (width, height), flags=flags, borderMode=border, borderValue=fill)

    return rotate


@builds("Grayscale")
def _grayscale(p: dict) -> Any:
    if p["num_output_channels"] != 3:
        raise Unsupported("the scenarios keep the channel count; only num_output_channels 3 is measured")
    return lambda img: cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)


@builds("GaussianBlur")
def _gaussian_blur(p: dict) -> Any:
    kernel, sigma = tuple(p["kernel_size"]), p["sigma"]
    return lambda img: cv2.GaussianBlur(img, kernel, sigma)


@builds("MedianBlur")
def _median_blur(p: dict) -> Any:
    size = p["blur_limit"]
    return lambda img: cv2.medianBlur(img, size)


@builds("Blur")
def _blur(p: dict) -> Any:
    size, border = p["radius"], _BORDER[p["border_mode"]]  # canonical radius 5 = 5×5 box kernel
    return lambda img: cv2.blur(img, (size, size), borderType=border)


@builds("Invert")
def _invert(p: dict) -> Any:
    return cv2.bitwise_not


@builds("Posterize")
def _posterize(p: dict) -> Any:
    mask = 256 - 2 ** (8 - p["bits"])  # keep the top `bits` bits: a lookup table through cv2.LUT
    return _lut(np.arange(256) & mask)


@builds("Solarize")
def _solarize(p: dict) -> Any:
    threshold = p["threshold"] * 255  # fraction of the maximum, as the spec
    values = np.arange(256)
    return _lut(np.where(values >= threshold, 255 - values, values))


@builds("RandomGamma")
def _gamma(p: dict) -> Any:
    gamma = p["gamma"] / 100  # percent, as the spec
    return _lut(np.clip(np.round(255 * (np.arange(256) / 255) ** gamma), 0, 255))


@builds("Brightness")
def _brightness(p: dict) -> Any:
    # brightness_limit is a fraction of the maximum added to every pixel: beta in 0..255 units.
    low, high = p["brightness_limit"]
    return lambda img: cv2.convertScaleAbs(img, alpha=1.0, beta=random.uniform(low, high) * 255)


@builds("Equalize")
def _equalize(p: dict) -> Any:
    # cv2.equalizeHist per channel: OpenCV's own mapping (Albumentations' mode "cv"), not PIL's.
    return lambda img: cv2.merge([cv2.equalizeHist(channel) for channel in cv2.split(img)])


@builds("JpegCompression")
def _jpeg(p: dict) -> Any:
    params = [cv2.IMWRITE_JPEG_QUALITY, p["quality"]]

    def roundtrip(img: np.ndarray) -> np.ndarray:
        ok, encoded = cv2.imencode(".jpg", img, params)
        if not ok:
            raise ValueError("cv2.imencode failed")
        return cv2.imdecode(encoded, cv2.IMREAD_UNCHANGED)

    return roundtrip


class OpenCVAdapter(Adapter):
    library = "opencv"
    layout = "HWC"
    native_type = "numpy.ndarray"
    builders = BUILDERS
    reasons = REASONS
    rgb_only = RGB_ONLY
    decoder = "opencv (cv2.imread, RGB)"

    def versions(self) -> dict[str, str]:
        return {"opencv": cv2.__version__, "numpy": np.__version__}

    def pin_threads(self, single: bool) -> dict[str, str]:
        if single:
            cv2.setNumThreads(0)  # 0 = OpenCV runs its parallel loops sequentially
            cv2.ocl.setUseOpenCL(False)
        return {"cv2.num_threads": str(cv2.getNumThreads()), "cv2.use_opencl": str(cv2.ocl.useOpenCL())}

    def seed(self, seed: int) -> None:
        super().seed(seed)
        cv2.setRNGSeed(seed)

    def decode(self, path: str) -> np.ndarray:
        image = cv2.imread(path, cv2.IMREAD_COLOR_RGB)
        if image is None:
            raise ValueError("OpenCV could not decode the file")
        return image

    def replicate(self, item: np.ndarray, times: int) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate([item] * times, axis=2))

    def force(self, out: Any) -> np.ndarray:
        return np.ascontiguousarray(out)

    def is_native(self, out: Any) -> bool:
        return isinstance(out, np.ndarray)

    def is_contiguous(self, out: Any) -> bool:
        return bool(out.flags.c_contiguous)

    def shape_dtype(self, value: Any) -> tuple[list[int], str]:
        return list(value.shape), value.dtype.name

    # ----- pipeline (PyTorch's DataLoader runs it; this module itself imports no torch) ------
    def recipe_crop(self, name: str, params: dict) -> Any:
        if name != "RandomCrop224":
            return super().recipe_crop(name, params)
        height, width = params["height"], params["width"]

        def crop(img: np.ndarray) -> np.ndarray:
            # The recipe's crop stage as cv2 training loaders do it: a NumPy slice at a uniformly
            # drawn box, zero-padded with cv2.copyMakeBorder when the image is smaller. As a
            # measured row, RandomCrop224 stays unsupported: OpenCV has no crop of its own.
            short_y, short_x = max(0, height - img.shape[0]), max(0, width - img.shape[1])
            if short_y or short_x:
                img = cv2.copyMakeBorder(img, 0, short_y, 0, short_x, cv2.BORDER_CONSTANT, value=0)
            top = random.randint(0, img.shape[0] - height)
            left = random.randint(0, img.shape[1] - width)
            return img[top : top + height, left : left + width]

        return crop

    def build_recipe(self, crop, name, params, mean, std, split):  # type: ignore[no-untyped-def]
        if split:
            raise Unsupported("opencv runs on the CPU: it has no GPU split")
        transform = self.build(name, params) if name is not None else (lambda img: img)  # None: ceiling
        head = self.recipe_crop(crop["name"], crop["params"]) if crop else None
        scale = (1.0 / (255.0 * np.asarray(std, dtype=np.float32))).reshape(1, 1, -1)
        shift = (np.asarray(mean, dtype=np.float32) / np.asarray(std, dtype=np.float32)).reshape(1, 1, -1)

        def sample(img: np.ndarray) -> np.ndarray:
            out = transform(head(img) if head else img)
            # Normalize as x·1/(255·std) − mean/std in float32 (NumPy: cv2 does not broadcast
            # per-channel arrays), then CHW; the loader collates the arrays into one tensor.
            normalized = out.astype(np.float32) * scale - shift
            return np.ascontiguousarray(normalized.transpose(2, 0, 1))

        return sample, None

    def recipe_threads(self) -> dict[str, str]:
        return {"cv2.num_threads": str(cv2.getNumThreads())}


ADAPTER = OpenCVAdapter
