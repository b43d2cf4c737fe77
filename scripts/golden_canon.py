"""Canonical forms for scripts/golden.sh: what a refactor must leave unchanged.

  python3 golden_canon.py json < out.json       # JSON lines, timing keys and paths dropped
  python3 golden_canon.py file PATH              # a model file: tensors + metadata, same rule

Timing keys (wall_s, learn_s, seconds, ...) and free-text tables that embed times are dropped;
every other number is kept exactly as printed.
"""

import hashlib
import json
import re
import struct
import sys

TIME = re.compile(
    r"(^|_)(s|ms|secs?|seconds|time|wall|elapsed|duration|date|created)(_per_\w+)?$"
    r"|^(wall|learn|elapsed|time|seconds|created)"
)
DROP = {"output", "path", "paths", "log", "dir", "out", "files", "checkpoint", "version", "markdown"}


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in sorted(x.items()) if not TIME.search(k) and k not in DROP}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def canon_json(stream):
    out = []
    for line in stream:
        line = line.strip()
        if line:
            out.append(json.dumps(strip(json.loads(line)), sort_keys=True))
    return "\n".join(out)


def canon_file(path):
    raw = open(path, "rb").read()
    if not path.endswith(".safetensors"):
        return hashlib.sha256(raw).hexdigest()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    for key, value in list(meta.items()):
        if isinstance(value, str) and value.startswith("{"):
            try:
                meta[key] = strip(json.loads(value))
            except ValueError:
                pass
    h = hashlib.sha256()
    h.update(json.dumps(strip(meta), sort_keys=True).encode())
    h.update(json.dumps(header, sort_keys=True).encode())
    h.update(raw[8 + n :])
    return h.hexdigest()


if __name__ == "__main__":
    if sys.argv[1] == "json":
        print(hashlib.sha256(canon_json(sys.stdin).encode()).hexdigest())
    else:
        print(canon_file(sys.argv[2]))
