"""Launch the SGLang server: python -m sglang.launch_server --model-path ... [--port N]."""

import signal
import sys

from sglang.srt.utils import configure_logger


def _exit_on_sigterm(signum, frame):
    raise SystemExit(0)


if __name__ == "__main__":
    configure_logger()
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    import labgpu

    from sglang.srt.entrypoints.engine import SchedulerError, launch_server
    from sglang.srt.server_args import prepare_server_args

    try:
        launch_server(prepare_server_args(sys.argv[1:]))
    except (labgpu.LabConfigError, SchedulerError, ValueError, OSError) as e:
        print(f"ERROR: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(0)
