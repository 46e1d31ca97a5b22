#!/usr/bin/env bash
# test_failure.py under torchrun (no PMIx: weft bootstrapped through torchrun's store). Rank 1
# exits; every survivor must print that every operation raised naming rank 1. Judged by the
# output: torchrun exits non-zero by design.
#   torchrun_failure.sh NP PYTHON TEST_FAILURE_PY
set -uo pipefail
np=$1
out=$("$2" -m torch.distributed.run --standalone --nproc_per_node "$np" --redirects 2 --tee 2 "$3" 2>&1)
echo "$out"
got=$(grep -c "every operation raised naming rank 1" <<< "$out")
if [ "$got" -ne $((np - 1)) ]; then
  echo "torchrun_failure.sh: $got of $((np - 1)) survivors reported rank 1's failure"
  exit 1
fi
