"""Build llama.cpp's `llama-server` and `llama-bench` offline, once per machine kind, into the cache.

The source is the `vendor/llama.cpp` tree of the pinned `llama-cpp-python` sdist on PyPI (the
only registry these machines reach); it also carries `convert_lora_to_gguf.py` and `gguf-py`,
which turn a PEFT adapter into a GGUF LoRA (`assistant.serving.llama_lora`).

CPU features are chosen per machine, never with `-DGGML_NATIVE=ON`: on a CPU with AMX that
build crashed at its first computation (docs/serving.md). The instruction sets this CPU
reports (/proc/cpuinfo) pick one of a few explicit variants (`avx512`, `avx2`, `generic`); each
variant is built once into `<cache>/llama.cpp/<version>-<variant>/` and completed by a marker
file, so the second `make` skips it and a machine of another kind builds its own. The work
happens in a `.partial-*` directory renamed into place, under a lock that a second build waits on
(`atomic.building`), so an interrupted build leaves nothing
that looks finished. This module builds and locates; starting a server is `llama_server`'s job.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import tarfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from assistant.errors import UserError
from assistant.serving.pip_fetch import pip_download
from assistant.store import atomic

SDIST_PACKAGE = "llama-cpp-python"
SDIST_VERSION = "0.3.36"
MARKER = "cobalt-llama.json"
TARGETS = ("llama-server", "llama-bench")
Progress = Callable[[str], None]

# Flags common to every variant: no network at build time (no curl, no prebuilt web UI from a hub),
# static libraries so the binaries move with their folder, nothing but the two tools.
BASE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
)
AVX2_FLAGS = ("-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_BMI2=ON")
# AVX-512 extensions enabled only when the CPU has them (cpuinfo flag -> cmake option).
AVX512_EXTENSIONS = {
    "avx512_vnni": "-DGGML_AVX512_VNNI=ON",
    "avx512vbmi": "-DGGML_AVX512_VBMI=ON",
    "avx512_bf16": "-DGGML_AVX512_BF16=ON",
}
AVX512_BASE = ("avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd")


class EngineBuildError(UserError):
    """llama.cpp could not be fetched or built; the message says which step failed and where its log is."""


@dataclass(frozen=True)
class Variant:
    """One build of llama.cpp for a family of CPUs."""

    name: str
    flags: tuple[str, ...]


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The instruction-set flags the first CPU of /proc/cpuinfo reports (empty where unreadable)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def choose_variant(flags: set[str], machine: str | None = None) -> Variant:
    """The build for a CPU with these flags: AVX-512 (with the extensions present), AVX2, or
    generic (other architectures, or x86 without AVX2). AMX stays off everywhere."""
    machine = machine or platform.machine()
    if machine not in ("x86_64", "AMD64"):
        return Variant("generic", ())
    if all(f in flags for f in AVX512_BASE) and {"avx2", "bmi2"} <= flags:
        extra = tuple(opt for flag, opt in AVX512_EXTENSIONS.items() if flag in flags)
        suffix = "".join(f"-{flag.removeprefix('avx512').strip('_')}" for flag in AVX512_EXTENSIONS if flag in flags)
        return Variant("avx512" + suffix, (*AVX2_FLAGS, "-DGGML_AVX512=ON", *extra))
    if {"avx2", "fma", "f16c", "bmi2"} <= flags:  # the AVX2 build also compiles with -mbmi2
        return Variant("avx2", AVX2_FLAGS)
    # ggml turns SSE4.2 and BMI2 on by default when not native: off, for any x86-64 CPU
    off = ("AVX", "AVX2", "FMA", "F16C", "SSE42", "BMI2")
    return Variant("generic", tuple(f"-DGGML_{name}=OFF" for name in off))


def engine_root(cache_dir: Path) -> Path:
    return cache_dir / "llama.cpp"


def build_dir(cache_dir: Path, variant: Variant | None = None) -> Path:
    variant = variant or choose_variant(cpu_flags())
    return engine_root(cache_dir) / f"{SDIST_VERSION}-{variant.name}"


def installed(cache_dir: Path) -> Path | None:
    """This machine's finished build directory, or None."""
    folder = build_dir(cache_dir)
    return folder if (folder / MARKER).is_file() else None


def binary(cache_dir: Path, tool: str = "llama-server") -> Path:
    """A built tool of this machine's variant; an error that says how to build it otherwise."""
    folder = installed(cache_dir)
    if folder is None:
        raise EngineBuildError(
            f"llama.cpp is not built for this CPU yet (expected {build_dir(cache_dir)}): run `cobalt engine build` "
            "(make does it at set-up)"
        )
    return folder / "bin" / tool


def source_tree(cache_dir: Path) -> Path:
    """The llama.cpp source tree kept beside the build (convert_lora_to_gguf.py, gguf-py)."""
    folder = installed(cache_dir)
    if folder is None:
        binary(cache_dir)  # raises the one-sentence error
    assert folder is not None
    return folder / "src"


def _fetch_sdist(cache_dir: Path, progress: Progress) -> Path:
    sdists = cache_dir / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    name = f"{SDIST_PACKAGE.replace('-', '_')}-{SDIST_VERSION}.tar.gz"
    path = sdists / name
    if path.is_file():
        return path
    progress(f"downloading the {SDIST_PACKAGE}=={SDIST_VERSION} source distribution (about 77 MB) ...")
    error = pip_download(f"{SDIST_PACKAGE}=={SDIST_VERSION}", sdists, "sdist")
    if error is not None or not path.is_file():
        raise EngineBuildError(
            f"could not download {SDIST_PACKAGE}=={SDIST_VERSION} from the package index: {error or 'no sdist'}"
        )
    return path


def _extract_tree(sdist: Path, dest: Path) -> Path:
    """Unpack only `vendor/llama.cpp` of the sdist into `dest/src`."""
    prefix = f"{sdist.name.removesuffix('.tar.gz')}/vendor/llama.cpp/"
    src = dest / "src"
    try:
        with tarfile.open(sdist) as archive:
            members = []
            for member in archive.getmembers():
                if member.name.startswith(prefix) and (member.isfile() or member.isdir()):
                    member.name = member.name[len(prefix) :]
                    if member.name:
                        members.append(member)
            archive.extractall(src, members=members, filter="data")
    except (tarfile.TarError, EOFError, zlib.error) as exc:  # a download cut short: fetched again next time
        sdist.unlink(missing_ok=True)
        why = (str(exc).splitlines() or [type(exc).__name__])[0].rstrip(":")
        raise EngineBuildError(f"{sdist.name} is damaged ({why}); it was removed, so run the build again") from None
    if not (src / "CMakeLists.txt").is_file():
        raise EngineBuildError(f"{sdist.name} holds no vendor/llama.cpp tree")
    return src


def _run(argv: list[str], log: Path, what: str, env: dict[str, str] | None = None) -> None:
    with open(log, "a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    if proc.returncode != 0:
        raise EngineBuildError(f"the llama.cpp {what} failed (exit {proc.returncode}); see {log}")


def build(cache_dir: Path, progress: Progress = print, force: bool = False, jobs: int | None = None) -> Path:
    """Build this machine's variant once; a second call returns at once."""
    variant = choose_variant(cpu_flags())
    final = build_dir(cache_dir, variant)
    if (final / MARKER).is_file() and not force:
        progress(f"llama.cpp {SDIST_VERSION} ({variant.name}): already built at {final}")
        return final
    for tool in ("cmake", "ninja", "c++"):
        if shutil.which(tool) is None:
            raise EngineBuildError(
                f"building llama.cpp needs `{tool}` on PATH (Debian: apt-get install cmake ninja-build g++)"
            )
    sdist = _fetch_sdist(cache_dir, progress)
    with atomic.building(final, progress) as partial:
        if (final / MARKER).is_file() and not force:
            progress(f"llama.cpp {SDIST_VERSION} ({variant.name}): built meanwhile by another process at {final}")
            return final
        log = final.parent / f"build-{variant.name}.log"
        log.write_text("")
        start = time.perf_counter()
        src = _extract_tree(sdist, partial)
        work = partial / "build"
        progress(
            f"building llama.cpp {SDIST_VERSION} for this CPU ({variant.name}); a few minutes on 2 cores, log: {log}"
        )
        _run(["cmake", "-S", str(src), "-B", str(work), "-G", "Ninja", *BASE_FLAGS, *variant.flags], log, "configure")
        _run(
            ["cmake", "--build", str(work), "-j", str(jobs or os.cpu_count() or 2), "--target", *TARGETS],
            log,
            "compile",
        )
        (partial / "bin").mkdir()
        for tool in TARGETS:
            shutil.copy2(work / "bin" / tool, partial / "bin" / tool)
        shutil.rmtree(work)
        meta = {
            "version": SDIST_VERSION,
            "variant": variant.name,
            "flags": list(variant.flags),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "build_s": round(time.perf_counter() - start, 1),
        }
        (partial / MARKER).write_text(json.dumps(meta, indent=2))
        atomic.replace_dir(partial, final)
    progress(f"llama.cpp built at {final} ({time.perf_counter() - start:.0f} s)")
    return final
