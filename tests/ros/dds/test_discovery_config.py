"""The Cyclone configuration keeps announcing to peers (late joiners), is valid here, and old Cyclones are refused."""

from __future__ import annotations

import random

import pytest

from robot_rl.ros.dds import transport
from robot_rl.ros.dds.config import check_cyclonedds_version, cyclone_config, settings_from_env
from robot_rl.ros.errors import BackendError

KEEP = "<InitialLocatorPruneDelay>inf</InitialLocatorPruneDelay>"

WITH_PEERS = [
    {},  # the default: LOCALHOST
    {"ROS_STATIC_PEERS": "192.168.1.7"},
    {"ROBOT_RL_DDS_LOCALHOST": "1"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "ROS_STATIC_PEERS": "10.0.0.5;10.0.0.6"},
]
WITHOUT_PEERS = [
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF", "ROS_STATIC_PEERS": "10.0.0.5"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"},
]


@pytest.mark.parametrize("env", WITH_PEERS)
def test_wherever_peers_are_configured_they_are_never_pruned(env):
    xml = cyclone_config(settings_from_env(env))
    assert xml.count(KEEP) == 1
    discovery = xml[xml.index("<Discovery>"):xml.index("</Discovery>")]
    assert KEEP in discovery and "<Peers>" in discovery


@pytest.mark.parametrize("env", WITHOUT_PEERS)
def test_without_peers_there_is_nothing_to_prune(env):
    assert "InitialLocatorPruneDelay" not in cyclone_config(settings_from_env(env))


def test_site_settings_still_come_last_and_win():
    site = "<CycloneDDS><Domain><Discovery><InitialLocatorPruneDelay>5s</InitialLocatorPruneDelay></Discovery>" \
           "</Domain></CycloneDDS>"
    xml = cyclone_config(settings_from_env({"CYCLONEDDS_URI": site}))
    assert xml.index(KEEP) < xml.index(site) and xml.endswith(site)


@pytest.mark.parametrize("env", WITH_PEERS + WITHOUT_PEERS)
def test_the_installed_cyclone_accepts_every_generated_config(env):
    from cyclonedds.domain import Domain

    settings = settings_from_env({**env, "ROS_DOMAIN_ID": str(random.randint(101, 232))})
    domain = Domain(settings.domain_id, cyclone_config(settings))  # no participant: nothing is sent
    domain.__del__()


def test_the_installed_cyclone_refuses_an_unknown_element():
    """What Cyclone 0.10 does with InitialLocatorPruneDelay: why the floor is cyclonedds 11."""
    from cyclonedds.core import DDSException
    from cyclonedds.domain import Domain

    with pytest.raises(DDSException):
        Domain(random.randint(101, 232), "<CycloneDDS><Domain><Discovery><NoSuchSetting>1</NoSuchSetting>"
                                         "</Discovery></Domain></CycloneDDS>")


@pytest.mark.parametrize("version", ["11.0.1", "11.0.0", "12.1.0rc1", "unknown", ""])
def test_cyclonedds_11_and_later_are_accepted(version):
    check_cyclonedds_version(version)


@pytest.mark.parametrize("version", ["0.10.5", "0.9.1", "0.11.0"])
def test_an_older_cyclonedds_is_one_clear_error(version):
    with pytest.raises(BackendError, match=rf"cyclonedds {version} is installed, but the DDS backend needs "
                                           r"cyclonedds >= 11 \(pip install -U 'cyclonedds>=11'\)"):
        check_cyclonedds_version(version)


def test_a_participant_refuses_an_old_cyclonedds_before_starting_dds(monkeypatch):
    monkeypatch.setattr(transport.metadata, "version", lambda name: "0.10.5")
    with pytest.raises(BackendError, match="cyclonedds 0.10.5 is installed"):
        transport.Participant(settings_from_env({"ROBOT_RL_DDS_LOCALHOST": "1",
                                                 "ROS_DOMAIN_ID": str(random.randint(1, 100))}))
