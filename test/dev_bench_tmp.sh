for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; M=/tmp/m; mkdir -p $M
for c in llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it; do [ -f $M/$c.gguf ] || ./edge gen-model --config $c --type Q4_K_M -o $M/$c.gguf >/dev/null || exit 1; done
for c in llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it; do ./edge bench -m $M/$c.gguf -p 512 -n 128 -r 3 --act f16 2>&1 | tail -3; done
T=$(seq 100 611 | tr '\n' ' ')
for c in llama-3.2-1b-instruct qwen2.5-1.5b-instruct; do ./edge eval -m $M/$c.gguf --tokens "$T" --greedy 32 --backend gpu --act f16 --profile 2>&1 >/dev/null | grep -A40 "^decode" | grep "op \|decode"; done
./edge eval -m $M/llama-3.2-1b-instruct.gguf --tokens "$T" --greedy 2 --backend gpu --act f16 --profile 2>&1 >/dev/null | grep -A40 "^prefill" | grep "op \|prefill" | head -30
timeout 300 bash test/soak.sh > $OUT/soak.txt 2>&1; tail -15 $OUT/soak.txt
