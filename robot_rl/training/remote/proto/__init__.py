"""The learning plane's wire format: ``learning.proto`` and the modules generated from it.

``learning_pb2.py``, ``learning_pb2.pyi`` and ``learning_pb2_grpc.py`` are generated and
committed; regenerate them after editing the .proto with
``python -m robot_rl.training.remote.proto.generate`` (needs grpcio-tools, a dev dependency).
"""
