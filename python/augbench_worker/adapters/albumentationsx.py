"""AlbumentationsX adapter: media are NumPy HWC uint8 arrays decoded by OpenCV (RGB order);
each transform is built with p=1 and called as ``transform(image=img)["image"]``, and its output is
forced with ``np.ascontiguousarray``. Multichannel media stack the RGB array along the last axis.

Targets (docs/protocol.md, "Targets"): the transform goes into the Compose a user writes for a
detection / segmentation sample, built once at prepare and seeded as the pipelines seed theirs:
``A.Compose([t], bbox_params=A.BboxParams("pascal_voc", label_fields=["labels"]),
keypoint_params=A.KeypointParams("xy"), seed=<prepare's seed>)`` (only the params of the loaded
kinds), called as ``compose(image=, mask=, bboxes=, labels=, keypoints=)`` with the loaded kinds
(mask H×W uint8, bboxes N×4 float32 pixels, labels N int64, keypoints K×2 float32). The library's
own box and keypoint rules apply (boxes clipped and dropped once outside, keypoints dropped once
outside): the counts after the call are reported. Each output array is forced with
``np.ascontiguousarray``.
"""

from __future__ import annotations

import sys
from typing import Any

import albumentations as A
import cv2
import numpy as np

from .. import threads
from ..protocol import Unsupported
from .base import Adapter, registry

BUILDERS, builds = registry()
_INTERP = {"nearest": cv2.INTER_NEAREST, "bilinear": cv2.INTER_LINEAR}
_BORDER = {"constant": cv2.BORDER_CONSTANT, "reflect": cv2.BORDER_REFLECT, "reflect101": cv2.BORDER_REFLECT_101}

# 9ch: these go through an RGB colour space (HSV, LAB, gray) and need exactly three channels.
_COLOUR_SPACE = "it converts through an RGB colour space"
RGB_ONLY = {
    name: _COLOUR_SPACE
    for name in ("ColorJitter", "ColorJiggle", "Hue", "Saturation", "PhotoMetricDistort", "PlankianJitter", "RGBShift")
}
RGB_ONLY["Grayscale"] = "ToGray raises on images that are not 3-channel"
RGB_ONLY["Contrast"] = "its contrast pivot is the gray mean, computed with an RGB→gray conversion"


def _fixed(value: float) -> tuple[float, float]:
    return (value, value)


def _jitter_range(factor: float) -> tuple[float, float]:
    # torchvision-style scalar factor f → multiplicative range [max(0, 1 - f), 1 + f]
    return (max(0.0, 1.0 - factor), 1.0 + factor)


def _call(transform: Any) -> Any:
    def apply(img: np.ndarray) -> np.ndarray:
        return transform(image=img)["image"]

    apply.transform = transform  # type: ignore[attr-defined] - lets the adapter seed it
    return apply


@builds("Resize")
def _resize(p: dict) -> Any:
    size = p["target_size"]
    return _call(A.Resize(size, size, interpolation=_INTERP[p["interpolation"]], p=1))


@builds("RandomCrop224")
def _random_crop(p: dict) -> Any:
    return _call(A.RandomCrop(p["height"], p["width"], pad_if_needed=True, p=1))


@builds("CenterCrop224")
def _center_crop(p: dict) -> Any:
    return _call(A.CenterCrop(p["height"], p["width"], pad_if_needed=True, p=1))


@builds("RandomResizedCrop")
def _rrc(p: dict) -> Any:
    t = A.RandomResizedCrop(
        size=tuple(p["size"]),
        scale=tuple(p["scale"]),
        ratio=tuple(p["ratio"]),
        interpolation=_INTERP[p["interpolation"]],
        p=1,
    )
    return _call(t)


@builds("HorizontalFlip")
def _hflip(p: dict) -> Any:
    return _call(A.HorizontalFlip(p=1))


@builds("VerticalFlip")
def _vflip(p: dict) -> Any:
    return _call(A.VerticalFlip(p=1))


@builds("Transpose")
def _transpose(p: dict) -> Any:
    return _call(A.Transpose(p=1))


@builds("RandomRotate90")
def _rot90(p: dict) -> Any:
    # times [0, 3] quarter turns = the four rotation group elements e, r90, r180, r270.
    elements = ("e", "r90", "r180", "r270")[p["times"][0] : p["times"][1] + 1]
    return _call(A.RandomRotate90(group_elements=elements, p=1))


@builds("Pad")
def _pad(p: dict) -> Any:
    return _call(A.Pad(padding=p["padding"], fill=p["fill"], border_mode=_BORDER[p["border_mode"]], p=1))


@builds("Rotate")
def _rotate(p: dict) -> Any:
    t = A.Rotate(
        angle_range=tuple(p["angle_range"]),
        interpolation=_INTERP[p["interpolation"]],
        border_mode=_BORDER[p["mode"]],
        fill=p["fill"],
        p=1,
    )
    return _call(t)


@builds("Affine")
def _affine(p: dict) -> Any:
    # angle: fixed degrees; scale: fixed; shear: x-shear drawn from the degree range (y: none);
    # shift: at most shift px at reference_size px → a fraction of each side, drawn per axis.
    fx, fy = (s / p["reference_size"] for s in p["shift"])
    t = A.Affine(
        rotate=_fixed(p["angle"]),
        scale=_fixed(p["scale"]),
        translate_percent={"x": (-fx, fx), "y": (-fy, fy)},
        shear={"x": tuple(p["shear"]), "y": (0.0, 0.0)},
        interpolation=_INTERP[p["interpolation"]],
        border_mode=_BORDER[p["mode"]],
        fill=p["fill"],
        p=1,
    )
    return _call(t)


@builds("Shear")
def _shear(p: dict) -> Any:
    # shear: x-shear drawn from [-shear, shear] degrees.
    limit = p["shear"]
    t = A.Affine(
        shear={"x": (-limit, limit), "y": (0.0, 0.0)},
        interpolation=cv2.INTER_LINEAR,
        border_mode=cv2.BORDER_CONSTANT,
        fill=0,
        p=1,
    )
    return _call(t)


@builds("Perspective")
def _perspective(p: dict) -> Any:
    # scale: AlbumentationsX's own convention (std of corner jitter as a fraction of the size).
    t = A.Perspective(
        scale=tuple(p["scale"]),
        interpolation=_INTERP[p["interpolation"]],
        fill=p["fill"],
        border_mode=cv2.BORDER_CONSTANT,
        p=1,
    )
    return _call(t)


@builds("Elastic")
def _elastic(p: dict) -> Any:
    # AlbumentationsX 2.x replaced the alpha/sigma noise field with a cubic B-spline control grid
    # (displacement_range, control_grid_shape); no exact conversion exists, so the library's
    # default magnitude is kept. The measured work is one remap per image either way.
    return _call(A.ElasticTransform(interpolation=_INTERP[p["interpolation"]], p=1))


@builds("ThinPlateSpline")
def _tps(p: dict) -> Any:
    t = A.ThinPlateSpline(scale_range=_fixed(p["distortion_scale"]), num_control_points=p["num_control_points"], p=1)
    return _call(t)


@builds("OpticalDistortion")
def _optical(p: dict) -> Any:
    limit = p["distort_limit"]  # scalar limit l → range [-l, l]
    return _call(A.OpticalDistortion(distort_range=(-limit, limit), mode=p["mode"], p=1))


@builds("RandomJigsaw")
def _jigsaw(p: dict) -> Any:
    # RandomGridShuffle is AlbumentationsX's jigsaw: it permutes the cells of a rows×cols grid.
    return _call(A.RandomGridShuffle(grid=tuple(p["grid"]), p=1))


@builds("ColorJitter")
def _color_jitter(p: dict) -> Any:
    # scalar factors f → multiplicative ranges [1 - f, 1 + f]; hue h → shift range [-h, h] of a turn.
    t = A.ColorJitter(
        brightness_range=_jitter_range(p["brightness"]),
        contrast_range=_jitter_range(p["contrast"]),
        saturation_range=_jitter_range(p["saturation"]),
        hue_range=(-p["hue"], p["hue"]),
        p=1,
    )
    return _call(t)


@builds("ColorJiggle")
def _color_jiggle(p: dict) -> Any:
    # Kornia's ColorJiggle is a jitter with explicit ranges: AlbumentationsX's ColorJitter takes them as is.
    t = A.ColorJitter(
        brightness_range=tuple(p["brightness"]),
        contrast_range=tuple(p["contrast"]),
        saturation_range=tuple(p["saturation"]),
        hue_range=tuple(p["hue"]),
        p=1,
    )
    return _call(t)


@builds("PhotoMetricDistort")
def _photometric(p: dict) -> Any:
    t = A.PhotoMetricDistort(
        brightness_range=tuple(p["brightness_range"]),
        contrast_range=tuple(p["contrast_range"]),
        saturation_range=tuple(p["saturation_range"]),
        hue_range=tuple(p["hue_range"]),
        p=1,
    )
    return _call(t)


@builds("ChannelShuffle")
def _channel_shuffle(p: dict) -> Any:
    return _call(A.ChannelShuffle(p=1))


@builds("ChannelDropout")
def _channel_dropout(p: dict) -> Any:
    return _call(A.ChannelDropout(p=1))


@builds("Grayscale")
def _grayscale(p: dict) -> Any:
    return _call(A.ToGray(num_output_channels=p["num_output_channels"], p=1))


@builds("RGBShift")
def _rgb_shift(p: dict) -> Any:
    shift = p["pixel_shift"]  # 0..255 units → range [-shift, shift] per channel
    span = (-shift, shift)
    return _call(A.RGBShift(r_shift_range=span, g_shift_range=span, b_shift_range=span, p=1))


@builds("Hue")
def _hue(p: dict) -> Any:
    # The canonical hue is in degrees; HueSaturationValue shifts OpenCV's uint8 hue channel, whose
    # full turn is 180 units, so degrees / 2 → shift range [-hue/2, hue/2].
    hue = p["hue"] / 2
    return _call(A.HueSaturationValue(hue_shift_range=(-hue, hue), sat_shift_range=(0, 0), val_shift_range=(0, 0), p=1))


@builds("Saturation")
def _saturation(p: dict) -> Any:
    # factor s (multiplicative spread 1 ± s) → HSV saturation shift of ± s·255 in 0..255 units
    shift = p["saturation_factor"] * 255
    return _call(
        A.HueSaturationValue(hue_shift_range=(0, 0), sat_shift_range=(-shift, shift), val_shift_range=(0, 0), p=1)
    )


@builds("Brightness")
def _brightness(p: dict) -> Any:
    t = A.RandomBrightnessContrast(brightness_range=tuple(p["brightness_limit"]), contrast_range=(0.0, 0.0), p=1)
    return _call(t)


@builds("Contrast")
def _contrast(p: dict) -> Any:
    t = A.RandomBrightnessContrast(brightness_range=(0.0, 0.0), contrast_range=tuple(p["contrast_limit"]), p=1)
    return _call(t)


@builds("RandomGamma")
def _gamma(p: dict) -> Any:
    return _call(A.RandomGamma(gamma_range=_fixed(p["gamma"]), p=1))  # gamma in percent, as the spec


@builds("PlankianJitter")
def _planckian(p: dict) -> Any:
    return _call(A.PlanckianJitter(mode=p["mode"], p=1))


@builds("GaussianBlur")
def _gaussian_blur(p: dict) -> Any:
    kernel = p["kernel_size"][0]
    return _call(A.GaussianBlur(blur_range=_fixed(kernel), sigma_range=_fixed(p["sigma"]), p=1))


@builds("MedianBlur")
def _median_blur(p: dict) -> Any:
    return _call(A.MedianBlur(blur_range=_fixed(p["blur_limit"]), p=1))


@builds("Blur")
def _blur(p: dict) -> Any:
    return _call(A.Blur(blur_range=_fixed(p["radius"]), p=1))  # canonical radius 5 = 5×5 box kernel


@builds("MotionBlur")
def _motion_blur(p: dict) -> Any:
    t = A.MotionBlur(
        blur_range=_fixed(p["kernel_size"]),
        angle_range=tuple(p["angle_range"]),
        direction_range=tuple(p["direction_range"]),
        p=1,
    )
    return _call(t)


@builds("GaussianNoise")
def _gauss_noise(p: dict) -> Any:
    # std and mean are fractions of the maximum value (255 for uint8), the spec's convention.
    t = A.GaussNoise(std_range=_fixed(p["std"]), mean_range=_fixed(p["mean"]), per_channel=p["per_channel"], p=1)
    return _call(t)


@builds("SaltAndPepper")
def _salt_pepper(p: dict) -> Any:
    return _call(A.SaltAndPepper(amount_range=tuple(p["amount"]), salt_vs_pepper_range=tuple(p["salt_vs_pepper"]), p=1))


@builds("Invert")
def _invert(p: dict) -> Any:
    return _call(A.InvertImg(p=1))


@builds("Posterize")
def _posterize(p: dict) -> Any:
    return _call(A.Posterize(num_bits=_fixed(p["bits"]), p=1))


@builds("Solarize")
def _solarize(p: dict) -> Any:
    return _call(A.Solarize(threshold_range=_fixed(p["threshold"]), p=1))  # fraction of the maximum


@builds("Sharpen")
def _sharpen(p: dict) -> Any:
    return _call(A.Sharpen(alpha_range=tuple(p["alpha"]), lightness_range=tuple(p["lightness"]), p=1))


@builds("UnsharpMask")
def _unsharp(p: dict) -> Any:
    sigma = p["sigma_limit"]
    t = A.UnsharpMask(
        blur_range=tuple(p["blur_limit"]),
        sigma_range=_fixed(sigma),
        alpha_range=tuple(p["alpha"]),
        threshold=p["threshold"],
        p=1,
    )
    return _call(t)


@builds("AutoContrast")
def _autocontrast(p: dict) -> Any:
    return _call(A.AutoContrast(method="pil", p=1))


@builds("Equalize")
def _equalize(p: dict) -> Any:
    return _call(A.Equalize(mode=p["mode"], p=1))


@builds("CLAHE")
def _clahe(p: dict) -> Any:
    return _call(A.CLAHE(clip_range=tuple(p["clip_limit"]), tile_grid_size=tuple(p["tile_grid_size"]), p=1))


@builds("Erasing")
def _erasing(p: dict) -> Any:
    return _call(A.Erasing(scale=tuple(p["scale"]), ratio=tuple(p["ratio"]), fill=p["fill"], p=1))


@builds("JpegCompression")
def _jpeg(p: dict) -> Any:
    return _call(A.ImageCompression(compression_type="jpeg", quality_range=_fixed(p["quality"]), p=1))


def _illumination(mode: str) -> Any:
    def build(p: dict) -> Any:
        return _call(A.Illumination(mode=mode, intensity_range=tuple(p["gain"]), p=1))  # gain = intensity

    return build


BUILDERS["LinearIllumination"] = _illumination("linear")
BUILDERS["CornerIllumination"] = _illumination("corner")
BUILDERS["GaussianIllumination"] = _illumination("gaussian")


@builds("PlasmaBrightness")
def _plasma_brightness(p: dict) -> Any:
    return _call(A.PlasmaBrightnessContrast(roughness=p["roughness"], contrast_range=(0.0, 0.0), p=1))


@builds("PlasmaContrast")
def _plasma_contrast(p: dict) -> Any:
    return _call(A.PlasmaBrightnessContrast(roughness=p["roughness"], brightness_range=(0.0, 0.0), p=1))


@builds("PlasmaShadow")
def _plasma_shadow(p: dict) -> Any:
    return _call(A.PlasmaShadow(roughness=p["roughness"], p=1))


@builds("Rain")
def _rain(p: dict) -> Any:
    t = A.RandomRain(
        drop_width=p["drop_width"],
        drop_length=p["drop_height"],
        brightness_coefficient=p["brightness_coefficient"],
        p=1,
    )
    return _call(t)


@builds("Snow")
def _snow(p: dict) -> Any:
    return _call(A.RandomSnow(snow_point_range=tuple(p["snow_point_range"]), p=1))


@builds("LongestMaxSize")
def _longest(p: dict) -> Any:
    return _call(A.LongestMaxSize(max_size=p["max_size"], interpolation=_INTERP[p["interpolation"]], p=1))


@builds("SmallestMaxSize")
def _smallest(p: dict) -> Any:
    return _call(A.SmallestMaxSize(max_size=p["max_size"], interpolation=_INTERP[p["interpolation"]], p=1))


def _enhance(mode: str) -> Any:
    def build(p: dict) -> Any:
        return _call(A.Enhance(mode=mode, alpha_range=tuple(p["alpha_range"]), p=1))

    return build


BUILDERS["EnhanceEdge"] = _enhance("edge")
BUILDERS["EnhanceDetail"] = _enhance("detail")


def _native(apply: Any, name: str) -> Any:
    """The AlbumentationsX transform object behind a builder's apply (for a Compose)."""
    transform = getattr(apply, "transform", None)
    if transform is None:
        raise Unsupported(f"{name} has no AlbumentationsX transform object to put in a Compose")
    return transform


# (transform, target kind) → why AlbumentationsX cannot move that target with the image.
TARGET_REASONS: dict[tuple[str, str], str] = {}
if A.__version__ == "2.5.1":
    TARGET_REASONS[("Perspective", "mask")] = (
        "AlbumentationsX 2.5.1's Perspective raises IndexError on a single-channel array over 256x256 "
        "(its per-frame warp indexes a channel axis the H×W mask lacks)"
    )


class AlbumentationsXAdapter(Adapter):
    library = "albumentationsx"
    layout = "HWC"
    video_layout = "THWC"
    native_type = "numpy.ndarray"
    builders = BUILDERS
    rgb_only = RGB_ONLY
    target_reasons = TARGET_REASONS
    decoder = "opencv (cv2.imread, RGB)"
    own_decoder, decoded_form = "opencv", "hwc-uint8"
    format_argument = "coord_format"  # BboxParams / KeypointParams: AlbumentationsX's name of the format

    # ----- targets: the Compose a user writes for image + mask + boxes + keypoints -------------
    def check_targets(self, kinds: tuple[str, ...]) -> None:
        """Albumentations moves every kind with the image."""

    def target_sample(self, image: np.ndarray, entry: dict[str, np.ndarray], kinds: tuple[str, ...]) -> dict:
        sample: dict[str, Any] = {"image": image}
        if "mask" in kinds:
            sample["mask"] = entry["mask"]
        if "boxes" in kinds:
            sample["bboxes"], sample["labels"] = entry["boxes"], entry["labels"]
        if "keypoints" in kinds:
            sample["keypoints"] = entry["keypoints"]
        return sample

    def compose_params(self, kinds: tuple[str, ...]) -> dict[str, Any]:
        """Compose's ``bbox_params`` and ``keypoint_params`` for the kinds (xyxy pixels, xy)."""
        extra: dict[str, Any] = {}
        if "boxes" in kinds:
            extra["bbox_params"] = A.BboxParams(label_fields=["labels"], **{self.format_argument: "pascal_voc"})
        if "keypoints" in kinds:
            extra["keypoint_params"] = A.KeypointParams(**{self.format_argument: "xy"})
        return extra

    def build_targets(self, name: str, params: dict, kinds: tuple[str, ...]) -> Any:
        transform = _native(self.build(name, params), name)
        compose = A.Compose([transform], seed=self.current_seed, **self.compose_params(kinds))

        def apply(sample: dict) -> dict:
            return compose(**sample)

        apply.transform = compose  # type: ignore[attr-defined]
        return apply

    def target_image(self, out: dict) -> Any:
        return out["image"]

    def force_targets(self, out: dict) -> dict:
        for key in ("image", "mask", "bboxes", "keypoints"):
            if key in out:
                out[key] = np.ascontiguousarray(out[key])
        return out

    def target_arrays(self, out: dict) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {}
        if "mask" in out:
            arrays["mask"] = np.asarray(out["mask"])
        if "bboxes" in out:
            boxes = np.asarray(out["bboxes"], dtype=np.float64)
            arrays["boxes"] = boxes.reshape(0, 4) if boxes.size == 0 else boxes
            arrays["labels"] = np.asarray(out["labels"], dtype=np.int64)
        if "keypoints" in out:
            points = np.asarray(out["keypoints"], dtype=np.float64)
            arrays["keypoints"] = points.reshape(0, 2) if points.size == 0 else points
        return arrays

    def build_recipe(self, crop, name, params, mean, std, split):  # type: ignore[no-untyped-def]
        if split:
            raise Unsupported("albumentationsx runs on the CPU: it has no GPU split")
        compose = self.recipe_compose(crop, name, params, mean, std)
        if self.video:  # THWC uint8 through ``images=``: one crop window and one draw per clip
            return (lambda clip: compose(images=clip)["images"]), None  # T×3×H×W float32
        return (lambda image: compose(image=image)["image"]), None

    def recipe_compose(self, crop, name, params, mean, std, **extra):  # type: ignore[no-untyped-def]
        """The recipe's one Compose (crop, T, Normalize, ToTensorV2; ``extra``: the target params),
        kept for ``reseed_recipe``; ``name`` None is the ceiling row, the recipe without T."""
        from albumentations.pytorch import ToTensorV2  # AlbumentationsX's own tensor conversion

        stages = [self.recipe_crop(crop["name"], crop["params"])] if crop else []
        if name is not None:
            stages.append(self.build(name, params))
        compose = A.Compose(
            [*(_native(s, name or "the crop") for s in stages), A.Normalize(mean=mean, std=std, max_pixel_value=255.0, p=1), ToTensorV2(p=1)],
            seed=self.current_seed,
            **extra,
        )
        self.compose = compose
        return compose

    def build_target_recipe(self, crop, name, params, mean, std, kinds):  # type: ignore[no-untyped-def]
        import torch  # pipeline mode runs in a DataLoader: torch is there (ToTensorV2 imports it too)

        compose = self.recipe_compose(crop, name, params, mean, std, **self.compose_params(kinds))

        def sample(image: np.ndarray, entry: dict) -> tuple[Any, dict]:
            out = compose(**self.target_sample(image, entry, kinds))
            targets: dict[str, Any] = {}
            if "mask" in kinds:
                targets["mask"] = out["mask"]  # ToTensorV2 made it a tensor
            if "boxes" in kinds:
                targets["boxes"] = torch.from_numpy(np.asarray(out["bboxes"], dtype=np.float32).reshape(-1, 4))
                targets["labels"] = torch.from_numpy(np.asarray(out["labels"], dtype=np.int64))
            if "keypoints" in kinds:
                targets["keypoints"] = torch.from_numpy(np.asarray(out["keypoints"], dtype=np.float32).reshape(-1, 2))
            return out["image"], targets

        return sample

    def build_chain(self, stages: list[dict]) -> Any:
        # One Compose over the stages, as a training loader writes it; each loader worker
        # reseeds it (``reseed_recipe``), or every worker would draw the same crops.
        native = [_native(self.chain_stage(i, s), s["op"]) for i, s in enumerate(stages)]
        compose = A.Compose(native, seed=self.current_seed)
        self.compose = compose
        return lambda image: compose(image=image)["image"]

    def reseed_recipe(self, seed: int) -> None:
        compose = getattr(self, "compose", None)
        if compose is not None:
            compose.set_random_seed(seed)

    def recipe_threads(self) -> dict[str, str]:
        return {"cv2.num_threads": str(cv2.getNumThreads())}

    def versions(self) -> dict[str, str]:
        versions = {"albumentationsx": A.__version__, "opencv": cv2.__version__, "numpy": np.__version__}
        if "torch" in sys.modules:
            versions["torch"] = sys.modules["torch"].__version__
        return versions

    def pin_threads(self, single: bool) -> dict[str, str]:
        if single:
            cv2.setNumThreads(0)  # 0 = OpenCV runs its parallel loops sequentially
            cv2.ocl.setUseOpenCL(False)
        report = {"cv2.num_threads": str(cv2.getNumThreads()), "cv2.use_opencl": str(cv2.ocl.useOpenCL())}
        torch = sys.modules.get("torch")  # AlbumentationsX imports torch itself; pin it without importing it here
        if torch is not None:
            report.update(threads.pin_torch(torch, single))
        return report

    def seed(self, seed: int) -> None:
        super().seed(seed)
        cv2.setRNGSeed(seed)

    def build(self, name: str, params: dict) -> Any:
        apply = super().build(name, params)
        transform = getattr(apply, "transform", None)
        if transform is not None:  # each AlbumentationsX transform owns its generator
            transform.set_random_seed(self.current_seed)
        return apply

    def decode(self, path: str) -> np.ndarray:
        image = cv2.imread(path, cv2.IMREAD_COLOR_RGB)
        if image is None:
            raise ValueError("OpenCV could not decode the file")
        return image

    def stack_clip(self, frames: list[np.ndarray]) -> np.ndarray:
        return np.ascontiguousarray(np.stack(frames))  # THWC uint8

    def video_apply(self, apply: Any) -> Any:
        transform = getattr(apply, "transform", None)
        if transform is None:
            raise Unsupported("this transform has no clip form here (no AlbumentationsX transform object)")

        def clip(frames: np.ndarray) -> np.ndarray:
            return transform(images=frames)["images"]  # one parameter draw for the whole clip

        clip.transform = transform  # type: ignore[attr-defined]
        return clip

    def replicate(self, item: np.ndarray, times: int) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate([item] * times, axis=2))

    def force(self, out: Any) -> np.ndarray:
        return np.ascontiguousarray(out)

    def is_native(self, out: Any) -> bool:
        return isinstance(out, np.ndarray)

    def is_contiguous(self, out: Any) -> bool:
        return bool(out.flags.c_contiguous)  # False: a strided view (a flip, a crop) ``force`` copies

    def shape_dtype(self, value: Any) -> tuple[list[int], str]:
        return list(value.shape), value.dtype.name


ADAPTER = AlbumentationsXAdapter
