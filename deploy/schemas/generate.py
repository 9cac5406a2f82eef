#!/usr/bin/env python3
"""Writes the JSON schemas kubeconform checks deploy/kubernetes against (npm test, offline).

Source: the PyPI package kubernetes-validate (its `local-strict` schemas, made from the
Kubernetes OpenAPI document). Only the kinds listed in KINDS are kept, with the definitions they
reach; descriptions are dropped (kubeconform does not show them). The `$id`s and the absolute
`$ref`s (`/api/_definitions.json#...`, resolved against https://kubernetes.io) become refs
relative to the schema file, so kubeconform resolves them on disk and never reaches the network.

    python3 deploy/schemas/generate.py            # downloads the pinned wheel with pip
    python3 deploy/schemas/generate.py WHEEL      # or from a wheel already downloaded

Add a kind to KINDS when deploy/kubernetes starts using it (kubeconform -strict fails on a kind
it has no schema for), run this, and commit the result.
"""
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "kubernetes-validate"
PACKAGE_VERSION = "1.37.0"
KUBERNETES_VERSION = "v1.33.0"
KINDS = [
    "configmap-v1",
    "deployment-apps-v1",
    "poddisruptionbudget-policy-v1",
    "secret-v1",
    "service-v1",
]
OUT = Path(__file__).resolve().parent / f"{KUBERNETES_VERSION}-strict"
SRC = f"kubernetes_validate/kubernetes-json-schema/{KUBERNETES_VERSION}-local-strict/"
ABSOLUTE_REF = "/api/_definitions.json#"
DEFS_REF = re.compile(r"^(?:/api/_definitions\.json)?#/\$defs/(.+)$")


def wheel_path(argv):
    if len(argv) > 1:
        return Path(argv[1])
    tmp = Path(tempfile.mkdtemp())
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(tmp), f"{PACKAGE}=={PACKAGE_VERSION}"],
        check=True,
    )
    return next(tmp.glob("*.whl"))


def clean(node, refs, in_definitions):
    """Drops descriptions and $id, rewrites refs; collects the definitions referred to."""
    if isinstance(node, list):
        return [clean(x, refs, in_definitions) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("description", "$id"):
            continue
        if key == "$ref":
            m = DEFS_REF.match(value)
            if not m:
                raise SystemExit(f"unexpected $ref {value}")
            refs.add(m.group(1))
            value = f"#/$defs/{m.group(1)}" if in_definitions else f"_definitions.json#/$defs/{m.group(1)}"
        elif isinstance(value, (dict, list)) and not (key == "properties" and isinstance(value, dict)):
            value = clean(value, refs, in_definitions)
        elif key == "properties":
            value = {name: clean(prop, refs, in_definitions) for name, prop in value.items()}
        out[key] = value
    return out


def main(argv):
    wheel = zipfile.ZipFile(wheel_path(argv))
    definitions = json.loads(wheel.read(SRC + "_definitions.json"))["$defs"]
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    wanted = set()
    for kind in KINDS:
        schema = clean(json.loads(wheel.read(f"{SRC}{kind}.json")), wanted, False)
        (OUT / f"{kind}.json").write_text(json.dumps(schema, indent=1, sort_keys=True) + "\n")
    kept, todo = {}, sorted(wanted)
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        refs = set()
        kept[name] = clean(definitions[name], refs, True)
        todo.extend(sorted(refs - kept.keys()))
    defs = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": dict(sorted(kept.items()))}
    (OUT / "_definitions.json").write_text(json.dumps(defs, indent=1, sort_keys=True) + "\n")
    print(f"{OUT}: {len(KINDS)} kinds, {len(kept)} definitions")


if __name__ == "__main__":
    main(sys.argv)
