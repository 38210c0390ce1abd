"""Where and how the learner's arithmetic runs: the device, bf16 autocast, torch.compile.

One place checks what a config asks for against what this machine has, so ``robot-rl
train``, the learner process and the benches refuse the same things with the same one
line: ``cuda`` where PyTorch sees no CUDA device, ``bf16`` on a GPU without bfloat16.

bf16 is autocast, not a cast of the networks: parameters, gradients, optimizer state,
losses and TD targets stay float32; convolutions and hidden matmuls run in bfloat16
(see :class:`robot_rl.agents.sac.SACAgent` for which outputs are kept float32).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, ContextManager

import torch

from robot_rl.errors import ConfigError

PRECISIONS = ("float32", "bf16")


def execution_device(name: str, key: str = "train.device") -> torch.device:
    """``auto`` picks CUDA when there is one; ``cuda`` without one is a ConfigError naming ``key``."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise no_cuda(name, key)
    return device


def no_cuda(name: str, key: str = "train.device") -> ConfigError:
    """The one line for ``key`` asking for CUDA where PyTorch sees none: what is wrong and what to
    type instead (``--set key=cpu`` for a config key, ``key cpu`` for a command-line option)."""
    build = (f"torch {torch.__version__} is a CPU-only build" if torch.version.cuda is None
             else f"torch {torch.__version__} is built for CUDA {torch.version.cuda} but finds no GPU or driver")
    cpu, auto = (f"{key} cpu", f"{key} auto") if key.startswith("-") else (f"--set {key}=cpu", f"{key}=auto")
    return ConfigError(f"{key} is '{name}' but PyTorch sees no CUDA device ({build}): run on the CPU with {cpu} "
                       f"(or {auto}, which takes a GPU when there is one), or install a CUDA build of torch "
                       "into the virtualenv")


def check_precision(precision: str, device: torch.device, key: str = "train.precision") -> None:
    """``bf16`` needs a CPU (always supported by PyTorch's autocast) or a GPU with native bfloat16."""
    if precision not in PRECISIONS:
        raise ConfigError(f"{key} is '{precision}'; expected one of {', '.join(PRECISIONS)}")
    if precision == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported(including_emulation=False):
        raise ConfigError(f"{key} is 'bf16' but {torch.cuda.get_device_name(device)} has no native bfloat16 "
                          "(it needs compute capability 8.0 or newer); use float32")


def autocast(device: torch.device, precision: str) -> Callable[[], ContextManager[Any]]:
    """A factory of the autocast context for ``precision`` (a no-op context for float32)."""
    if precision == "bf16":
        return lambda: torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext


def full_precision(device: torch.device) -> ContextManager[Any]:
    """Autocast off: what runs inside stays float32 even within a bf16 region."""
    return torch.autocast(device.type, enabled=False)
