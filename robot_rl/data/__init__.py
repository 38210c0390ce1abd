"""Experience: the Step record, replay buffers, demo files and recording.

* :mod:`transition`: :class:`Step`, the record every producer of experience hands on;
* :mod:`replay`: ring buffers storing each observation frame once, mixed demo/online sampling;
* :mod:`demos`: the on-disk demo format (manifest + one ``.npz`` per episode);
* :mod:`recording`: demo sources (scripted expert, human devices) and the recording loop;
* :mod:`spaces`: observation/action spaces as JSON, and a comparison that names differences.
"""
