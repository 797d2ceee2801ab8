for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; M=/tmp/m; mkdir -p $M
for c in llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it; do [ -f $M/$c.gguf ] || ./edge gen-model --config $c --type Q4_K_M -o $M/$c.gguf >/dev/null || exit 1; done
for c in llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it; do ./edge bench -m $M/$c.gguf -p 512 -n 128 -r 3 2>&1 | tail -3; done
T=$(seq 100 611 | tr '\n' ' ')
./edge eval -m $M/llama-3.2-1b-instruct.gguf --tokens "$T" --greedy 16 --backend gpu --profile 2>&1 >/dev/null | grep -A40 "^decode" | grep "op \|decode"
