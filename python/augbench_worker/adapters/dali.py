"""NVIDIA DALI adapter: the transforms DALI implements as operators, each a function that adds its
``nvidia.dali.fn`` operator to a pipeline graph (random parameters drawn per sample by DALI's own
``fn.random`` operators, seeded by the pipeline), and the recipe ``crop → T → Normalize → CHW
float32`` as one graph. DALI is measured only as a pipeline backend: its own pipeline replaces the
DataLoader (``dali_pipeline``); micro rows and video clips are refused with the reason.
Transforms DALI has no operator for are ``unsupported``; none is rebuilt from other operators.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import nvidia.dali as dali
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import backend as dali_backend
from nvidia.dali.pipeline import Pipeline

from ..dali_errors import dali_error
from ..protocol import Unsupported
from .base import Adapter, registry

BUILDERS, builds = registry()
_INTERP = {"nearest": types.INTERP_NN, "bilinear": types.INTERP_LINEAR}
_COMPOSITE = "DALI has no {what} operator; composing one from other DALI operators would imitate another library"
_MATRIX = "DALI's {op} takes a caller-built matrix (fn.transforms.* compose one); a random {what} from the spec's parameters is a composite"
_KERNEL = "DALI's fn.experimental.filter takes a caller-built kernel; a {what} transform is a composite"

REASONS = {
    "Pad": "DALI pads only at the end of an axis (fn.pad) or through a crop window computed from each image's shape; it has no symmetric pad operator",
    "Affine": _MATRIX.format(op="fn.warp_affine", what="affine"),
    "Shear": _MATRIX.format(op="fn.warp_affine", what="shear"),
    "Perspective": _MATRIX.format(op="fn.experimental.warp_perspective", what="perspective"),
    "Erasing": "DALI's fn.erase takes caller-given anchors and shapes; drawing the random box from scale and ratio is a composite",
    "Sharpen": _KERNEL.format(what="sharpen"),
    "MotionBlur": _KERNEL.format(what="motion blur"),
    "Blur": _KERNEL.format(what="box blur"),
    "Invert": _COMPOSITE.format(what="invert"),
    "Posterize": _COMPOSITE.format(what="posterize"),
    "Solarize": _COMPOSITE.format(what="solarize"),
    "AutoContrast": _COMPOSITE.format(what="auto-contrast"),
    "ChannelShuffle": _COMPOSITE.format(what="random channel permutation"),
}
DEVICE_REASONS = {("MedianBlur", "cpu"): "DALI's fn.experimental.median_blur runs on the GPU only"}

# DALI's pipeline has no micro rows and no clip reader here: the refusals, said once.
MICRO_REASON = (
    "DALI is measured only as a pipeline backend (its own pipeline replaces the DataLoader): a DALI operator "
    "runs inside a built pipeline, so one call on one image has no micro row"
)
VIDEO_REASON = (
    "dali has no video rows: augbench's clips are folders of frame files, which this backend does not read as "
    "clips (specs/matrix.yaml keeps dali out of video-16f, with why)"
)

# ``mixed`` decode: DALI's nvImageCodec decoder with nvJPEG, Huffman on the CPU, the rest on the GPU.
MIXED_DECODER = "DALI fn.decoders.image, device mixed (nvImageCodec, nvJPEG)"


def _uniform(low: float, high: float) -> Any:
    """A per-sample draw by DALI's own RNG (an argument input), or the constant of a point range."""
    if low == high:
        return float(low)
    return fn.random.uniform(range=[float(low), float(high)])


def _factor(spread: float) -> Any:
    """A torchvision-style scalar factor f → a multiplicative factor drawn in [max(0, 1 - f), 1 + f]."""
    return _uniform(max(0.0, 1.0 - spread), 1.0 + spread)


@builds("Resize")
def _resize(p: dict) -> Any:
    size, interp = p["target_size"], _INTERP[p["interpolation"]]
    return lambda x: fn.resize(x, resize_x=size, resize_y=size, interp_type=interp)


@builds("LongestMaxSize")
def _longest(p: dict) -> Any:
    size, interp = p["max_size"], _INTERP[p["interpolation"]]
    return lambda x: fn.resize(x, resize_longer=size, interp_type=interp)


@builds("SmallestMaxSize")
def _smallest(p: dict) -> Any:
    size, interp = p["max_size"], _INTERP[p["interpolation"]]
    return lambda x: fn.resize(x, resize_shorter=size, interp_type=interp)


@builds("RandomCrop224")
def _random_crop(p: dict) -> Any:
    # fn.crop at a window position drawn per sample (0..1 of the free range); an image smaller
    # than the window is zero-padded (out_of_bounds_policy "pad").
    crop = (p["height"], p["width"])
    return lambda x: fn.crop(
        x, crop=crop, crop_pos_x=_uniform(0, 1), crop_pos_y=_uniform(0, 1), out_of_bounds_policy="pad", fill_values=0
    )


@builds("CenterCrop224")
def _center_crop(p: dict) -> Any:
    crop = (p["height"], p["width"])
    return lambda x: fn.crop(x, crop=crop, crop_pos_x=0.5, crop_pos_y=0.5, out_of_bounds_policy="pad", fill_values=0)


@builds("RandomResizedCrop")
def _random_resized_crop(p: dict) -> Any:
    size, area, ratio, interp = list(p["size"]), list(p["scale"]), list(p["ratio"]), _INTERP[p["interpolation"]]
    if p["width"] != size[1]:
        raise Unsupported(f"RandomResizedCrop: width {p['width']} differs from size {size}")
    return lambda x: fn.random_resized_crop(x, size=size, random_area=area, random_aspect_ratio=ratio, interp_type=interp)


@builds("HorizontalFlip")
def _hflip(p: dict) -> Any:
    return lambda x: fn.flip(x, horizontal=1, vertical=0)


@builds("VerticalFlip")
def _vflip(p: dict) -> Any:
    return lambda x: fn.flip(x, horizontal=0, vertical=1)


@builds("Transpose")
def _transpose(p: dict) -> Any:
    return lambda x: fn.transpose(x, perm=[1, 0, 2], transpose_layout=False)  # the layout stays HWC


@builds("RandomRotate90")
def _rot90(p: dict) -> Any:
    # k quarter turns counter-clockwise, k drawn per sample from [low, high]; nearest-neighbour
    # rotation by a multiple of 90° moves whole pixels (the output is the image turned, exactly).
    low, high = p["times"]
    angles = [90.0 * k for k in range(low, high + 1)]
    return lambda x: fn.rotate(x, angle=fn.random.uniform(values=angles), keep_size=False, interp_type=types.INTERP_NN)


@builds("Rotate")
def _rotate(p: dict) -> Any:
    if p["mode"] != "constant":
        raise Unsupported(f"DALI's fn.rotate fills outside the image with a constant; border mode {p['mode']!r} is not measured")
    low, high = p["angle_range"]
    interp, fill = _INTERP[p["interpolation"]], p["fill"]
    return lambda x: fn.rotate(x, angle=_uniform(low, high), keep_size=True, fill_value=fill, interp_type=interp)


@builds("Grayscale")
def _grayscale(p: dict) -> Any:
    if p["num_output_channels"] != 3:
        raise Unsupported("the scenarios keep the channel count; only num_output_channels 3 is measured")

    def gray(x: Any) -> Any:
        one = fn.color_space_conversion(x, image_type=types.RGB, output_type=types.GRAY)
        return fn.color_space_conversion(one, image_type=types.GRAY, output_type=types.RGB)

    return gray


@builds("GaussianBlur")
def _gaussian_blur(p: dict) -> Any:
    window, sigma = list(p["kernel_size"]), float(p["sigma"])
    return lambda x: fn.gaussian_blur(x, window_size=window, sigma=sigma)


@builds("MedianBlur")
def _median_blur(p: dict) -> Any:
    size = p["blur_limit"]
    return lambda x: fn.experimental.median_blur(x, window_size=size)


@builds("GaussianNoise")
def _gaussian_noise(p: dict) -> Any:
    if not p["per_channel"]:
        raise Unsupported("DALI's fn.noise.gaussian draws every element (each channel) on its own; per_channel false is not measured")
    mean, std = p["mean"] * 255.0, p["std"] * 255.0  # fractions of the maximum, as the spec
    return lambda x: fn.noise.gaussian(x, mean=mean, stddev=std)


@builds("SaltAndPepper")
def _salt_and_pepper(p: dict) -> Any:
    amount, salt = p["amount"], p["salt_vs_pepper"]
    return lambda x: fn.noise.salt_and_pepper(x, prob=_uniform(*amount), salt_vs_pepper=_uniform(*salt))


@builds("JpegCompression")
def _jpeg(p: dict) -> Any:
    quality = p["quality"]
    return lambda x: fn.jpeg_compression_distortion(x, quality=quality)


@builds("Brightness")
def _brightness(p: dict) -> Any:
    # brightness_limit is a fraction of the maximum added to every pixel: DALI's brightness_shift
    # is in the same unit (1.0 = the type's maximum).
    low, high = p["brightness_limit"]
    return lambda x: fn.brightness(x, brightness_shift=_uniform(low, high))


@builds("Contrast")
def _contrast(p: dict) -> Any:
    # limit l → factor 1 + l around DALI's contrast centre (half the type's range, 128 for uint8).
    low, high = p["contrast_limit"]
    return lambda x: fn.contrast(x, contrast=_uniform(1 + low, 1 + high))


@builds("Saturation")
def _saturation(p: dict) -> Any:
    spread = p["saturation_factor"]
    return lambda x: fn.saturation(x, saturation=_factor(spread))


@builds("Hue")
def _hue(p: dict) -> Any:
    hue = float(p["hue"])  # degrees, as DALI's fn.hue takes them
    return lambda x: fn.hue(x, hue=_uniform(-hue, hue))


@builds("ColorJitter")
def _color_jitter(p: dict) -> Any:
    # scalar factors f → multiplicative draws in [1 - f, 1 + f]; hue h (a fraction of a turn) →
    # a shift drawn in ±h·360 degrees. DALI applies them in one fixed order (fn.color_twist).
    brightness, contrast, saturation, hue = p["brightness"], p["contrast"], p["saturation"], p["hue"] * 360.0
    return lambda x: fn.color_twist(
        x, brightness=_factor(brightness), contrast=_factor(contrast), saturation=_factor(saturation), hue=_uniform(-hue, hue)
    )


@builds("Equalize")
def _equalize(p: dict) -> Any:
    # fn.equalize equalizes each channel's histogram (OpenCV's mapping), not PIL's.
    return lambda x: fn.equalize(x)


def _cpu_decoder() -> str:
    """DALI's CPU image decoder as installed: nvImageCodec, with its libjpeg-turbo extension."""
    version = dali_backend.GetNvimgcodecVersion()  # e.g. 900 for 0.9.0
    codec = f"nvImageCodec {version // 1000}.{version // 100 % 10}.{version % 100}"
    import nvidia.nvimgcodec as nvimgcodec  # noqa: PLC0415 - only to find the installed extensions

    extensions = os.path.join(os.path.dirname(nvimgcodec.__file__), "extensions")
    names = os.listdir(extensions) if os.path.isdir(extensions) else []
    jpeg = "libjpeg-turbo for JPEG" if any(n.startswith("libjpeg_turbo_ext") for n in names) else "its CPU backends"
    return f"DALI fn.decoders.image, device cpu ({codec}, {jpeg})"


def cuda_devices() -> int:
    try:
        return int(dali_backend.GetCUDADeviceCount())
    except RuntimeError:  # no driver at all
        return 0


class DaliAdapter(Adapter):
    library = "dali"
    layout = "HWC"
    native_type = "nvidia.dali TensorList"
    builders = BUILDERS
    reasons = REASONS
    device_reasons = DEVICE_REASONS
    decoder = ""  # the CPU decoder, read from the installed nvImageCodec in ``__init__``

    def __init__(self) -> None:
        super().__init__()
        self.decoder = _cpu_decoder()
        self.device_decoders = {"cpu": self.decoder, "cuda": MIXED_DECODER}
        self._decode_pipe: Pipeline | None = None

    def versions(self) -> dict[str, str]:
        version = dali_backend.GetNvimgcodecVersion()
        return {
            "dali": dali.__version__,
            "nvimgcodec": f"{version // 1000}.{version // 100 % 10}.{version % 100}",
            "numpy": np.__version__,
        }

    def pin_threads(self, single: bool) -> dict[str, str]:
        # DALI's threads belong to each pipeline (num_threads = the job's workers); each start
        # reports what its pipeline had (``worker_threads``).
        return {"dali.num_threads": "per pipeline (the job's workers)"}

    def available_devices(self) -> list[str]:
        return ["cpu", "cuda"] if cuda_devices() > 0 else ["cpu"]

    def check_device(self, device: str) -> None:
        if device == "cpu":
            return
        if device != "cuda":
            raise Unsupported(f"dali runs on cpu or cuda (device {device!r} requested)")
        if cuda_devices() == 0:
            raise Unsupported("DALI's cuda rows decode with `mixed` (nvJPEG) and run on a GPU; DALI sees no CUDA device here")

    def _check_media(self, media: Any, request: dict) -> bool:
        if media == "video":
            raise Unsupported(VIDEO_REASON)
        return super()._check_media(media, request)

    def load(self, request: dict) -> dict:
        if request.get("targets") is not None:
            raise self.no_targets()
        if request.get("pipeline", False) is not True:
            raise Unsupported(MICRO_REASON)
        reply = super().load(request)
        self.decoder = self.device_decoders[self.device]
        return reply

    def prepare(self, request: dict) -> dict:
        raise Unsupported(MICRO_REASON)

    def decode(self, path: str) -> np.ndarray:
        """One file as HWC uint8 RGB, decoded by DALI's CPU decoder (the memory scope preloads
        items with it, once, before any loader)."""
        if self._decode_pipe is None:
            self._decode_pipe = _decode_pipeline()
        with open(path, "rb") as handle:
            encoded = np.frombuffer(handle.read(), dtype=np.uint8)
        try:
            self._decode_pipe.feed_input("encoded", [encoded])
            (out,) = self._decode_pipe.run()
        except RuntimeError as exc:
            self._decode_pipe = None  # DALI invalidates a pipeline whose operator failed
            raise ValueError(f"DALI could not decode the file ({dali_error(exc)})") from None
        return np.array(out[0])

    def shape_dtype(self, value: Any) -> tuple[list[int], str]:
        return list(value.shape), value.dtype.name

    # ----- pipeline (``dali_pipeline`` builds and runs DALI's own pipeline) --------------------
    def pipeline_ops(self) -> Any:
        from ..dali_pipeline import DaliPipelineOps  # noqa: PLC0415 - pipeline mode only

        return DaliPipelineOps(self)

    def build_recipe(self, crop, name, params, mean, std, split):  # type: ignore[no-untyped-def]
        """The recipe as a graph function (called while a pipeline is defined): crop → T →
        ``fn.crop_mirror_normalize`` (ImageNet mean/std in 0..255 units, float32, CHW)."""
        transform = self.build(name, params) if name is not None else None  # None: ceiling
        head = self.build(crop["name"], crop["params"]) if crop else None
        scale_mean = [m * 255.0 for m in mean]
        scale_std = [s * 255.0 for s in std]

        def graph(images: Any) -> Any:
            out = head(images) if head else images
            out = transform(out) if transform else out
            return fn.crop_mirror_normalize(out, dtype=types.FLOAT, output_layout="CHW", mean=scale_mean, std=scale_std)

        return graph, None

    def recipe_threads(self) -> dict[str, str]:
        return {}


def _decode_pipeline() -> Pipeline:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1, exec_async=False, exec_pipelined=False)
    with pipe:
        encoded = fn.external_source(name="encoded", dtype=types.UINT8)
        pipe.set_outputs(fn.decoders.image(encoded, device="cpu", output_type=types.RGB))
    pipe.build()
    return pipe


ADAPTER = DaliAdapter
