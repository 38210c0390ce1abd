"""The classifier network trains where it should, and its file refuses what does not fit."""

import dataclasses

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from robot_rl.agents.encoders import ResNet10
from robot_rl.config.reward import RewardConfig, RewardEncoderConfig
from robot_rl.paths import resolve_config
from robot_rl.reward.dataset import FrameWriter, load_frames
from robot_rl.reward.model import ClassifierFileError, RewardClassifier, load_classifier, save_classifier
from robot_rl.reward.train import train_classifier, trainable_parameters
from robot_rl.tasks import load_config

PICK_CUBE = resolve_config("pick_cube")

CAMS = ["front", "wrist"]


def synthetic_frames(folder, n_episodes=12, steps=20, size=(32, 32), seed=0, random_labels=False):
    """Episodes where success = a bright square in the front image (learnable in a few steps)."""
    rng = np.random.default_rng(seed)
    w, h = size
    writer = FrameWriter(folder, cameras=CAMS, image_size=size, task="Synthetic", label_source="ground_truth",
                         tags=["synthetic"], chunk_frames=64)
    for _ in range(n_episodes):
        for t in range(steps):
            label = t >= steps // 2
            imgs = {c: rng.integers(0, 60, (h, w, 3), dtype=np.uint8) for c in CAMS}
            if label:
                x, y = rng.integers(0, w - 8), rng.integers(0, h - 8)
                imgs["front"][y:y + 8, x:x + 8] = 250
            if random_labels:
                label = bool(rng.random() < 0.5)
            writer.add(imgs, label, "synthetic")
        writer.end_episode()
    writer.close()
    return load_frames(folder)


def small_cfg(**kw) -> RewardConfig:
    base = dict(image_size=(32, 32), train_steps=30, batch_size=16, eval_every=10, learning_rate=1e-3,
                encoder=RewardEncoderConfig(channels=(8, 16), strides=(2, 2), latent_dim=16, shift_pad=2),
                hidden_dim=16, min_accuracy=0.0, max_fpr=1.0, min_recall=0.0, target_fpr=0.05, torch_threads=1)
    base.update(kw)
    return RewardConfig(**base)


def test_every_trainable_part_gets_gradients_and_changes():
    torch.manual_seed(0)
    cfg = small_cfg()
    model = RewardClassifier.from_config(cfg)
    params = trainable_parameters(model)
    assert any(n.startswith("encoder.backbones.front") for n in params)  # the conv layers train
    assert any(n.startswith("encoder.heads.wrist") for n in params)
    before = {n: p.detach().clone() for n, p in params.items()}
    batch = {c: torch.randint(0, 256, (16, 32, 32, 3), dtype=torch.uint8) for c in CAMS}
    target = torch.tensor([0.0, 1.0] * 8)
    opt = torch.optim.Adam(params.values(), lr=1e-3)
    for _ in range(3):
        loss = F.binary_cross_entropy_with_logits(model(batch, augment=True), target)
        opt.zero_grad()
        loss.backward()
        for n, p in params.items():
            assert p.grad is not None and float(p.grad.abs().sum()) > 0, f"{n} got no gradient"
        opt.step()
    for n, p in params.items():
        assert not torch.equal(before[n], p.detach()), f"{n} did not change"


def test_train_classifier_updates_the_encoder_and_learns(tmp_path):
    frames = synthetic_frames(tmp_path / "f")
    cfg = small_cfg(train_steps=60)
    torch.manual_seed(3)  # train_classifier(seed=3) builds its model first after seeding: same init
    init = RewardClassifier.from_config(cfg).state_dict()
    result = train_classifier(frames, cfg, seed=3)
    trained = result.model.state_dict()
    conv = "encoder.backbones.front.net.0.weight"
    assert not torch.equal(init[conv], trained[conv])
    assert result.report["held_out"]["accuracy"] >= 0.9
    assert result.report["data"]["episodes"] == {"train": 8, "calibration": 2, "test": 2}


def test_frozen_resnet_backbone_stays_frozen_while_its_head_trains(tmp_path):
    torch.manual_seed(0)
    weights = tmp_path / "resnet10.pt"
    torch.save({"state_dict": ResNet10().state_dict()}, weights)
    frames = synthetic_frames(tmp_path / "f", n_episodes=6, steps=10)
    enc = RewardEncoderConfig(kind="resnet10", pretrained_path=str(weights), spatial_features=2, latent_dim=8)
    cfg = small_cfg(encoder=enc, train_steps=15, calibration_fraction=0.2, test_fraction=0.2)
    torch.manual_seed(1)
    init = RewardClassifier.from_config(cfg).state_dict()
    result = train_classifier(frames, cfg, seed=1)
    names = trainable_parameters(result.model)
    assert names and not any("backbones" in n for n in names)
    trained = result.model.state_dict()
    file_weights = torch.load(weights, weights_only=True)["state_dict"]
    assert torch.equal(trained["encoder.backbones.front.conv1.weight"], file_weights["conv1.weight"])
    assert not torch.equal(init["encoder.heads.front.kernel"], trained["encoder.heads.front.kernel"])


def test_a_hugging_face_snapshot_folder_is_read_as_its_safetensors(tmp_path):
    from safetensors.torch import save_file

    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "config.json").write_text('{"model_type": "resnet"}')
    torch.manual_seed(3)
    weights = {k: v.contiguous() for k, v in ResNet10().state_dict().items() if v.is_floating_point()}
    save_file(weights, str(snapshot / "model.safetensors"))
    model = RewardClassifier.from_config(small_cfg(encoder=RewardEncoderConfig(
        kind="resnet10", pretrained_path=str(snapshot), spatial_features=2, latent_dim=8)))
    assert torch.equal(model.state_dict()["encoder.backbones.front.conv1.weight"], weights["conv1.weight"])
    (snapshot / "model.safetensors").unlink()
    enc = RewardEncoderConfig(kind="resnet10", pretrained_path=str(snapshot))
    with pytest.raises(Exception, match=r"^reward.encoder.pretrained_path: .*snapshot: is a Hugging Face snapshot "
                                        r"folder without a single model.safetensors") as err:
        RewardClassifier.from_config(small_cfg(encoder=enc))
    assert "\n" not in str(err.value)


def test_missing_resnet_weights_name_the_reward_key():
    enc = RewardEncoderConfig(kind="resnet10", pretrained_path="/nonexistent/resnet10.pt")
    with pytest.raises(Exception, match=r"reward.encoder.pretrained_path: weights file not found"):
        RewardClassifier.from_config(small_cfg(encoder=enc))


def _saved(tmp_path, **header):
    torch.manual_seed(0)
    cfg = small_cfg()
    model = RewardClassifier.from_config(cfg)
    model.threshold = 0.25
    path = tmp_path / "clf.pt"
    held = {"accuracy": 0.99, "fpr": 0.0, "recall": 0.95}
    save_classifier(path, model, **{"held_out": held, **header})
    return cfg, model, path


def test_file_round_trip_gives_the_same_decisions(tmp_path):
    cfg, model, path = _saved(tmp_path)
    loaded = load_classifier(path, dataclasses.replace(cfg, min_accuracy=0.98, max_fpr=0.01, min_recall=0.9))
    assert loaded.threshold == 0.25 and loaded.cameras == CAMS and loaded.image_size == (32, 32)
    imgs = {c: np.random.default_rng(1).integers(0, 256, (5, 32, 32, 3), dtype=np.uint8) for c in CAMS}
    assert np.allclose(model.logits(imgs), loaded.logits(imgs), atol=1e-6)
    blob = torch.load(path, weights_only=True)  # plain tensors and strings: no pickled objects
    assert set(blob) == {"format", "version", "header", "state_dict"}


def test_loading_refuses_other_cameras_or_size(tmp_path):
    cfg, _, path = _saved(tmp_path)
    with pytest.raises(ClassifierFileError, match=r"trained on cameras \['front', 'wrist'\], but reward.cameras "
                                                  r"is \['front'\]"):
        load_classifier(path, dataclasses.replace(cfg, cameras=["front"]))
    with pytest.raises(ClassifierFileError, match=r"trained on cameras .* but reward.cameras is \['wrist', 'front'\]"):
        load_classifier(path, dataclasses.replace(cfg, cameras=["wrist", "front"]))
    with pytest.raises(ClassifierFileError, match=r"trained on 32x32 images, but reward.image_size is 64x64"):
        load_classifier(path, dataclasses.replace(cfg, image_size=(64, 64)))


def test_loading_refuses_a_classifier_below_the_configured_bar(tmp_path):
    cfg, _, path = _saved(tmp_path)
    strict = dataclasses.replace(cfg, min_accuracy=0.995, max_fpr=0.01, min_recall=0.9)
    with pytest.raises(ClassifierFileError, match=r"misses the bar: held-out accuracy 0.9900 < reward.min_accuracy"):
        load_classifier(path, strict)
    assert load_classifier(path, dataclasses.replace(strict, allow_below_bar=True)).threshold == 0.25


def test_not_a_classifier_file_is_refused(tmp_path):
    bad = tmp_path / "x.pt"
    torch.save({"weights": torch.zeros(2)}, bad)
    with pytest.raises(ClassifierFileError, match="is not a reward classifier file"):
        load_classifier(bad, small_cfg())
    (tmp_path / "y.pt").write_text("hello")
    with pytest.raises(ClassifierFileError, match="is not a reward classifier file"):
        load_classifier(tmp_path / "y.pt", small_cfg())
    with pytest.raises(ClassifierFileError, match="not found"):
        load_classifier(tmp_path / "none.pt", small_cfg())


def test_config_section_is_typed_and_checked(tmp_path):
    cfg = load_config(PICK_CUBE, ["reward.consecutive=3", "reward.image_size=[48,48]"])
    assert cfg.reward.consecutive == 3 and cfg.reward.image_size == (48, 48)
    assert cfg.reward.encoder.channels == (16, 32, 32, 32)
    with pytest.raises(Exception, match="reward.target_fpr"):
        load_config(PICK_CUBE, ["reward.target_fpr=2"])
    with pytest.raises(Exception, match="unknown key 'reward.camera'"):
        load_config(PICK_CUBE, ["reward.camera=[front]"])
