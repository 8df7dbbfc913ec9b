"""The name of the generics example's map<f32, _> whose closure captures 4 bytes (k: f32), read
from the manifest of a module built without --export (regen.sh)."""
import json
import sys

text = open(sys.argv[1]).read()
line = text[text.index("oxide.manifest.v1 ") + len("oxide.manifest.v1 "):].split("\n", 1)[0]
names = [k["name"] for k in json.loads(line)["kernels"]
         if k["name"].startswith("map<f32, ") and k["params"][0].get("size") == 4]
if len(names) != 1:
    sys.exit(f"regen_pick.py: want one map<f32, _> with a 4-byte closure in {sys.argv[1]}, found {names}")
print(names[0])
