"""run_python_block.py BLOCK SLUICE PYTHONPATH: runs a Python block of
README.md against a real peer. The block's first ZeroMQ endpoint is swapped
for a fresh ipc one, `sluice cat` receives there, and the test passes when
the block and cat both exit 0 and cat printed data and the end of stream."""
import os
import re
import subprocess
import sys
import tempfile

block_path, sluice, pythonpath = sys.argv[1:4]
code = open(block_path).read()
endpoint = re.search(r"""(ipc|tcp)://[^"' ]+""", code)
if not endpoint:
    sys.exit(f"{block_path}: expected a block that sends to a ZeroMQ endpoint, found none")

with tempfile.TemporaryDirectory() as tmp:
    fresh = f"ipc://{tmp}/in"
    script = os.path.join(tmp, "block.py")
    with open(script, "w") as f:
        f.write(code.replace(endpoint.group(0), fresh))
    cat = subprocess.Popen([sluice, "cat", fresh, "--timeout", "30"], stdout=subprocess.PIPE, text=True)
    env = dict(os.environ, PYTHONPATH=pythonpath)
    block = subprocess.run([sys.executable, script], env=env, timeout=60)
    try:
        out, _ = cat.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        cat.kill()
        out, _ = cat.communicate()

lines = out.splitlines()
if block.returncode != 0:
    sys.exit(f"the block exited {block.returncode}")
if cat.returncode != 0 or len(lines) < 2 or not lines[-1].endswith("end of stream"):
    sys.exit(f"sluice cat exited {cat.returncode} after printing:\n{out}")
print(f"{len(lines) - 1} messages and the end of stream reached sluice cat; the last data line: {lines[-2]}")
