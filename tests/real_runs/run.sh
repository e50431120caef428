#!/usr/bin/env bash
# A real-target investigation as run on the H200s (docs/real-runs.md), from the repository root:
#   bash tests/real_runs/run.sh transformers|tp     (OUT=folder for the results)
# Needs python3 with torch (transformers 5.17 for that lab) and debug-agent's dependencies; on
# the device machine those come as wheels on PYTHONPATH (docs/real-runs.md says how).
set -euo pipefail
repo=$(pwd)
out=${OUT:-/tmp/real-run}
mkdir -p "$out"
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$repo" PYTHONUNBUFFERED=1
# NVLink multicast off in every process (the device machines' rule for shared GPUs)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 - <<'PY' | tee "$out/machine.txt"
import platform, subprocess, torch, transformers
print("python", platform.python_version(), "torch", torch.__version__,
      "transformers", transformers.__version__)
print("gpus", torch.cuda.device_count(),
      torch.cuda.get_device_name() if torch.cuda.is_available() else "")
print(subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip())
PY
kind=${1:-transformers}
lab=$(mktemp -d)/$kind-lab
python3 -m agent lab create "$kind" "$lab"
cd "$lab"
default=$(python3 -c "import tomllib; print(tomllib.load(open('debug-agent.toml', 'rb'))
['symptom']['default'])")
start=$(date +%s)
python3 -m agent investigate --symptom "${SYMPTOM:-$default}" --json \
  ${MAX_LAUNCHES:+--max-launches "$MAX_LAUNCHES"} \
  > "$out/result.json" 2> "$out/investigate.log" || true
echo "wall $(( $(date +%s) - start )) s" | tee -a "$out/machine.txt"
session=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['session_dir'])" \
  "$out/result.json")
python3 "$repo/tests/real_runs/summary.py" "$session" > "$out/summary.json"
cp "$session/report.md" "$session/transcript.jsonl" "$out/"
cat "$out/summary.json"
