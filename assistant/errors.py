"""The errors a user can act on, and the one list of them the CLI and the TUI catch.

`UserError` is the base of every error of ours whose message is one sentence fit to show
a user as is (bad input, a missing prerequisite): `LLMError`, `ModelError`, `ServerError`,
`ProblemError` and `StoreError` subclass it where they are defined. Two types cannot:
`sandbox.api.SandboxError` (the sandbox imports nothing of ours) and the settings loader's
`ConfigError`; `user_error_types` adds them by plain imports of light modules.

This module holds types only; printing them and choosing exit codes is the CLI's job.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input or a missing prerequisite; the message is the one sentence shown."""


def user_error_types() -> tuple[type[BaseException], ...]:
    """Every exception type whose message is shown to a user as is (exit code 1)."""
    from assistant.settings_loader import ConfigError
    from sandbox.api import SandboxError

    return (UserError, SandboxError, ConfigError)
