from sglang.srt.distributed.parallel_state import (  # noqa: F401
    get_tp_group,
    initialize_model_parallel,
    tensor_model_parallel_all_reduce,
)
