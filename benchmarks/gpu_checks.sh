#!/usr/bin/env bash
# seqlab's checks that need a CUDA GPU, in one go: the CUDA tests, the CLI on CUDA (under torchrun, a checkpoint
# trained on the GPU sampled on the CPU, --nproc beyond the GPUs refused; data-parallel NCCL where there are two
# GPUs or more), then benchmarks/bench_lm_gpu.py. Run from the repository root with seqlab importable
# (pip install -e . or PYTHONPATH=src); each stage has a time limit, so a hung collective cannot hold the GPU; logs and bench_lm_gpu.json go to $OUT (default ./gpu-checks).
set -uo pipefail
out=${OUT:-gpu-checks}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$out/env.txt"
python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'GPUs', torch.cuda.device_count())" \
  | tee -a "$out/env.txt"
ngpu=$(python3 -c "import torch; print(torch.cuda.device_count())")

echo "== CUDA tests"
timeout 300 python3 -m pytest -p no:cacheprovider -o addopts="-ra" -q tests/test_devices.py tests/test_forecast_device.py \
  -k "not compile" 2>&1 | tee "$out/pytest.log"

echo "== the CLI on CUDA"
ck=$(mktemp -d)
{
  timeout 120 python3 -m torch.distributed.run --standalone --nproc_per_node=1 -m seqlab lm train --out "$ck/one" --device cuda --dtype bfloat16 \
    --max-iters 60 --eval-interval 30
  echo "exit $?"
  python3 -m seqlab lm sample --checkpoint "$ck/one" --device cpu --prompt "ROMEO:" --max-new-tokens 80 --seed 0
  echo "exit $?"
  timeout 60 python3 -m seqlab lm train --out "$ck/refused" --device cuda --nproc $((ngpu + 1)) --max-iters 10
  echo "exit $? (--nproc $((ngpu + 1)) on $ngpu GPU(s))"
  if [ "$ngpu" -ge 2 ]; then
    tiny=(--device cuda --max-iters 100 --eval-interval 50 --batch-size 24)
    python3 -m seqlab lm train --out "$ck/ddp1" "${tiny[@]}" && \
      timeout 300 python3 -m torch.distributed.run --standalone --nproc_per_node=2 -m seqlab lm train --out "$ck/ddp2" "${tiny[@]}"
    echo "exit $? (NCCL, two GPUs)"
    python3 -c "import json,sys; [print(p, [round(r['val_loss'], 6) for r in json.load(open(p))['history']]) for p in sys.argv[1:]]" \
      "$ck/ddp1/trainer_state.json" "$ck/ddp2/trainer_state.json"
  else
    echo "one GPU: no NCCL data-parallel run (NCCL takes one GPU per process)"
  fi
} 2>&1 | tee "$out/cli.log"
rm -rf "$ck"

echo "== bench_lm_gpu.py"
python3 benchmarks/bench_lm_gpu.py --json "$out/bench_lm_gpu.json" 2>&1 | tee "$out/bench.log"
