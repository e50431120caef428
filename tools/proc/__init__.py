"""Processes: groups that die with their owner, the server's lifecycle, what each process imported
and which env it had.
"""
