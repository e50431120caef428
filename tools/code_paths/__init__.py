"""Which files of a source tree the server runs, read from the source and a log (imports,
registries, branches).
"""
