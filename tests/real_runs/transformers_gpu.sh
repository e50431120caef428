#!/usr/bin/env bash
# The transformers real-target investigation as run on the H200 (docs/real-runs.md), from the
# repository root. Needs python3 with torch, transformers 5.17 and debug-agent's dependencies;
# on the device machine those come as wheels on PYTHONPATH (docs/real-runs.md says how).
set -euo pipefail
repo=$(pwd)
out=${OUT:-/tmp/real-run}
mkdir -p "$out"
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$repo" PYTHONUNBUFFERED=1
python3 - <<'PY' | tee "$out/machine.txt"
import platform, subprocess, torch, transformers
print("python", platform.python_version(), "torch", torch.__version__,
      "transformers", transformers.__version__)
print("gpu", torch.cuda.get_device_name() if torch.cuda.is_available() else "none")
print(subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip())
PY
lab=$(mktemp -d)/transformers-lab
python3 -m agent lab create transformers "$lab"
cd "$lab"
start=$(date +%s)
python3 -m agent investigate --symptom "${SYMPTOM:-per token 10ms}" --json \
  ${MAX_LAUNCHES:+--max-launches "$MAX_LAUNCHES"} \
  > "$out/result.json" 2> "$out/investigate.log" || true
echo "wall $(( $(date +%s) - start )) s" | tee -a "$out/machine.txt"
session=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['session_dir'])" \
  "$out/result.json")
python3 "$repo/tests/real_runs/summary.py" "$session" > "$out/summary.json"
cp "$session/report.md" "$session/transcript.jsonl" "$out/"
cat "$out/summary.json"
