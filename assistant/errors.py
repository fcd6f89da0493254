"""The errors a user can act on, and the one list of them the CLI and the TUI catch.

`UserError` is the base of every error of ours whose message is one sentence fit to show
a user as is (bad input, a missing prerequisite): `ConfigError` (here: an unusable
configuration file or value), `LLMError`, `ModelError`, `ServerError`, `ProblemError` and
`StoreError` subclass it where they are defined. One type cannot: `sandbox.api.SandboxError`
(the sandbox imports nothing of ours); `user_error_types` adds it.

This module holds types only; printing them and choosing exit codes is the CLI's job.
"""

from __future__ import annotations

from sandbox.api import SandboxError


class UserError(Exception):
    """Bad input or a missing prerequisite; the message is the one sentence shown."""


class ConfigError(UserError):
    """A configuration file or override is unusable; the message says which and why."""


def user_error_types() -> tuple[type[BaseException], ...]:
    """Every exception type whose message is shown to a user as is (exit code 1)."""
    return (UserError, SandboxError)
