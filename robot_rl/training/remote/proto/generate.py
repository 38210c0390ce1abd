"""Regenerate the Python modules for ``learning.proto``.

Run from anywhere, after editing the .proto::

    python -m robot_rl.training.remote.proto.generate

It calls grpcio-tools' bundled ``protoc`` with the directory above the ``robot_rl``
package as the include root, so the generated gRPC module imports the messages as
``robot_rl.training.remote.proto.learning_pb2`` (an absolute import that works wherever the
package is installed). The output is committed, so users need only the runtime
libraries; the generated code checks at import time that they are at least the
versions it was generated with (grpcio-tools 1.85 emits protobuf 7.35 gencode, so
install ``protobuf>=7.35,<8`` and ``grpcio>=1.85``; setup.py says the same).
"""

from __future__ import annotations

import sys
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parent
ROOT = PROTO_DIR.parents[3]  # the directory that holds the robot_rl package
PROTOS = ["learning.proto"]


def main(argv: list[str] | None = None) -> int:
    """Generate into the package, or under ``--out DIR`` (to compare with what is committed)."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[args.index("--out") + 1]) if "--out" in args else ROOT
    try:
        from grpc_tools import protoc
    except ImportError:
        print("generate: grpcio-tools is not installed (it is in the dev extra: scripts/setup.sh dev)", file=sys.stderr)
        return 1
    include = str(Path(protoc.__file__).resolve().parent / "_proto")  # google/protobuf/*.proto
    for name in PROTOS:
        rel = (PROTO_DIR / name).relative_to(ROOT)
        protoc_args = ["protoc", f"-I{ROOT}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}",
                       f"--grpc_python_out={out}", str(rel)]
        code = protoc.main(protoc_args)
        if code != 0:
            print(f"generate: protoc failed on {rel} (exit {code})", file=sys.stderr)
            return code
        print(f"generated {rel.with_suffix('')}_pb2.py, _pb2.pyi, _pb2_grpc.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
