for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; M=/tmp/m; mkdir -p $M
for c in llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it; do [ -f $M/$c.gguf ] || ./edge gen-model --config $c --type Q4_K_M -o $M/$c.gguf >/dev/null || exit 1; done
T=$(seq 100 611 | tr '\n' ' ')
for c in llama-3.2-1b-instruct gemma-2-2b-it; do ./edge eval -m $M/$c.gguf --tokens "$T" --greedy 1 --backend gpu --act f16 --batch 512 --profile 2>&1 >/dev/null | grep -A40 "^prefill" | grep "op \|prefill" | head -20; done
