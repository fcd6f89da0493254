"""Run untrusted programs against tests inside Docker, isolated and fast (docs/architecture.md).

Public API: `Sandbox` (run / run_many / from_config / close; its settings:
`sandbox.sandbox_settings`), the data types `TestCase`, `Limits`, `TestResult`, `RunResult`,
`Project`, `Job`, `SandboxError`, and `build_image`.
Imports nothing else of Cobalt's.
"""

from sandbox.api import KINDS, STATUSES, Job, Limits, Project, RunResult, SandboxError, TestCase, TestResult
from sandbox.core import Sandbox
from sandbox.image import build_image, image_tag

__all__ = [
    "Sandbox",
    "TestCase",
    "Limits",
    "TestResult",
    "RunResult",
    "Project",
    "Job",
    "SandboxError",
    "KINDS",
    "STATUSES",
    "build_image",
    "image_tag",
]
