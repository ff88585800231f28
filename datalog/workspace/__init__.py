"""Workspaces: a program, its relations and its maintainer's state, durable on disk."""

from datalog.workspace.workspace import Workspace

__all__ = ["Workspace"]
