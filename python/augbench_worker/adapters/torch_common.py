"""Torch plumbing shared by the torchvision and Kornia adapters: thread pins, CUDA checks,
device moves, forcing with ``.contiguous()`` and synchronizing before the clock stops.

Imports torch only (both libraries are built on it); each library module still imports only
its own library on top of this.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import threads
from ..protocol import EXCEPTION, Unsupported, WorkerError
from .base import Adapter

CUDA_MISSING = "CUDA requested but torch.cuda.is_available() is False"
_DTYPE_NAMES = {torch.uint8: "uint8", torch.float32: "float32", torch.float16: "float16"}


class TorchAdapter(Adapter):
    native_type = "torch.Tensor"

    def torch_versions(self) -> dict[str, str]:
        versions = {"torch": torch.__version__, "numpy": np.__version__}
        if torch.version.cuda:
            versions["cuda"] = torch.version.cuda
        return versions

    def pin_threads(self, single: bool) -> dict[str, str]:
        return threads.pin_torch(torch, single)

    def recipe_threads(self) -> dict[str, str]:
        return {"torch.num_interop_threads": str(torch.get_num_interop_threads())}

    def available_devices(self) -> list[str]:
        return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]

    def check_device(self, device: str) -> None:
        if device not in ("cpu", "cuda"):
            raise Unsupported(f"{self.library} runs on 'cpu' or 'cuda', not {device!r}")
        if device == "cuda" and not torch.cuda.is_available():
            raise WorkerError(EXCEPTION, CUDA_MISSING)

    def build_batch_chain(self, stages: list[dict], first: int) -> Any:
        """The stages after the workers' on the batch, image by image on the device: a transform
        given a batch tensor would draw one set of parameters for all of its images, and every
        image draws its own (``random: per_image``). Kornia overrides this with true batches."""
        built = [self.chain_stage(first + i, stage) for i, stage in enumerate(stages)]

        def on_batch(batch: torch.Tensor) -> torch.Tensor:
            out = []
            for image in batch:
                for apply in built:
                    image = apply(image)
                out.append(image)
            return torch.stack(out)

        return on_batch

    def seed(self, seed: int) -> None:
        super().seed(seed)
        torch.manual_seed(seed)

    def replicate(self, item: torch.Tensor, times: int) -> torch.Tensor:
        return torch.cat([item] * times, dim=0).contiguous()  # CHW: channels first

    def to_device(self, item: torch.Tensor) -> torch.Tensor:
        return item.to(self.device)

    def force(self, out: Any) -> torch.Tensor:
        return out.contiguous()

    def sync(self) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()

    def is_native(self, out: Any) -> bool:
        return isinstance(out, torch.Tensor) and out.device.type == self.device

    def is_contiguous(self, out: Any) -> bool:
        return bool(out.is_contiguous())  # False: a strided view (a crop, a permute) ``.contiguous()`` copies

    def to_hwc_uint8(self, out: Any) -> np.ndarray:
        """CHW (or 1×CHW) uint8, or float in [0, 1] as Kornia holds it, as numpy HWC uint8."""
        image = out.detach().to("cpu")
        image = image[0] if image.dim() == 4 else image
        if image.is_floating_point():
            image = image.mul(255.0).round_().clamp_(0, 255)
        return np.ascontiguousarray(image.to(torch.uint8).permute(1, 2, 0).numpy())

    def shape_dtype(self, value: Any) -> tuple[list[int], str]:
        return list(value.shape), _DTYPE_NAMES.get(value.dtype, str(value.dtype).removeprefix("torch."))
