"""Other drivers' images: raw encodings, image_transport's compressed format, and what is refused.

A ``topic`` camera reads any colour ``sensor_msgs/Image`` or ``sensor_msgs/CompressedImage``
(JPEG or PNG, as image_transport's ``compressed`` plugin writes them). Everything else, and
every payload that is cut short, garbage or lies about its size, is a MessageError: the node
drops it, counts it and warns.
"""

from __future__ import annotations

import array

import cv2
import numpy as np
import pytest

from robot_rl.nodes import camera as node_camera
from robot_rl.ros import convert
from robot_rl.ros import messages as m
from robot_rl.ros.errors import MessageError
from robot_rl.ros.messages import deserialize, serialize

RNG = np.random.default_rng(7)
_Y, _X = np.mgrid[0:48, 0:64]
# smooth, so JPEG keeps it close; a different ramp per channel, so a channel swap shows
IMAGE = np.dstack([_X * 4, _Y * 5, np.full_like(_X, 40)]).astype(np.uint8)


def compressed(payload: bytes, fmt: str = "rgb8; jpeg compressed bgr8") -> m.CompressedImage:
    return m.CompressedImage(header=convert.header(12.5, "cam"), format=fmt, data=array.array("B", payload))


def encoded(image: np.ndarray, ext: str) -> bytes:
    ok, data = cv2.imencode(ext, image)
    assert ok
    return data.tobytes()


@pytest.mark.parametrize("encoding, channels, order", [("rgba8", 4, [0, 1, 2]), ("bgra8", 4, [2, 1, 0]),
                                                       ("bgr8", 3, [2, 1, 0])])
def test_colour_encodings_with_alpha_or_reversed_order_read_as_rgb(encoding, channels, order):
    pixels = np.zeros((48, 64, channels), np.uint8)
    pixels[..., :3] = IMAGE[..., order]
    if channels == 4:
        pixels[..., 3] = 77  # alpha: dropped
    msg = m.Image(header=convert.header(3.0, "cam"), height=48, width=64, encoding=encoding, step=64 * channels,
                  data=array.array("B", pixels.tobytes()))
    image, stamp = convert.image_from_msg(msg)
    assert stamp == 3.0 and image.shape == (48, 64, 3) and np.array_equal(image, IMAGE)


@pytest.mark.parametrize("encoding", ["mono8", "16UC1", "yuv422", "bayer_rggb8", "32FC1", "", "rgb8\x00"])
def test_other_raw_encodings_are_refused_by_name(encoding):
    msg = m.Image(height=2, width=2, encoding=encoding, step=6, data=array.array("B", bytes(12)))
    with pytest.raises(MessageError, match="not supported.*rgb8, bgr8, rgba8 or bgra8"):
        convert.image_from_msg(msg)


@pytest.mark.parametrize("kind", ["jpeg", "png"])
def test_compressed_images_decode_to_what_opencv_decodes(kind):
    msg = convert.compressed_image_to_msg(IMAGE, 12.5, "cam", kind=kind)
    assert msg.format == f"rgb8; {kind} compressed bgr8"
    msg = deserialize(serialize(msg), m.CompressedImage)  # as it travels
    image, stamp = convert.compressed_image_from_msg(msg)
    reference = cv2.imdecode(np.frombuffer(bytes(msg.data), np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
    assert stamp == 12.5 and image.shape == (48, 64, 3) and image.dtype == np.uint8
    assert np.array_equal(image, reference)
    if kind == "png":
        assert np.array_equal(image, IMAGE)  # lossless
    else:
        assert np.abs(image.astype(int) - IMAGE).mean() < 3  # lossy, but the same picture, channels in order
    assert not image.flags.writeable
    assert convert.describe_image(msg) == f"64x48 {kind} (rgb8; {kind} compressed bgr8)"


def test_a_plain_format_string_and_an_rgba_png_are_read_too():
    rgba = np.dstack([IMAGE[..., ::-1], np.full((48, 64), 200, np.uint8)])  # BGRA as OpenCV writes it
    image, _ = convert.compressed_image_from_msg(compressed(encoded(rgba, ".png"), "png"))
    assert np.array_equal(image, IMAGE)


@pytest.mark.parametrize("fmt", ["mono8; jpeg compressed mono8", "16UC1; compressedDepth png",
                                 "mono16; png compressed mono16"])
def test_compressed_images_of_grey_or_depth_streams_are_refused_by_their_format(fmt):
    with pytest.raises(MessageError, match="not a colour image"):
        convert.compressed_image_from_msg(compressed(encoded(IMAGE, ".png"), fmt))


@pytest.mark.parametrize("payload, what", [
    (lambda: encoded(IMAGE[..., 0], ".jpg"), "jpeg of 1 component"),
    (lambda: encoded(IMAGE[..., 0], ".png"), "png of 8-bit grey"),
    (lambda: encoded(IMAGE.astype(np.uint16) * 257, ".png"), "png of 16-bit RGB"),
])
def test_grey_and_16_bit_payloads_are_refused_without_a_format_hint(payload, what):
    msg = compressed(payload(), "jpeg")
    with pytest.raises(MessageError, match="not colour"):
        convert.compressed_image_from_msg(msg)
    assert convert.describe_image(msg).startswith(f"64x48 {what}")


def test_corrupt_payloads_are_message_errors():
    jpeg, png = encoded(IMAGE[..., ::-1], ".jpg"), encoded(IMAGE[..., ::-1], ".png")
    bad = {
        "empty": b"",
        "garbage": RNG.bytes(2000),
        "jpeg cut in the scan": jpeg[: len(jpeg) // 2],
        "jpeg cut in the header": jpeg[:40],
        "png cut in the data": png[: len(png) // 2],
        "png cut in the header": png[:20],
        "jpeg body after a png signature": png[:8] + jpeg[8:],
        "a webp": b"RIFF\x00\x00\x00\x00WEBPVP8 ",
    }
    for name, payload in bad.items():
        msg = compressed(payload)
        with pytest.raises(MessageError):
            convert.compressed_image_from_msg(msg)
        assert convert.describe_image(msg), name  # a description never raises


def test_a_header_that_promises_a_huge_image_is_refused_before_decoding():
    png = bytearray(encoded(IMAGE[..., ::-1], ".png"))
    png[16:24] = (60000).to_bytes(4, "big") + (60000).to_bytes(4, "big")  # IHDR width, height (CRC now wrong too)
    with pytest.raises(MessageError, match="60000x60000.*at most 4096"):
        convert.compressed_image_from_msg(compressed(bytes(png)))
    jpeg = bytearray(encoded(IMAGE[..., ::-1], ".jpg"))
    sof = jpeg.index(b"\xff\xc0")
    jpeg[sof + 5:sof + 9] = (48).to_bytes(2, "big") + (64000).to_bytes(2, "big")
    with pytest.raises(MessageError, match="48x64000|64000x48"):
        convert.compressed_image_from_msg(compressed(bytes(jpeg)))


def test_a_header_that_lies_about_the_size_is_refused():
    png = bytearray(encoded(IMAGE[..., ::-1], ".png"))
    png[16:24] = (32).to_bytes(4, "big") + (24).to_bytes(4, "big")
    with pytest.raises(MessageError):
        convert.compressed_image_from_msg(compressed(bytes(png)))


def test_a_message_of_the_other_image_type_is_refused():
    with pytest.raises(MessageError, match="expected CompressedImage, got Image"):
        convert.compressed_image_from_msg(convert.image_to_msg(IMAGE, 0.0, "cam"))
    with pytest.raises(MessageError, match="expected Image, got CompressedImage"):
        convert.image_from_msg(convert.compressed_image_to_msg(IMAGE, 0.0, "cam"))


def test_descriptions_say_size_and_encoding():
    raw = m.Image(height=480, width=640, encoding="mono8", step=640, data=array.array("B", bytes(640 * 480)))
    assert convert.describe_image(raw) == "640x480 mono8"
    assert convert.describe_image(m.Image(height=1, width=1, encoding="\x01" * 100)).startswith("1x1 '\\x01")
    assert convert.describe_image(compressed(b"not an image", "jpeg")) == "12 bytes of undecodable jpeg data"


def test_the_camera_s_error_lines_name_what_convert_accepts():
    # robot_rl.nodes.camera is core code and may not import robot_rl.ros: the texts are kept equal here
    assert node_camera.RAW_ACCEPTED == convert.RAW_ACCEPTED
    assert node_camera.COMPRESSED_ACCEPTED == convert.COMPRESSED_ACCEPTED
