#!/usr/bin/env bash
# Exits 0 when this CPU multiplies bf16 natively (x86 avx512_bf16 or amx_bf16 flags), 1 otherwise.
# Without them oneDNN emulates bf16 products: 0.9 GFLOP/s against 170-180 GFLOP/s in fp32 on an
# AVX2-only EPYC, about 200x slower. ffnshape train makes the same check for its warning.
grep -qwE "avx512_bf16|amx_bf16" /proc/cpuinfo 2>/dev/null
