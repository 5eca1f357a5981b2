"""Dev aid: render every upstream kustomization with kubectl into /tmp/ref for comparisons."""

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support import remotes  # noqa: E402

shared = Path(__file__).resolve().parents[2] / "shared"
work = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/ref")
work.mkdir(parents=True, exist_ok=True)
r = remotes.start(shared, Path(tempfile.mkdtemp()))
tree = remotes.rewrite_tree(shared / "upstream", work / "upstream", r)
ok = 0
for d in remotes.kustomization_dirs(tree):
    rel = d.relative_to(tree)
    out = work / "out" / (str(rel).replace("/", "__") + ".yaml")
    out.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["kubectl", "kustomize", str(d)], capture_output=True, text=True)
    if p.returncode:
        print("FAIL", rel, p.stderr.strip()[:200])
    else:
        out.write_text(p.stdout)
        ok += 1
print(ok, "ok")
r.stop()
