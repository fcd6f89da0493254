"""Run untrusted programs against tests inside Docker, isolated and fast (DESIGN.md §4).

Public API: `Sandbox` (run / run_many / from_config / close; its settings: `sandbox.sandbox_settings`), the data types `TestCase`,
`Limits`, `TestResult`, `RunResult`, `Project`, `Job`, `SandboxError`, and `build_image`.
Imports nothing else of Cobalt's. The data types are plain; `Sandbox`, `build_image` and
`image_tag` (which need the Docker SDK) are imported on first use, so a caller that only needs
the data types (the problem schema, `cobalt --help`) does not pay for docker-py.
"""

from typing import Any

from sandbox.api import KINDS, STATUSES, Job, Limits, Project, RunResult, SandboxError, TestCase, TestResult


def __getattr__(name: str) -> Any:
    if name == "Sandbox":
        from sandbox.core import Sandbox

        return Sandbox
    if name in ("build_image", "image_tag"):
        from sandbox import image

        return getattr(image, name)
    raise AttributeError(f"module 'sandbox' has no attribute {name!r}")

__all__ = ["Sandbox", "TestCase", "Limits", "TestResult", "RunResult", "Project", "Job", "SandboxError",
           "KINDS", "STATUSES", "build_image", "image_tag"]
