"""The repository under study: its candidates (hunks, env and arg differences), git names, where it
lives, scratch worktrees.
"""
