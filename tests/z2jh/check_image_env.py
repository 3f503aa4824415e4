"""``make image-check``: the single-user image's Python environment, built as the image builds it, runs the book.

    build/image-check/venv/bin/python tests/z2jh/check_image_env.py --repo build/image-check/repo

Run by the Python of a fresh venv into which ``deploy/z2jh/install-kit.sh``
(the image's own install step) put the pinned ``requirements.txt`` and the kit
from a clean copy of HEAD (``--repo``). It checks, in that environment:

* the kit is installed, not editable; ``jupyterhub-singleuser`` is the
  chart's JupyterHub minor version (``tests/fixtures/z2jh/SOURCES.md``);
* the chart config's kernel-culling file (``singleuser.extraFiles``, rendered
  to JSON as the chart renders it) is on the server's config path and read by
  it (``jupyter server --show-config-json``);
* a learner's copy of the book, made as the image makes it (``copy_book.py
  --from-repo`` at build time into the image's book, then the postStart hook's
  copy into a fresh home), runs chapter 03 there in a kernel of this
  environment (nbclient, the build's settings) with the stored outputs;
* and prints the environment's size on disk and gzip-compressed, the figure
  an image pull's size follows.

Exit status 0 when all of it holds. Not part of ``make test`` (the install takes a minute or more).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata as metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
import time
import zlib
from pathlib import Path

import nbformat
import yaml
from packaging.version import Version

CHAPTER = "notebooks/03_query_loop.ipynb"


class _Counter:
    """A file that only counts what is written to it."""

    def __init__(self) -> None:
        self.size = 0
        self._compress = zlib.compressobj(6, zlib.DEFLATED, 31)  # gzip, as an image layer is

    def write(self, data: bytes) -> int:
        self.size += len(self._compress.compress(data))
        return len(data)

    def close(self) -> None:
        self.size += len(self._compress.flush())


def environment_size(prefix: Path) -> tuple[int, int]:
    """(bytes on disk, bytes as a gzip-compressed tar) of the whole environment (packages, scripts, JupyterLab's
    static files in share/): what the image's install step adds, its largest layer, give or take pip itself."""
    counter = _Counter()
    on_disk = 0
    with tarfile.open(fileobj=counter, mode="w|") as archive:
        for path in sorted(prefix.rglob("*")):
            if path.is_file() and not path.is_symlink():
                on_disk += path.stat().st_size
            archive.add(path, arcname=str(path.relative_to(prefix)), recursive=False)
    counter.close()
    return on_disk, counter.size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="the clean copy the environment was built from")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    work = repo.parent / "run"
    problems: list[str] = []

    # the environment: the kit not editable, the chart's JupyterHub
    import dreamloop

    if "site-packages" not in dreamloop.__file__:
        problems.append(f"dreamloop is not installed into the environment: {dreamloop.__file__}")
    chart = re.search(r"appVersion (\d+\.\d+)", (repo / "tests" / "fixtures" / "z2jh" / "SOURCES.md").read_text())
    singleuser = Path(sys.executable).with_name("jupyterhub-singleuser")
    version = subprocess.run([str(singleuser), "--version"], capture_output=True, text=True).stdout.strip()
    if not version.startswith(chart.group(1) + "."):
        problems.append(f"jupyterhub-singleuser {version!r} is not the chart's JupyterHub {chart.group(1)}")
    print(f"environment: Python {sys.version.split()[0]} | dreamloop {metadata.version('dreamloop')} (not editable) "
          f"| jupyterhub-singleuser {version} (chart's JupyterHub {chart.group(1)}) | jupyterlab "
          f"{metadata.version('jupyterlab')} | ipykernel {metadata.version('ipykernel')}", flush=True)
    if Version(metadata.version("ipykernel")) < Version("7.4"):
        problems.append(f"ipykernel {metadata.version('ipykernel')} < 7.4")

    # the kernel culling, as the chart mounts it
    from jupyter_core.paths import jupyter_config_path

    config = yaml.safe_load((repo / "deploy" / "z2jh" / "config.yaml").read_text(encoding="utf-8"))
    (culling,) = [entry for entry in config["singleuser"]["extraFiles"].values()
                  if entry["mountPath"].endswith("jupyter_server_config.json")]
    mounted = Path(culling["mountPath"])
    if str(mounted.parent) not in jupyter_config_path():
        problems.append(f"{mounted.parent} is not on the server's config path {jupyter_config_path()}")
    etc = work / "etc-jupyter"
    etc.mkdir(parents=True)
    (etc / mounted.name).write_text(json.dumps(culling["data"]))  # what the chart renders from `data`
    environment = {**os.environ, "HOME": str(work / "home"), "JUPYTER_CONFIG_PATH": str(etc),
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    shown = subprocess.run([str(Path(sys.executable).with_name("jupyter")), "server", "--show-config-json"],
                           capture_output=True, text=True, env=environment, timeout=120)
    loaded = json.loads(shown.stdout or "{}").get("MappingKernelManager")
    print(f"kernel culling read by the server from {mounted.name}: {loaded}")
    if loaded != culling["data"]["MappingKernelManager"]:
        problems.append(f"the server did not read the chart's culling file: {shown.stderr[-300:]}")

    # the book into a learner's home, as the image build and the postStart hook do
    copy = repo / "deploy" / "z2jh" / "copy_book.py"
    book, home = work / "opt-book", work / "home"
    for step in ([sys.executable, str(copy), "--from-repo", str(repo), str(book)],
                 [sys.executable, str(copy), str(book), str(home / "dreamloop")]):
        done = subprocess.run(step, capture_output=True, text=True)
        print(done.stdout.strip())
        if done.returncode or done.stderr:
            problems.append(f"{' '.join(step[1:])}: {done.stderr.strip() or done.returncode}")

    # chapter 03 from the learner's copy, in a kernel of this environment
    spec = importlib.util.spec_from_file_location("dreamloop_notebook_build", repo / "notebooks" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    os.environ.update({**build.NB_ENV, "HOME": environment["HOME"], "PATH": environment["PATH"]})
    path = home / "dreamloop" / CHAPTER
    stored = nbformat.read(path, as_version=4)
    fresh = nbformat.read(path, as_version=4)
    started = time.monotonic()
    try:
        asyncio.run(build.notebook_client(fresh, path.parent).async_execute())
        differences = build.output_differences(stored, fresh)
    except Exception as error:  # noqa: BLE001 - any failure of the run is the check's finding
        differences = [f"{type(error).__name__}: {str(error).strip().splitlines()[-1:]}"]
    print(f"{CHAPTER} from ~/dreamloop ran in {time.monotonic() - started:.1f} s: "
          + ("outputs match the stored ones" if not differences else f"{len(differences)} difference(s)"))
    problems += [f"{CHAPTER}: {line}" for line in differences[:5]]

    on_disk, compressed = environment_size(Path(sys.prefix))
    print(f"the environment: {on_disk / 2**20:.0f} MB on disk, {compressed / 2**20:.0f} MB as a gzip-compressed layer")
    for line in problems:
        print(f"  PROBLEM: {line}")
    print(f"image-check {'passed' if not problems else 'FAILED'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
