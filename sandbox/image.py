"""Build the sandbox image `cobalt-sandbox:<version>` (docs/architecture.md), online or offline.

Two layers. A base image with Python 3, pytest and a non-root user (uid 10001): from
`python:3.11-slim` where a registry answers, otherwise fully offline from a Debian root made
with `debootstrap` and brought in with `docker import` (no pull needed). On top, a tiny
layer with the whole harness package (sandbox/harness/), tagged with a hash of its files,
so a harness change rebuilds only that layer and the image a Sandbox needs is known
without asking Docker. `build_image` is idempotent and fast when the image exists; a file lock keeps two builds
from racing. Not here: running containers (sandbox/pool.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import docker
import requests

from sandbox.api import SandboxError

Progress = Callable[[str], None]
HERE = Path(__file__).resolve().parent
HARNESS_DIR = HERE / "harness"  # shipped whole: every .py file of the package
DEFAULT_NAME = "cobalt-sandbox"
SANDBOX_USER = "10001:10001"
HARNESS_CMD = [
    "python3",
    "-I",
    "-c",
    "import sys; sys.path.insert(0, '/opt/cobalt'); from sandbox.harness.main import main; main(sys.argv[1:])",
]
ONLINE_BASE, ONLINE_BASE_TAG = "python:3.11-slim", "cobalt-sandbox-base:python3.11-slim"
OFFLINE_BASE_TAG, SUITE = "cobalt-sandbox-base:bookworm", "bookworm"
# what the Docker engine's calls raise (sandbox.engine's own list, which imports this module)
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)
LOCK_PATH = os.path.join(tempfile.gettempdir(), "cobalt-sandbox-build.lock")
USER_LINES = {
    "etc/passwd": "sandbox:x:10001:10001:cobalt sandbox:/tmp:/usr/sbin/nologin\n",
    "etc/group": "sandbox:x:10001:\n",
}
TRIM = (
    "var/cache/apt/archives",
    "var/lib/apt/lists",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
)

ONLINE_DOCKERFILE = f"""FROM {ONLINE_BASE}
RUN pip install --no-cache-dir pytest \\
 && groupadd -g 10001 sandbox && useradd -u 10001 -g 10001 -M -d /tmp -s /usr/sbin/nologin sandbox
"""
FINAL_DOCKERFILE = """FROM {base}
COPY sandbox/ /opt/cobalt/sandbox/
RUN python3 -m compileall -q /opt/cobalt \\
 && site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" && mkdir -p "$site" \\
 && cp /opt/cobalt/sandbox/harness/plugins/cobalt_*.py "$site/" \\
 && if [ ! -e /usr/local/bin/python ] && [ ! -e /usr/bin/python ]; then ln -s /usr/bin/python3 /usr/local/bin/python; fi
USER 10001:10001
WORKDIR /work
ENV LANG=C.UTF-8 HOME=/tmp PYTHONDONTWRITEBYTECODE=1
LABEL cobalt.sandbox.version={version}
"""


def harness_files() -> dict[str, bytes]:
    """The top layer's files: the whole harness package, by path inside the build context."""
    files = {
        f"sandbox/harness/{path.relative_to(HARNESS_DIR).as_posix()}": path.read_bytes()
        for path in sorted(HARNESS_DIR.rglob("*.py"))
    }
    files["sandbox/__init__.py"] = b'"""Cobalt sandbox harness, as shipped into the image."""\n'
    return files


def image_version() -> str:
    """Hash of everything that goes into the top layer."""
    digest = hashlib.sha256(FINAL_DOCKERFILE.encode())
    for name, data in harness_files().items():
        digest.update(name.encode() + b"\0" + data)
    return digest.hexdigest()[:12]


def image_tag(name: str | None = None) -> str:
    """`cobalt-sandbox` -> `cobalt-sandbox:<version>`; a name with a tag is kept as is."""
    name = name or DEFAULT_NAME
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:{image_version()}"


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def require_image(client: docker.DockerClient, tag: str) -> None:
    if not image_exists(client, tag):
        raise SandboxError(f"the sandbox image {tag} is missing: run `cobalt sandbox build`")


def build_image(
    client: docker.DockerClient,
    name: str | None = None,
    force: bool = False,
    offline: bool | None = None,
    progress: Progress = print,
) -> str:
    """Make sure `image_tag(name)` exists, building what is missing; returns the tag."""
    tag = image_tag(name)
    if not force and image_exists(client, tag):
        progress(f"sandbox image {tag} is up to date")
        return tag
    with _build_lock():
        if not force and image_exists(client, tag):  # another process built it meanwhile
            progress(f"sandbox image {tag} is up to date")
            return tag
        start = time.monotonic()
        base = _base(client, offline, progress)
        progress(f"building {tag} on {base} (harness layer)")
        _docker_build(
            client, FINAL_DOCKERFILE.format(base=base, version=image_version()), harness_files(), tag, progress
        )
        progress(f"built {tag} in {time.monotonic() - start:.0f} s")
    return tag


def _base(client: docker.DockerClient, offline: bool | None, progress: Progress) -> str:
    candidates = [OFFLINE_BASE_TAG] if offline else [ONLINE_BASE_TAG, OFFLINE_BASE_TAG]
    for tag in candidates:
        if image_exists(client, tag):
            return tag
    if not offline:
        progress(f"pulling {ONLINE_BASE}")
        try:
            client.images.pull(ONLINE_BASE)
            _docker_build(client, ONLINE_DOCKERFILE, {}, ONLINE_BASE_TAG, progress)
            return ONLINE_BASE_TAG
        except (docker.errors.DockerException, SandboxError) as exc:
            progress(f"no registry available ({_first_line(exc)}); building offline with debootstrap")
    _build_offline_base(client, progress)
    return OFFLINE_BASE_TAG


@contextmanager
def _build_lock() -> Iterator[None]:
    """One build at a time on this machine (flock on LOCK_PATH). The file is opened for writing
    by anyone (a `sudo cobalt sandbox build` must not leave a root-only lock that refuses the
    next user's build); a lock that cannot be opened is one sentence."""
    try:
        fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise SandboxError(f"cannot open the sandbox build lock {LOCK_PATH} ({exc.strerror}); remove it") from None
    try:
        os.fchmod(fd, 0o666)
    except OSError:
        pass  # another user's file: it is usable as it is
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _docker_build(
    client: docker.DockerClient, dockerfile: str, files: dict[str, bytes], tag: str, progress: Progress
) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in {"Dockerfile": dockerfile.encode(), **files}.items():
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    try:
        stream = client.api.build(
            fileobj=buf, custom_context=True, tag=tag, rm=True, forcerm=True, pull=False, decode=True
        )
        for chunk in stream:
            if "error" in chunk:
                raise SandboxError(f"docker build of {tag} failed: {_first_line(chunk['error'])}")
            line = str(chunk.get("stream", "")).strip()
            if line.startswith("Step "):
                progress(f"  {line}")
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"docker build of {tag} failed: the Docker engine said {_first_line(str(exc))}") from None


def _build_offline_base(client: docker.DockerClient, progress: Progress) -> None:
    if os.geteuid() != 0:
        raise SandboxError(
            "building the sandbox image offline needs root for debootstrap: run `sudo cobalt sandbox build` once"
        )
    if not shutil.which("debootstrap"):
        raise SandboxError(
            "no registry answered and debootstrap is missing: install it "
            "(`apt-get install debootstrap`) and run `cobalt sandbox build` again"
        )
    mirror = os.environ.get("COBALT_DEBIAN_MIRROR", "http://deb.debian.org/debian")
    work = Path(tempfile.mkdtemp(prefix="cobalt-rootfs-", dir="/var/tmp"))
    root = work / "root"
    try:
        progress(f"debootstrap {SUITE} from {mirror} (takes a few minutes)")
        _stream(
            ["debootstrap", "--variant=minbase", "--include=python3,python3-pytest", SUITE, str(root), mirror], progress
        )
        for rel, line in USER_LINES.items():
            with open(root / rel, "a") as fh:
                fh.write(line)
        for rel in TRIM:
            for entry in (root / rel).glob("*"):
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        progress("packing the root file system")
        tar_path = work / "root.tar"
        subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(tar_path), "."], check=True)
        progress(f"importing it as {OFFLINE_BASE_TAG}")
        repo, tag = OFFLINE_BASE_TAG.split(":")
        client.api.import_image_from_file(
            str(tar_path), repository=repo, tag=tag, changes=["ENV LANG=C.UTF-8", 'CMD ["python3"]']
        )
    except subprocess.CalledProcessError as exc:
        raise SandboxError(f"building the offline base image failed: {exc}") from None
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"importing the offline base image failed: {_first_line(str(exc))}") from None
    finally:
        _unmount_below(root)
        shutil.rmtree(work, ignore_errors=True)


def _stream(cmd: list[str], progress: Progress) -> None:
    """Run a command, showing a line of its output every few seconds (and every warning)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    last, start = 0.0, time.monotonic()
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.monotonic()
        if now - last > 3 or not line.startswith("I:"):
            progress(f"  [{now - start:4.0f} s] {line.rstrip()}")
            last = now
    if proc.wait() != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)


def _unmount_below(root: Path) -> None:
    """debootstrap mounts /proc and /sys inside the root; never rmtree through a mount."""
    try:
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return
    for point in sorted((m for m in mounts if m.startswith(str(root) + "/")), reverse=True):
        subprocess.run(["umount", "-l", point], check=False)


def _first_line(exc: object) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
