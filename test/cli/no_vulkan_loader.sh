#!/usr/bin/env bash
# A board without a Vulkan loader gets a clear message and exit code 3, not a dynamic-linker error.
set -u
out=$(EDGE_VULKAN_LIB=/nonexistent/libvulkan.so.1 "$EDGE_BIN" info 2>&1); rc=$?
[ $rc = 3 ] || { echo "exit code $rc, want 3"; echo "$out"; exit 1; }
echo "$out" | grep -q "cannot load the Vulkan loader (/nonexistent/libvulkan.so.1)" || { echo "message: $out"; exit 1; }
# the kernel table is still printed (it needs no device)
echo "$out" | grep -q "kernels (" || { echo "no kernel table: $out"; exit 1; }
