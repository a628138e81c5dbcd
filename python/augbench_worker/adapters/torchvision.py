"""torchvision adapter: media are uint8 CHW tensors from ``torchvision.io.decode_image``; each
transform is a ``torchvision.transforms.v2`` transform applied with p=1, its output forced with
``.contiguous()`` (and a device sync on CUDA). Multichannel media stack the RGB tensor on dim 0.

Targets (docs/protocol.md, "Targets"): a sample is the detection idiom ``(image, target)`` with
``target = {"boxes": tv_tensors.BoundingBoxes(N×4, format="XYXY", canvas_size=(H, W)), "labels":
int64 tensor, "masks": tv_tensors.Mask(H×W uint8), "keypoints": tv_tensors.KeyPoints(K×2,
canvas_size=(H, W))}`` (the loaded kinds), and the timed call is the built v2 transform on it:
``t(image, target)``. The image stays the plain uint8 tensor of image-only rows (v2 takes the
first plain tensor as the image; labels pass through). Rule: no ``ClampBoundingBoxes`` or
``SanitizeBoundingBoxes`` is added: the row times the transform alone, with whatever clamping its
own kernels do (v2 clamps box coordinates to the canvas itself; a box that becomes empty stays).
Each output tensor is forced with ``.contiguous()``.
"""

from __future__ import annotations

from typing import Any

import torch
import torchvision
from torchvision import tv_tensors
from torchvision.io import ImageReadMode, decode_image
from torchvision.transforms import InterpolationMode, v2

from .base import registry
from .torch_common import TorchAdapter

BUILDERS, builds = registry()
_INTERP = {"nearest": InterpolationMode.NEAREST, "bilinear": InterpolationMode.BILINEAR}
_V2 = "torchvision.transforms.v2 has no {what}"

REASONS = {
    "GaussianNoise": "torchvision's GaussianNoise accepts float images only; the native layout is uint8",
    "RandomGamma": _V2.format(what="random gamma transform (only the functional adjust_gamma)"),
    "Transpose": _V2.format(what="transpose transform"),
    "RandomRotate90": _V2.format(what="quarter-turn rotation transform"),
}
_COLOUR = "it converts through RGB (gray or HSV)"
RGB_ONLY = {
    name: _COLOUR for name in ("Grayscale", "ColorJitter", "ColorJiggle", "Hue", "Saturation", "PhotoMetricDistort")
}
RGB_ONLY["JpegCompression"] = "encode_jpeg takes 1 or 3 channels"
for _name in ("Sharpen", "AutoContrast", "Brightness", "Contrast"):
    RGB_ONLY[_name] = "its colour kernels accept 1 or 3 channels"
DEVICE_REASONS = {("JpegCompression", "cuda"): "torchvision's JPEG transform needs uint8 CPU tensors"}


@builds("Resize")
def _resize(p: dict) -> Any:
    size = p["target_size"]  # a (h, w) pair: an int would match only the shorter side
    return v2.Resize((size, size), interpolation=_INTERP[p["interpolation"]], antialias=True)


@builds("SmallestMaxSize")
def _smallest(p: dict) -> Any:
    return v2.Resize(p["max_size"], interpolation=_INTERP[p["interpolation"]], antialias=True)  # int = shorter side


@builds("LongestMaxSize")
def _longest(p: dict) -> Any:
    # size=None with max_size scales the longer side to max_size.
    return v2.Resize(None, max_size=p["max_size"], interpolation=_INTERP[p["interpolation"]], antialias=True)


@builds("RandomCrop224")
def _random_crop(p: dict) -> Any:
    return v2.RandomCrop((p["height"], p["width"]), pad_if_needed=True)


@builds("CenterCrop224")
def _center_crop(p: dict) -> Any:
    return v2.CenterCrop((p["height"], p["width"]))  # pads smaller inputs with zeros


@builds("RandomResizedCrop")
def _rrc(p: dict) -> Any:
    return v2.RandomResizedCrop(
        tuple(p["size"]),
        scale=tuple(p["scale"]),
        ratio=tuple(p["ratio"]),
        interpolation=_INTERP[p["interpolation"]],
        antialias=True,
    )


@builds("HorizontalFlip")
def _hflip(p: dict) -> Any:
    return v2.RandomHorizontalFlip(p=1)


@builds("VerticalFlip")
def _vflip(p: dict) -> Any:
    return v2.RandomVerticalFlip(p=1)


@builds("Pad")
def _pad(p: dict) -> Any:
    return v2.Pad(p["padding"], fill=p["fill"], padding_mode=p["border_mode"])


@builds("Rotate")
def _rotate(p: dict) -> Any:
    return v2.RandomRotation(tuple(p["angle_range"]), interpolation=_INTERP[p["interpolation"]], fill=p["fill"])


@builds("Affine")
def _affine(p: dict) -> Any:
    # angle: fixed degrees (a (a, a) range); scale: fixed; shear: x-shear range in degrees;
    # shift: at most shift px at reference_size px → translate fractions of each side.
    translate = tuple(s / p["reference_size"] for s in p["shift"])
    return v2.RandomAffine(
        degrees=(p["angle"], p["angle"]),
        translate=translate,
        scale=(p["scale"], p["scale"]),
        shear=tuple(p["shear"]),
        interpolation=_INTERP[p["interpolation"]],
        fill=p["fill"],
    )


@builds("Shear")
def _shear(p: dict) -> Any:
    limit = p["shear"]  # x-shear drawn from [-shear, shear] degrees
    return v2.RandomAffine(degrees=0, shear=(-limit, limit), interpolation=InterpolationMode.BILINEAR, fill=0)


@builds("Perspective")
def _perspective(p: dict) -> Any:
    # distortion_scale is torchvision's corner-displacement bound: the top of the canonical range.
    return v2.RandomPerspective(
        distortion_scale=p["scale"][1], p=1, interpolation=_INTERP[p["interpolation"]], fill=p["fill"]
    )


@builds("Elastic")
def _elastic(p: dict) -> Any:
    # alpha and sigma in pixels, torchvision's own convention.
    return v2.ElasticTransform(alpha=p["alpha"], sigma=p["sigma"], interpolation=_INTERP[p["interpolation"]])


@builds("ColorJitter")
def _color_jitter(p: dict) -> Any:
    return v2.ColorJitter(brightness=p["brightness"], contrast=p["contrast"], saturation=p["saturation"], hue=p["hue"])


@builds("ColorJiggle")
def _color_jiggle(p: dict) -> Any:
    # explicit (min, max) factor ranges, as Kornia's ColorJiggle takes them
    return v2.ColorJitter(
        brightness=tuple(p["brightness"]),
        contrast=tuple(p["contrast"]),
        saturation=tuple(p["saturation"]),
        hue=tuple(p["hue"]),
    )


@builds("PhotoMetricDistort")
def _photometric(p: dict) -> Any:
    return v2.RandomPhotometricDistort(
        brightness=tuple(p["brightness_range"]),
        contrast=tuple(p["contrast_range"]),
        saturation=tuple(p["saturation_range"]),
        hue=tuple(p["hue_range"]),
    )


@builds("Brightness")
def _brightness(p: dict) -> Any:
    low, high = p["brightness_limit"]  # limit l → multiplicative factor 1 + l
    return v2.ColorJitter(brightness=(1 + low, 1 + high))


@builds("Contrast")
def _contrast(p: dict) -> Any:
    low, high = p["contrast_limit"]  # limit l → factor 1 + l
    return v2.ColorJitter(contrast=(1 + low, 1 + high))


@builds("Saturation")
def _saturation(p: dict) -> Any:
    return v2.ColorJitter(saturation=p["saturation_factor"])  # s → factor in [1 - s, 1 + s]


@builds("Hue")
def _hue(p: dict) -> Any:
    return v2.ColorJitter(hue=p["hue"] / 360.0)  # degrees → fraction of a turn


@builds("ChannelShuffle")
def _channel_shuffle(p: dict) -> Any:
    return v2.RandomChannelPermutation()


@builds("Grayscale")
def _grayscale(p: dict) -> Any:
    return v2.Grayscale(num_output_channels=p["num_output_channels"])


@builds("GaussianBlur")
def _gaussian_blur(p: dict) -> Any:
    return v2.GaussianBlur(kernel_size=tuple(p["kernel_size"]), sigma=(p["sigma"], p["sigma"]))


@builds("Invert")
def _invert(p: dict) -> Any:
    return v2.RandomInvert(p=1)


@builds("Posterize")
def _posterize(p: dict) -> Any:
    return v2.RandomPosterize(bits=p["bits"], p=1)


@builds("Solarize")
def _solarize(p: dict) -> Any:
    return v2.RandomSolarize(threshold=p["threshold"] * 255, p=1)  # fraction → uint8 units


@builds("Sharpen")
def _sharpen(p: dict) -> Any:
    # torchvision sharpness factor: 1 = unchanged; blend alpha a → factor 1 + a at the range midpoint
    # (torchvision draws no factor per call). lightness has no analogue.
    low, high = p["alpha"]
    return v2.RandomAdjustSharpness(sharpness_factor=1 + (low + high) / 2, p=1)


@builds("AutoContrast")
def _autocontrast(p: dict) -> Any:
    return v2.RandomAutocontrast(p=1)


@builds("Equalize")
def _equalize(p: dict) -> Any:
    return v2.RandomEqualize(p=1)


@builds("Erasing")
def _erasing(p: dict) -> Any:
    return v2.RandomErasing(p=1, scale=tuple(p["scale"]), ratio=tuple(p["ratio"]), value=p["fill"])


@builds("JpegCompression")
def _jpeg(p: dict) -> Any:
    return v2.JPEG(quality=p["quality"])


class TorchvisionAdapter(TorchAdapter):
    library = "torchvision"
    layout = "CHW"
    video_layout = "TCHW"  # v2 transforms treat the leading T axis as a batch: one draw per clip
    builders = BUILDERS
    reasons = REASONS
    rgb_only = RGB_ONLY
    device_reasons = DEVICE_REASONS

    decoder = "torchvision.io.decode_image"
    own_decoder, decoded_form = "torchvision.io", "chw-uint8"

    def versions(self) -> dict[str, str]:
        return {"torchvision": torchvision.__version__, **self.torch_versions()}

    def build_recipe(self, crop, name, params, mean, std, split):  # type: ignore[no-untyped-def]
        # Clips are TCHW uint8 tensors: v2 treats the leading T axis as a batch, so the crop
        # window and T's parameters are drawn once per clip (a GPU split runs T per clip too).
        middle = [self.build(name, params)] if name is not None else []  # None: the ceiling row
        head = [self.recipe_crop(crop["name"], crop["params"])] if crop else []
        tail = [v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean=mean, std=std)]
        if not split:
            return v2.Compose([*head, *middle, *tail]), None
        # GPU split: workers crop (uint8); the main process runs T per sample and normalizes the
        # batch on the device.
        on_batch, normalize, device = (middle if head else []), v2.Compose(tail), self.device

        def batch_stage(batch: torch.Tensor) -> torch.Tensor:
            batch = batch.to(device, non_blocking=True)
            if on_batch:
                batch = torch.stack([on_batch[0](item) for item in batch])
            return normalize(batch).contiguous()

        return v2.Compose(head or middle), batch_stage

    def decode(self, path: str) -> Any:
        return decode_image(path, mode=ImageReadMode.RGB)  # uint8 CHW

    # ----- targets: v2 on an (image, target) detection sample ----------------------------------
    def check_targets(self, kinds: tuple[str, ...]) -> None:
        """transforms.v2 moves masks, boxes and keypoints (tv_tensors) with the image."""

    def target_sample(self, image: torch.Tensor, entry: dict[str, Any], kinds: tuple[str, ...]) -> tuple:
        canvas = (int(image.shape[-2]), int(image.shape[-1]))
        device = image.device
        target: dict[str, Any] = {}
        if "boxes" in kinds:
            boxes = torch.from_numpy(entry["boxes"]).to(device)
            target["boxes"] = tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=canvas)
            target["labels"] = torch.from_numpy(entry["labels"]).to(device)
        if "mask" in kinds:
            target["masks"] = tv_tensors.Mask(torch.from_numpy(entry["mask"]).to(device))
        if "keypoints" in kinds:
            target["keypoints"] = tv_tensors.KeyPoints(torch.from_numpy(entry["keypoints"]).to(device), canvas_size=canvas)
        return image, target

    def build_targets(self, name: str, params: dict, kinds: tuple[str, ...]) -> Any:
        transform = self.build(name, params)

        def apply(sample: tuple) -> tuple:
            return transform(*sample)

        return apply

    def build_target_recipe(self, crop, name, params, mean, std, kinds):  # type: ignore[no-untyped-def]
        # ToDtype with one dtype and Normalize touch the image only; the targets keep their types
        # (tv_tensors, which are tensors). No clamping or sanitizing step is added, as in micro rows.
        head = [self.recipe_crop(crop["name"], crop["params"])] if crop else []
        middle = [self.build(name, params)] if name is not None else []
        compose = v2.Compose([*head, *middle, v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean=mean, std=std)])
        keys = {"mask": "masks", "boxes": "boxes", "labels": "labels", "keypoints": "keypoints"}

        def sample(image: torch.Tensor, entry: dict) -> tuple[torch.Tensor, dict]:
            image, target = compose(*self.target_sample(image, entry, kinds))
            return image, {ours: target[theirs] for ours, theirs in keys.items() if theirs in target}

        return sample

    def target_image(self, out: tuple) -> Any:
        return out[0]

    def target_refusal(self, exc: BaseException) -> str | None:
        # v2's dispatcher: "<functional> supports inputs of type [...], but got KeyPoints instead."
        if isinstance(exc, TypeError) and "supports inputs of type" in str(exc):
            return f"TypeError: {exc}"
        return super().target_refusal(exc)

    def force_targets(self, out: tuple) -> tuple:
        image, target = out
        return image.contiguous(), {key: value.contiguous() for key, value in target.items()}

    def target_arrays(self, out: tuple) -> dict[str, Any]:
        target = out[1]
        arrays: dict[str, Any] = {}
        if "masks" in target:
            arrays["mask"] = target["masks"].detach().to("cpu", torch.uint8).numpy()
        if "boxes" in target:
            arrays["boxes"] = target["boxes"].detach().to("cpu", torch.float64).numpy()
            arrays["labels"] = target["labels"].detach().to("cpu").numpy()
        if "keypoints" in target:
            arrays["keypoints"] = target["keypoints"].detach().to("cpu", torch.float64).numpy()
        return arrays

    def stack_clip(self, frames: list[Any]) -> Any:
        return torch.stack(frames).contiguous()  # TCHW uint8


ADAPTER = TorchvisionAdapter
