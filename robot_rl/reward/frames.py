"""The one way camera images become classifier input, shared by recording and inference.

Frames are recorded from the env's observation (after its crop and resize) and brought
to ``reward.image_size`` here; the reward wrapper does exactly the same to each
observation, so the classifier sees at run time what it was trained on.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import cv2
import numpy as np

from robot_rl.errors import ConfigError


def classifier_images(obs: Mapping[str, np.ndarray], cameras: Sequence[str],
                      image_size: tuple[int, int]) -> dict[str, np.ndarray]:
    """``{camera: uint8 (height, width, 3)}`` at ``image_size`` (width, height) from an observation."""
    out = {}
    width, height = int(image_size[0]), int(image_size[1])
    for cam in cameras:
        if cam not in obs:
            raise ConfigError(f"the reward classifier needs camera '{cam}', which the observation lacks "
                              f"(it has {sorted(obs)}); add it to env.cameras and use env.obs_mode pixels or both")
        image = np.asarray(obs[cam])
        if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"camera '{cam}' gives {image.dtype} {image.shape}, expected uint8 (H, W, 3)")
        if image.shape[:2] != (height, width):
            image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
        out[cam] = np.ascontiguousarray(image)
    return out
