"""What reaches an arm and how a config's hardware is typed, against fingerprints kept in
tests/drivers/fingerprints.json (recorded before the backends moved into their folders).

A change here means a backend now sends its library something else for the same fixed
sequence of commands, or a config's robot or camera hardware types differently: a change
of behaviour, to be made on purpose (tests/support/backend_fingerprints.py says how the
fingerprints are made and how to renew them).
"""

from __future__ import annotations

import json
from pathlib import Path

import backend_fingerprints as fp  # noqa: E402  (tests/support)
import pytest

GOLDEN = json.loads((Path(__file__).with_name("fingerprints.json")).read_text())


def test_every_example_configs_hardware_types_as_recorded():
    now = fp.config_fingerprints()
    changed = {name: sha for name, sha in GOLDEN["hardware"].items() if now.get(name, {}).get("hardware") != sha}
    assert not changed, f"robot/camera hardware of {sorted(changed)} now types differently (or the file is gone)"


@pytest.mark.parametrize("backend", sorted(GOLDEN["streams"]))
def test_each_arm_backend_sends_its_library_the_recorded_stream(backend, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(fp.SUPPORT))  # the spawned loop processes import the fakes by name
    import fake_pylibfranka
    import fake_rtde

    # the streams set these for the loop processes; monkeypatch puts them back afterwards
    for key in ("RECORDING_PYLIBFRANKA_LOG", fake_pylibfranka.SCENARIO_ENV, fake_rtde.SCENARIO_ENV):
        monkeypatch.setenv(key, "")
    stream = fp.STREAMS[backend](tmp_path)
    assert stream, "nothing reached the library"
    assert fp._sha(json.dumps(stream, sort_keys=True)) == GOLDEN["streams"][backend], (
        f"{backend}: the command stream changed:\n{json.dumps(stream, indent=1)[:3000]}")
