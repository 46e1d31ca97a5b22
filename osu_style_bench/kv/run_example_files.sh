#!/bin/bash
# kv_prefill_decode as two separate commands that meet through a blob file.
set -euo pipefail
prog=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
"$prog" --role decode --blob-dir "$dir" --layers 2 --pages 16 > "$dir/decode.out" 2>&1 &
decoder=$!
"$prog" --role prefill --blob-dir "$dir" --layers 2 --pages 16
wait $decoder
cat "$dir/decode.out"
grep -q "0 wrong bytes" "$dir/decode.out"
