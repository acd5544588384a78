#!/usr/bin/env python3
"""Validates proflens anomaly JSON (an array over ranks, or one rank object) against
fixtures/anomaly/schema/*.schema.json with the `jsonschema` package (installed
idempotently from PyPI if missing). Exit 0 = valid; prints each error otherwise."""
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError:  # idempotent install
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "jsonschema"])
    import jsonschema

here = os.path.dirname(os.path.abspath(__file__))
schema_dir = os.path.join(here, "..", "..", "fixtures", "anomaly", "schema")
disc = json.load(open(os.path.join(schema_dir, "anomaly_discovery.schema.json")))
rank = json.load(open(os.path.join(schema_dir, "anomaly_rank.schema.json")))
V = jsonschema.Draft202012Validator
V.check_schema(disc)
V.check_schema(rank)
data = json.load(open(sys.argv[1]))
items = data if isinstance(data, list) else [data]
errors = 0
for i, r in enumerate(items):
    for e in V(rank).iter_errors(r):
        print(f"rank[{i}]: {'/'.join(map(str, e.path))}: {e.message}")
        errors += 1
    for e in V(disc).iter_errors(r.get("anomaly_discovery", {})):
        print(f"rank[{i}].anomaly_discovery: {'/'.join(map(str, e.path))}: {e.message}")
        errors += 1
print(f"{len(items)} rank object(s), {errors} error(s)")
sys.exit(1 if errors else 0)
