for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; M=/tmp/m; mkdir -p $M
for c in llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it; do [ -f $M/$c.gguf ] || ./edge gen-model --config $c --type Q4_K_M -o $M/$c.gguf >/dev/null || exit 1; done
for c in llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it; do ./edge bench -m $M/$c.gguf -p 512 -n 128 -r 3 --act f16 2>&1 | tail -3; done
./edge bench -m $M/llama-3.2-1b-instruct.gguf -p 512 -n 128 -r 3 --act f32 2>&1 | tail -3
T=$(seq 100 611 | tr '\n' ' ')
for a in f16 f32; do ./edge eval -m $M/llama-3.2-1b-instruct.gguf --tokens "$T" --greedy 32 --backend gpu --act $a --profile 2>&1 >/dev/null | grep -A40 "^decode" | grep "op \|decode" | grep -v "rope\|kv_store\|glu\|embed\|norm"; done
