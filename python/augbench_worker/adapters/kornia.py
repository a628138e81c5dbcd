"""Kornia adapter: media are float32 CHW tensors in [0, 1] decoded by ``kornia.io.load_image``;
each ``kornia.augmentation`` module is built with p=1 and ``keepdim=True`` (so a CHW input gives a
CHW output) and its output forced with ``.contiguous()`` (plus a device sync on CUDA).

Batched regime (``prepare`` with ``batch`` > 1): the loaded items are centre-cropped to the
smallest height and width among them and stacked once, outside timing; each timed step then
applies the module to a slice of ``batch`` items with ``same_on_batch=False`` (Kornia's default:
every item draws its own parameters). This mode is reported as ``regime: "batch"`` and must never be
mixed with per-image numbers.

Targets (docs/protocol.md, "Targets"): the module goes into ``K.AugmentationSequential(module,
data_keys=["input", "mask", "bbox_xyxy", "keypoints"])`` (the loaded kinds, in that order), built
once at prepare, and a sample is the batch of one a user feeds it: the image 1×C×H×W float32, the
mask 1×1×H×W float32 (class ids as values), boxes 1×N×4 xyxy pixels, keypoints 1×K×2, all on the
load's device; the output list is forced with ``.contiguous()``. Modules that only ``_unbatched``
wraps go in as themselves; a transform built as a plain function (RandomJigsaw) has no module to
put there. Kornia's RandomElasticTransform and RandomThinPlateSpline leave boxes and keypoints
where they were (no transformation matrix), so they are refused for those kinds
(``TARGET_REASONS``) rather than timed as if they moved them.
"""

from __future__ import annotations

from typing import Any

import kornia
import kornia.augmentation as K
import torch
from kornia.io import ImageLoadType, load_image

from ..protocol import BadRequest, Unsupported
from .base import registry
from .torch_common import TorchAdapter

BUILDERS, builds = registry()
_AUG = "kornia.augmentation has no {what}"

REASONS = {
    "Pad": _AUG.format(what="fixed-margin pad (PadTo pads to a target size)"),
    "Transpose": _AUG.format(what="transpose"),
    "OpticalDistortion": "Kornia's RandomFisheye takes centre and gamma ranges; distort_limit has no conversion",
    "PhotoMetricDistort": _AUG.format(what="photometric distort with per-operation probabilities"),
    "EnhanceEdge": _AUG.format(what="edge-enhance filter"),
    "EnhanceDetail": _AUG.format(what="detail-enhance filter"),
    "UnsharpMask": _AUG.format(what="unsharp mask with amount and threshold"),
}
_COLOUR = "it converts through an RGB colour space"
RGB_ONLY = {
    name: _COLOUR
    for name in ("Grayscale", "ColorJitter", "ColorJiggle", "Hue", "Saturation", "PlankianJitter", "RGBShift")
}
RGB_ONLY["JpegCompression"] = "its differentiable JPEG works in YCbCr"
DEVICE_REASONS = {("Shear", "cuda"): "Kornia's CUDA shear path fails moving its parameter generator to the GPU"}
# Warps without a transformation matrix leave boxes and keypoints where they were (Kornia
# transforms those by the module's matrix, the identity here): refused, not timed as if moved.
# Kornia's own NotImplementedError (RandomThinPlateSpline on a mask) is found by the check.
_ELASTIC = "RandomElasticTransform {what} (kornia/augmentation/_2d/geometric/elastic_transform.py)"
_TPS = "RandomThinPlateSpline has no transformation matrix: it leaves {what} where they were"
TARGET_REASONS = {
    ("Elastic", "boxes"): _ELASTIC.format(what="returns boxes unchanged (apply_transform_box is the identity)"),
    ("Elastic", "keypoints"): _ELASTIC.format(what="moves keypoints by its identity transformation matrix"),
    ("ThinPlateSpline", "boxes"): _TPS.format(what="boxes"),
    ("ThinPlateSpline", "keypoints"): _TPS.format(what="keypoints"),
}
# target kind → AugmentationSequential's data key
_DATA_KEYS = {"mask": "mask", "boxes": "bbox_xyxy", "keypoints": "keypoints"}


def _unbatched(module: Any) -> Any:
    """For modules without ``keepdim``: drop the batch axis they add to a CHW input (a view)."""

    def apply(image: torch.Tensor) -> torch.Tensor:
        out = module(image)
        return out[0] if image.dim() == 3 else out

    apply.module = module  # type: ignore[attr-defined] - moved to the device by the adapter
    return apply


@builds("Resize")
def _resize(p: dict) -> Any:
    size = p["target_size"]
    return K.Resize((size, size), resample=p["interpolation"].upper(), keepdim=True)


@builds("SmallestMaxSize")
def _smallest(p: dict) -> Any:
    return _unbatched(K.SmallestMaxSize(p["max_size"], resample=p["interpolation"].upper()))


@builds("LongestMaxSize")
def _longest(p: dict) -> Any:
    return _unbatched(K.LongestMaxSize(p["max_size"], resample=p["interpolation"].upper()))


@builds("RandomCrop224")
def _random_crop(p: dict) -> Any:
    return K.RandomCrop((p["height"], p["width"]), pad_if_needed=True, p=1, keepdim=True)


@builds("CenterCrop224")
def _center_crop(p: dict) -> Any:
    return K.CenterCrop((p["height"], p["width"]), p=1, keepdim=True)


@builds("RandomResizedCrop")
def _rrc(p: dict) -> Any:
    return K.RandomResizedCrop(
        tuple(p["size"]),
        scale=tuple(p["scale"]),
        ratio=tuple(p["ratio"]),
        resample=p["interpolation"].upper(),
        p=1,
        keepdim=True,
    )


@builds("HorizontalFlip")
def _hflip(p: dict) -> Any:
    return K.RandomHorizontalFlip(p=1, keepdim=True)


@builds("VerticalFlip")
def _vflip(p: dict) -> Any:
    return K.RandomVerticalFlip(p=1, keepdim=True)


@builds("RandomRotate90")
def _rot90(p: dict) -> Any:
    return K.RandomRotation90(times=tuple(p["times"]), p=1, keepdim=True)


@builds("Rotate")
def _rotate(p: dict) -> Any:
    # degrees (not radians); areas outside the rotated image are zero-filled (fill 0).
    return K.RandomRotation(tuple(p["angle_range"]), resample=p["interpolation"].upper(), p=1, keepdim=True)


@builds("Affine")
def _affine(p: dict) -> Any:
    # angle: fixed degrees; scale: fixed; shear: x-shear degree range; shift: at most shift px at
    # reference_size px → translate fractions of each side. Outside areas are zero-filled.
    translate = tuple(s / p["reference_size"] for s in p["shift"])
    return K.RandomAffine(
        degrees=(p["angle"], p["angle"]),
        translate=translate,
        scale=(p["scale"], p["scale"]),
        shear=tuple(p["shear"]),
        resample=p["interpolation"].upper(),
        p=1,
        keepdim=True,
    )


@builds("Shear")
def _shear(p: dict) -> Any:
    return K.RandomShear(float(p["shear"]), p=1, keepdim=True)  # x-shear in [-shear, shear] degrees


@builds("Perspective")
def _perspective(p: dict) -> Any:
    # distortion_scale bounds the corner displacement: the top of the canonical range.
    return K.RandomPerspective(distortion_scale=p["scale"][1], resample=p["interpolation"].upper(), p=1, keepdim=True)


@builds("Elastic")
def _elastic(p: dict) -> Any:
    # sigma in pixels with torchvision's kernel extent (8·sigma + 1, made odd); Kornia's alpha scales
    # the displacement in normalized coordinates ([-1, 1] spans a side): alpha px → 2·alpha / 512
    # for the 512-px images of the reference sizes.
    sigma = p["sigma"]
    kernel = int(8 * sigma + 1) | 1
    alpha = 2 * p["alpha"] / 512
    return K.RandomElasticTransform(
        kernel_size=(kernel, kernel),
        sigma=(sigma, sigma),
        alpha=(alpha, alpha),
        resample=p["interpolation"].upper(),
        p=1,
        keepdim=True,
    )


@builds("ThinPlateSpline")
def _tps(p: dict) -> Any:
    return K.RandomThinPlateSpline(scale=p["distortion_scale"], p=1, keepdim=True)


@builds("RandomJigsaw")
def _jigsaw(p: dict) -> Any:
    # Kornia refuses an image whose height or width is not divisible by the grid (a 375x500
    # photo with a 4x4 grid). The pieces are then cut from the top-left region of the largest
    # divisible size, the last rows and columns (fewer than a grid step) staying where they are:
    # the output keeps the input's shape and the work is the jigsaw's own (docs/specs.md).
    rows, cols = (int(g) for g in p["grid"])
    jigsaw = K.RandomJigsaw(grid=(rows, cols), p=1, keepdim=True)

    def apply(x: Any) -> Any:
        h, w = x.shape[-2], x.shape[-1]
        hh, ww = h - h % rows, w - w % cols
        if (hh, ww) == (h, w):
            return jigsaw(x)
        out = x.clone()
        out[..., :hh, :ww] = jigsaw(x[..., :hh, :ww].contiguous())
        return out

    return apply


@builds("ColorJitter")
def _color_jitter(p: dict) -> Any:
    return K.ColorJitter(p["brightness"], p["contrast"], p["saturation"], p["hue"], p=1, keepdim=True)


@builds("ColorJiggle")
def _color_jiggle(p: dict) -> Any:
    return K.ColorJiggle(
        tuple(p["brightness"]), tuple(p["contrast"]), tuple(p["saturation"]), tuple(p["hue"]), p=1, keepdim=True
    )


@builds("Brightness")
def _brightness(p: dict) -> Any:
    # Kornia adds (factor - 1) in [0, 1] units: the additive limit l → factor 1 + l
    low, high = p["brightness_limit"]
    return K.RandomBrightness(brightness=(1 + low, 1 + high), p=1, keepdim=True)


@builds("Contrast")
def _contrast(p: dict) -> Any:
    low, high = p["contrast_limit"]  # limit l → multiplicative factor 1 + l
    return K.RandomContrast(contrast=(1 + low, 1 + high), p=1, keepdim=True)


@builds("Saturation")
def _saturation(p: dict) -> Any:
    spread = p["saturation_factor"]  # s → factor in [1 - s, 1 + s]
    return K.RandomSaturation(saturation=(1 - spread, 1 + spread), p=1, keepdim=True)


@builds("Hue")
def _hue(p: dict) -> Any:
    shift = p["hue"] / 360.0  # degrees → fraction of a turn
    return K.RandomHue(hue=(-shift, shift), p=1, keepdim=True)


@builds("ChannelShuffle")
def _channel_shuffle(p: dict) -> Any:
    return K.RandomChannelShuffle(p=1, keepdim=True)


@builds("ChannelDropout")
def _channel_dropout(p: dict) -> Any:
    return K.RandomChannelDropout(p=1, keepdim=True)


@builds("Grayscale")
def _grayscale(p: dict) -> Any:
    return K.RandomGrayscale(p=1, keepdim=True)  # 3 output channels, as num_output_channels asks


@builds("RGBShift")
def _rgb_shift(p: dict) -> Any:
    limit = p["pixel_shift"] / 255.0  # 0..255 units → [0, 1] units
    return K.RandomRGBShift(r_shift_limit=limit, g_shift_limit=limit, b_shift_limit=limit, p=1, keepdim=True)


@builds("GaussianBlur")
def _gaussian_blur(p: dict) -> Any:
    return K.RandomGaussianBlur(tuple(p["kernel_size"]), (p["sigma"], p["sigma"]), p=1, keepdim=True)


@builds("GaussianNoise")
def _gaussian_noise(p: dict) -> Any:
    # mean and std are fractions of the maximum: Kornia's [0, 1] float units directly.
    return K.RandomGaussianNoise(mean=p["mean"], std=p["std"], p=1, keepdim=True)


@builds("MedianBlur")
def _median_blur(p: dict) -> Any:
    size = p["blur_limit"]
    return K.RandomMedianBlur((size, size), p=1, keepdim=True)


@builds("Blur")
def _box_blur(p: dict) -> Any:
    size = p["radius"]  # canonical radius 5 = 5×5 box kernel
    return K.RandomBoxBlur((size, size), border_type=p["border_mode"], p=1, keepdim=True)


@builds("MotionBlur")
def _motion_blur(p: dict) -> Any:
    return K.RandomMotionBlur(
        p["kernel_size"],
        tuple(float(a) for a in p["angle_range"]),
        tuple(float(d) for d in p["direction_range"]),
        p=1,
        keepdim=True,
    )


@builds("Invert")
def _invert(p: dict) -> Any:
    return K.RandomInvert(p=1, keepdim=True)


@builds("Posterize")
def _posterize(p: dict) -> Any:
    bits = float(p["bits"])  # a (b, b) range: a single number would mean the range (b, 8)
    return K.RandomPosterize(bits=(bits, bits), p=1, keepdim=True)


@builds("Solarize")
def _solarize(p: dict) -> Any:
    # Kornia draws the threshold from 0.5 ± thresholds: the canonical 0.5 (fraction) is offset 0.
    return K.RandomSolarize(thresholds=abs(p["threshold"] - 0.5), additions=0.0, p=1, keepdim=True)


@builds("Sharpen")
def _sharpen(p: dict) -> Any:
    # Kornia's sharpness factor leaves the image unchanged at 1 (0 = blurred), as torchvision's:
    # blend alpha a → factor 1 + a, drawn per item from the range. lightness has no analogue.
    low, high = p["alpha"]
    return K.RandomSharpness(sharpness=(1 + low, 1 + high), p=1, keepdim=True)


@builds("AutoContrast")
def _autocontrast(p: dict) -> Any:
    return K.RandomAutoContrast(p=1, keepdim=True)


@builds("Equalize")
def _equalize(p: dict) -> Any:
    return K.RandomEqualize(p=1, keepdim=True)


@builds("CLAHE")
def _clahe(p: dict) -> Any:
    return K.RandomClahe(
        clip_limit=tuple(float(c) for c in p["clip_limit"]), grid_size=tuple(p["tile_grid_size"]), p=1, keepdim=True
    )


@builds("RandomGamma")
def _gamma(p: dict) -> Any:
    gamma = p["gamma"] / 100.0  # percent → exponent
    return K.RandomGamma(gamma=(gamma, gamma), p=1, keepdim=True)


@builds("PlankianJitter")
def _planckian(p: dict) -> Any:
    return K.RandomPlanckianJitter(mode=p["mode"], p=1, keepdim=True)


@builds("Erasing")
def _erasing(p: dict) -> Any:
    return K.RandomErasing(scale=tuple(p["scale"]), ratio=tuple(p["ratio"]), value=float(p["fill"]), p=1, keepdim=True)


@builds("JpegCompression")
def _jpeg(p: dict) -> Any:
    quality = float(p["quality"])
    return K.RandomJPEG(jpeg_quality=(quality, quality), p=1, keepdim=True)


@builds("SaltAndPepper")
def _salt_pepper(p: dict) -> Any:
    return K.RandomSaltAndPepperNoise(
        amount=tuple(p["amount"]), salt_vs_pepper=tuple(p["salt_vs_pepper"]), p=1, keepdim=True
    )


@builds("LinearIllumination")
def _linear_illumination(p: dict) -> Any:
    return K.RandomLinearIllumination(gain=tuple(p["gain"]), p=1, keepdim=True)


@builds("CornerIllumination")
def _corner_illumination(p: dict) -> Any:
    return K.RandomLinearCornerIllumination(gain=tuple(p["gain"]), p=1, keepdim=True)


@builds("GaussianIllumination")
def _gaussian_illumination(p: dict) -> Any:
    return K.RandomGaussianIllumination(gain=tuple(p["gain"]), p=1, keepdim=True)


@builds("PlasmaBrightness")
def _plasma_brightness(p: dict) -> Any:
    r = p["roughness"]
    return K.RandomPlasmaBrightness(roughness=(r, r), p=1, keepdim=True)


@builds("PlasmaContrast")
def _plasma_contrast(p: dict) -> Any:
    r = p["roughness"]
    return K.RandomPlasmaContrast(roughness=(r, r), p=1, keepdim=True)


@builds("PlasmaShadow")
def _plasma_shadow(p: dict) -> Any:
    r = p["roughness"]
    return K.RandomPlasmaShadow(roughness=(r, r), p=1, keepdim=True)


@builds("Rain")
def _rain(p: dict) -> Any:
    height, width = p["drop_height"], p["drop_width"]
    return K.RandomRain(drop_height=(height, height), drop_width=(width, width), p=1, keepdim=True)


@builds("Snow")
def _snow(p: dict) -> Any:
    return K.RandomSnow(snow_coefficient=tuple(p["snow_point_range"]), p=1, keepdim=True)


class KorniaAdapter(TorchAdapter):
    library = "kornia"
    layout = "CHW"
    video_layout = "TCHW"  # float32 on the CPU, float16 on CUDA; same_on_batch: one draw per clip
    builders = BUILDERS
    reasons = REASONS
    rgb_only = RGB_ONLY
    device_reasons = DEVICE_REASONS
    target_reasons = TARGET_REASONS

    def __init__(self) -> None:
        super().__init__()
        self.stacked: torch.Tensor | None = None

    # ----- targets: AugmentationSequential over a batch of one --------------------------------
    def check_targets(self, kinds: tuple[str, ...]) -> None:
        """AugmentationSequential moves masks, boxes and keypoints with the image."""

    def target_sample(self, image: torch.Tensor, entry: dict[str, Any], kinds: tuple[str, ...]) -> tuple:
        """``(inputs, labels)``: AugmentationSequential's inputs in data-key order, and the box
        labels (an int64 tensor, or None), which Kornia does not take: they stay with the boxes."""
        device = image.device
        inputs = [image[None]]  # 1×C×H×W: a view of the loaded item
        labels = None
        if "mask" in kinds:
            inputs.append(torch.from_numpy(entry["mask"]).to(device, torch.float32)[None, None])
        if "boxes" in kinds:
            inputs.append(torch.from_numpy(entry["boxes"]).to(device)[None])
            labels = torch.from_numpy(entry["labels"]).to(device)
        if "keypoints" in kinds:
            inputs.append(torch.from_numpy(entry["keypoints"]).to(device)[None])
        return tuple(inputs), labels

    def build_targets(self, name: str, params: dict, kinds: tuple[str, ...]) -> Any:
        built = self.build(name, params)
        module = getattr(built, "module", built)  # ``_unbatched`` modules go in as themselves
        if not isinstance(module, K.AugmentationBase2D):
            raise Unsupported(
                f"{name} is built here as a function, not a kornia.augmentation module: AugmentationSequential cannot take it"
            )
        sequential = K.AugmentationSequential(module, data_keys=["input", *(_DATA_KEYS[k] for k in kinds)])
        sequential.to(self.device)

        def apply(sample: tuple) -> tuple:
            return sequential(*sample[0]), sample[1]

        apply.module = sequential  # type: ignore[attr-defined]
        return apply

    def build_target_recipe(self, crop, name, params, mean, std, kinds):  # type: ignore[no-untyped-def]
        # The crop is Kornia's own module inside the AugmentationSequential (it must move the
        # targets too), so the whole frame becomes float32 first; the mask comes back as the
        # uint8 class ids it went in as.
        stages = [(crop["name"], crop["params"])] if crop else []
        if name is not None:
            stages.append((name, params))
        modules = []
        for stage, stage_params in stages:
            built = self.build(stage, stage_params)
            module = getattr(built, "module", built)
            if not isinstance(module, K.AugmentationBase2D):
                raise Unsupported(f"{stage} is built here as a function, not a kornia.augmentation module: AugmentationSequential cannot take it")
            modules.append(module.to("cpu"))
        sequential = K.AugmentationSequential(*modules, data_keys=["input", *(_DATA_KEYS[k] for k in kinds)])
        normalize = kornia.enhance.Normalize(mean=torch.tensor(mean), std=torch.tensor(std))

        def sample(image: torch.Tensor, entry: dict) -> tuple[torch.Tensor, dict]:
            inputs, labels = self.target_sample(_to_float(image), entry, kinds)
            out = sequential(*inputs)
            out = out if isinstance(out, (list, tuple)) else [out]
            targets: dict[str, torch.Tensor] = {}
            for kind, value in zip(kinds, out[1:]):
                if kind == "mask":
                    targets["mask"] = value[0, 0].round().clamp(0, 255).to(torch.uint8)
                elif kind == "boxes":
                    targets["boxes"], targets["labels"] = value[0], labels
                else:
                    targets["keypoints"] = value[0]
            return _chw(normalize(out[0])), targets

        return sample

    def target_image(self, out: tuple) -> torch.Tensor:
        return out[0][0][0]  # C×H×W of the batch of one

    def force_targets(self, out: tuple) -> tuple:
        return [value.contiguous() for value in out[0]], out[1]

    def target_arrays(self, out: tuple) -> dict[str, Any]:
        arrays: dict[str, Any] = {}
        for kind, value in zip(self.target_kinds, out[0][1:]):
            value = value.detach().to("cpu")
            if kind == "mask":
                arrays["mask"] = value[0, 0].round().clamp(0, 255).to(torch.uint8).numpy()
            elif kind == "boxes":
                arrays["boxes"] = value[0].to(torch.float64).numpy()
                arrays["labels"] = out[1].detach().to("cpu").numpy()
            else:
                arrays["keypoints"] = value[0].to(torch.float64).numpy()
        return arrays

    decoder = "kornia.io.load_image (kornia-rs), uint8"
    own_decoder, decoded_form = "kornia-rs", "chw-uint8"

    def versions(self) -> dict[str, str]:
        return {"kornia": kornia.__version__, **self.torch_versions()}

    def to_device(self, item: torch.Tensor) -> torch.Tensor:
        """Clips on CUDA are float16 (half the memory traffic of a 16-frame clip), as the
        reference benchmark measures them; images and CPU clips stay float32."""
        item = super().to_device(item)
        return item.half() if self.video and self.device == "cuda" else item

    def pipeline_decode(self, path: str) -> torch.Tensor:
        # uint8 CHW: the loader crops before anything becomes float32, never the full frame.
        return load_image(path, ImageLoadType.RGB8, device="cpu")

    def build_chain(self, stages: list[dict]) -> Any:
        # Crop stages slice the uint8 frame (``recipe_crop``); every other stage takes Kornia's
        # float32 [0, 1] image, so the chain ends in float32 [0, 1] (or uint8 after crops only).
        built = [(bool(s.get("crop")), self.chain_stage(i, s)) for i, s in enumerate(stages)]

        def chain(image: torch.Tensor) -> torch.Tensor:
            for crop, apply in built:
                image = apply(image) if crop else _chw(apply(_to_float(image)))
            return image

        return chain

    def build_batch_chain(self, stages: list[dict], first: int) -> Any:
        # Kornia's augmentation modules take a batch and draw every image's own parameters
        # (same_on_batch=False), so the stages after the workers' run on the whole batch on the
        # device, in float32 [0, 1]; a crop there is Kornia's own module (one box per image).
        built = [self.chain_stage(first + i, {**s, "crop": False}) for i, s in enumerate(stages)]

        def on_batch(batch: torch.Tensor) -> torch.Tensor:
            batch = _to_float(batch)
            for apply in built:
                batch = apply(batch)
            return batch

        return on_batch

    def recipe_crop(self, name: str, params: dict) -> Any:
        # Crops run in the loader workers, on the CPU (a module on CUDA would sample there, in a
        # forked process). A clip (TCHW) gets one crop window for all its frames.
        module = super().recipe_crop(name, params)
        core = getattr(module, "module", module)
        if isinstance(core, torch.nn.Module):
            core.to("cpu")
        if self.video:
            module = self.video_apply(module)
        shaped = (lambda out: out.contiguous()) if self.video else _chw
        if name not in _UINT8_CROPS:  # e.g. RandomResizedCrop resamples: it needs the float frame
            return lambda image: shaped(module(_to_float(image)))
        height, width = params["height"], params["width"]

        def crop(image: torch.Tensor) -> torch.Tensor:
            # Kornia's crop modules take float input; its sampler draws the box and the uint8
            # frame (or every frame of a clip) is sliced, so only the 224×224 crop becomes float32.
            channels, rows, cols = image.shape[-3:]
            if rows < height or cols < width:  # kornia pads a smaller frame (in float)
                return shaped(module(_to_float(image))).mul(255.0).round_().to(torch.uint8)
            box = module.forward_parameters(torch.Size((1, channels, rows, cols)))["src"][0]
            left, top = int(box[0, 0]), int(box[0, 1])
            return image[..., top : top + height, left : left + width]

        return crop

    def build_recipe(self, crop, name, params, mean, std, split):  # type: ignore[no-untyped-def]
        normalize = kornia.enhance.Normalize(mean=torch.tensor(mean), std=torch.tensor(std)).to(self.device)
        if crop is None:  # T is the crop: it runs in the loader workers
            head, transform = self.recipe_crop(name, params), None
        else:
            head = self.recipe_crop(crop["name"], crop["params"])
            transform = self.build(name, params) if name is not None else None  # None: the ceiling row
        if transform is not None and self.video:
            transform = self.video_apply(transform)  # a clip's frames share one parameter draw
        if not split:

            def sample(image: torch.Tensor) -> torch.Tensor:
                out = _to_float(head(image))
                out = transform(out) if transform else out
                if self.video:  # TCHW: the clip's frames are Kornia's batch
                    return normalize(out).contiguous()
                return _chw(normalize(out[None] if out.dim() == 3 else out))

            return sample, None
        # GPU split: workers crop (uint8); the main process runs T on the batch on the device
        # (same_on_batch=False: every item draws its own parameters; a clip: one draw per clip)
        # and normalizes there.
        device, video = self.device, self.video

        def batch_stage(batch: torch.Tensor) -> torch.Tensor:
            batch = _to_float(batch.to(device, non_blocking=True))
            if video:  # B×T×C×H×W: T per clip, then normalize the frames as one batch
                out = torch.stack([transform(clip) for clip in batch]) if transform else batch
                return normalize(out.flatten(0, 1)).view(out.shape).contiguous()
            return normalize(transform(batch) if transform else batch).contiguous()

        return head, batch_stage

    def decode(self, path: str) -> torch.Tensor:
        return load_image(path, ImageLoadType.RGB32, device="cpu")  # float32 CHW in [0, 1]

    def stack_clip(self, frames: list[torch.Tensor]) -> torch.Tensor:
        return torch.stack(frames).contiguous()  # TCHW float32 in [0, 1]

    def video_apply(self, apply: Any) -> Any:
        module = getattr(apply, "module", apply)
        if not hasattr(module, "same_on_batch"):
            raise Unsupported("this transform has no clip form here (not a kornia.augmentation module)")
        module.same_on_batch = True  # the clip's T frames share one parameter draw
        return apply

    def build(self, name: str, params: dict) -> Any:
        apply = super().build(name, params)
        module = getattr(apply, "module", apply)
        if isinstance(module, torch.nn.Module):
            module.to(self.device)  # in place: parameters and buffers follow the media
        return apply

    def prepare_batch(self, batch: int) -> None:
        if batch > len(self.items):
            raise BadRequest(f"batch {batch} exceeds the {len(self.items)} loaded items")
        height = min(int(item.shape[-2]) for item in self.items)
        width = min(int(item.shape[-1]) for item in self.items)
        crops = [_center_crop_view(item, height, width) for item in self.items]
        # append the first batch-1 items again so every window start..start+batch is one slice
        self.stacked = torch.stack(crops + crops[: batch - 1]).contiguous()

    def batch_inputs(self, start: int, count: int) -> list[torch.Tensor]:
        assert self.stacked is not None and count > 0
        batch = self.prepared.batch if self.prepared else count
        total = len(self.items)
        views = []
        for offset in range(0, count, batch):
            first = (start + offset) % total
            views.append(self.stacked[first : first + min(batch, count - offset)])
        return views


_UINT8_CROPS = ("RandomCrop224", "CenterCrop224")  # crops that only select a box: sliced in uint8


def _to_float(image: torch.Tensor) -> torch.Tensor:
    """Kornia's float32 convention in [0, 1] (a float input is already there)."""
    return image.to(torch.float32).div_(255.0) if image.dtype == torch.uint8 else image


def _chw(image: torch.Tensor) -> torch.Tensor:
    return (image[0] if image.dim() == 4 else image).contiguous()


def _center_crop_view(item: torch.Tensor, height: int, width: int) -> torch.Tensor:
    top, left = (item.shape[-2] - height) // 2, (item.shape[-1] - width) // 2
    return item[:, top : top + height, left : left + width]


ADAPTER = KorniaAdapter
