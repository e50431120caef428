"""The random lab's scenario shapes in words: read by `lab create --help` without importing
the labs themselves (start-up stays fast)."""

SHAPE_HELP = {
    "single": "one culprit hunk among decoys",
    "pair": "two hunks, harmless alone, slow together",
    "additive": "two culprit hunks, each about half of the gap",
    "env": "an env var of the bad launch is the culprit",
    "arg-default": "a changed server-arg default is the culprit",
    "control": "no regression: decoys only",
    "helper-pair": "a helper defined in one hunk, applied in another of the same file; both "
    "culprits (the definition reverted alone: NameError at start-up)",
    "helper-use": "a helper defined in utils.py, used by the culprit hunk in model_runner.py; "
    "the definition is a companion (reverted alone: ImportError at start-up)",
    "deleted-module": "the bad state deletes triton_backend.py and its importer falls back to "
    "torch_native; the importer is the culprit, the deletion a companion",
    "small-gap": "one culprit of a 10-25 % gap under 10-15 % launch noise",
    "uneven-additive": "two additive culprits, the smaller 15-25 % of the gap",
    "worker-env": "a hunk sets NCCL_PROTO inside each worker before NCCL reads it",
    "acceptance": "fewer draft tokens accepted per cycle, the cycle time unchanged (symptom: "
    "a throughput drop)",
}
