"""Text to SQL over one shop database built offline from a seed (`--env sql:N`)."""

from envs.sql.env import SqlEnv

__all__ = ["SqlEnv"]
