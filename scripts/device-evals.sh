#!/usr/bin/env bash
# The family instances waiting on a GPU (issues #24, #25), each timed against its operator's
# reference in one `forgek eval` (scripts/sweep.sh); the baseline of each group is its first line.
#   scripts/device-evals.sh [GROUP...]   groups: see `all` below (default: all)
# FORGEK names the binary (default build/device/forgek); SWEEP_FLAGS adds eval flags (--seeds 1).
set -uo pipefail
here=$(dirname "$0")
all="epilogue gelu gemm grouped conv radix attention fp8"
groups=${*:-$all}
sweep() { echo "### $1 $(basename "$2")"; bash "$here/sweep.sh" "$@"; }

for g in $groups; do
  case $g in
    epilogue)  # C leaving the consumers: direct stores (EPI 0) vs TMA stores from one or two staging tiles
      fam=operators/gemm_bias_gelu_bf16/families/wgmma_ws_bias_gelu.cu
      base=BM=128,BN=256,STAGES=4,CLUSTER_M=1,GROUP_M=8,PERSISTENT=1,SCHEDULE=0
      sweep gemm_bias_gelu_bf16 $fam $base,EPI=0,GELU=0 $base,EPI=1,GELU=0 $base,EPI=2,GELU=0 \
        BM=128,BN=128,STAGES=5,CLUSTER_M=1,GROUP_M=8,GELU=0,PERSISTENT=1,SCHEDULE=1,EPI=1
      fam=operators/gemm_fp8_e4m3/families/wgmma_ws_fp8.cu  # promoted: PROMOTE 0 is not offered at K 8192
      base=BM=128,BN=128,STAGES=6,CLUSTER_M=1,GROUP_M=16,PROMOTE=4
      sweep gemm_fp8_e4m3 $fam $base,EPI=0 $base,EPI=1 $base,EPI=2
      fam=operators/batched_gemm_bf16/families/wgmma_ws_batched.cu
      base=BM=128,BN=256,STAGES=4,CLUSTER_M=1,PERSISTENT=1,SCHEDULE=0
      sweep batched_gemm_bf16 $fam $base,EPI=0 $base,EPI=1 $base,EPI=2 ;;
    gelu)  # the GELU's arithmetic in the epilogue (accurate tanhf, sigmoid form, tanh.approx), and the
           # schedules that hide the epilogue: 2-CTA clusters, 64x256 ping-pong consumers
      fam=operators/gemm_bias_gelu_bf16/families/wgmma_ws_bias_gelu.cu
      base=BM=128,BN=256,STAGES=4,GROUP_M=8,PERSISTENT=1,SCHEDULE=0,EPI=2
      sweep gemm_bias_gelu_bf16 $fam $base,CLUSTER_M=1,GELU=0 $base,CLUSTER_M=1,GELU=1 $base,CLUSTER_M=1,GELU=2 \
        $base,CLUSTER_M=2,GELU=2 BM=64,BN=256,STAGES=4,CLUSTER_M=1,GROUP_M=8,PERSISTENT=1,SCHEDULE=1,EPI=2,GELU=2 \
        BM=64,BN=256,STAGES=4,CLUSTER_M=1,GROUP_M=8,PERSISTENT=1,SCHEDULE=1,EPI=4,GELU=2 ;;
    gemm)  # wgmma_persistent after its rewrite (skinny path by `when`, num_sms grid)
      fam=operators/gemm_bf16/families/wgmma_persistent.cu
      base=STAGES=3,GROUP_M=16,SBN=64,S_STAGES=8,S_BK=64,S_CONS=1,S_HINT=1
      sweep gemm_bf16 $fam $base,EPI=1 $base,EPI=2 ;;
    grouped)  # the warp-specialised wgmma grouped GEMM against the mma.sync family's best tile
      sweep grouped_gemm_bf16 operators/grouped_gemm_bf16/families/mma_sync_tiles.cu BM=128,BN=256,STAGES=4
      fam=operators/grouped_gemm_bf16/families/wgmma_ws_grouped.cu
      base=BM=128,BN=256,STAGES=4,SCHEDULE=0
      sweep grouped_gemm_bf16 $fam $base,CLUSTER_M=1,GROUP_M=16,EPI=0 $base,CLUSTER_M=1,GROUP_M=16,EPI=2 \
        $base,CLUSTER_M=2,GROUP_M=16,EPI=2 $base,CLUSTER_M=1,GROUP_M=1,EPI=2 $base,CLUSTER_M=1,GROUP_M=64,EPI=2 \
        BM=128,BN=128,STAGES=6,CLUSTER_M=1,GROUP_M=16,SCHEDULE=1,EPI=1 ;;
    conv)  # TMA taps (4-D boxes of pixel blocks) and warp-specialised wgmma against the gather ring's best
      sweep conv2d_fprop_bf16 operators/conv2d_fprop_bf16/families/wgmma_gather_ring.cu BM=128,BN=256,STAGES=4
      fam=operators/conv2d_fprop_bf16/families/wgmma_ws_tma_taps.cu
      base=BM=128,BN=256,STAGES=4,GROUP_M=1,SCHEDULE=0
      sweep conv2d_fprop_bf16 $fam $base,BW=8,CLUSTER_M=1,EPI=0 $base,BW=8,CLUSTER_M=1,EPI=2 \
        $base,BW=8,CLUSTER_M=2,EPI=2 $base,BW=16,CLUSTER_M=1,EPI=2 BM=256,BN=128,STAGES=4,BW=8,CLUSTER_M=1,GROUP_M=8,SCHEDULE=0,EPI=2 \
        BM=128,BN=128,STAGES=6,BW=8,CLUSTER_M=1,GROUP_M=8,SCHEDULE=1,EPI=1 ;;
    radix)  # onesweep: the old best (ITEMS 12, values early) against CUB's shape and the new knobs
      fam=operators/radix_sort_pairs_u32/families/onesweep.cu
      p=RADIX_BITS=8,THREADS=384,MIN_CTAS=2
      sweep radix_sort_pairs_u32 $fam \
        $p,ITEMS=12,VALUES_EARLY=1,EARLY_COUNTS=0,MATCH_BALLOT=0,ONE_BUFFER=0 \
        $p,ITEMS=12,VALUES_EARLY=1,EARLY_COUNTS=1,MATCH_BALLOT=0,ONE_BUFFER=0 \
        $p,ITEMS=12,VALUES_EARLY=1,EARLY_COUNTS=1,MATCH_BALLOT=1,ONE_BUFFER=0 \
        $p,ITEMS=12,VALUES_EARLY=1,EARLY_COUNTS=1,MATCH_BALLOT=0,ONE_BUFFER=1 \
        $p,ITEMS=16,VALUES_EARLY=0,EARLY_COUNTS=1,MATCH_BALLOT=0,ONE_BUFFER=1 \
        $p,ITEMS=20,VALUES_EARLY=0,EARLY_COUNTS=1,MATCH_BALLOT=0,ONE_BUFFER=1 \
        $p,ITEMS=23,VALUES_EARLY=0,EARLY_COUNTS=1,MATCH_BALLOT=0,ONE_BUFFER=1 \
        $p,ITEMS=23,VALUES_EARLY=0,EARLY_COUNTS=1,MATCH_BALLOT=1,ONE_BUFFER=1 ;;
    attention)  # FA3 prefill at its measured best (persistent, ex2.approx.ftz, O by TMA stores from two staging panels,
                # the first consumer's diagonal P V at half width: 0.991x cuDNN on H100), work tiles KV head by KV head
                # (KV_MAJOR: L2 keeps the K / V that the blocks at work read), with stmatrix staging, with a cluster
      fam=operators/attention_prefill_bf16/families/fa3_wgmma_ws.cu
      best=BN=128,STAGES=2,OVERLAP=1,PINGPONG=1,EXP2=1,EPI=2
      sweep attention_prefill_bf16 $fam $best,CLUSTER=1,PERSISTENT=1,STSM=0,KV_MAJOR=0 \
        $best,CLUSTER=1,PERSISTENT=1,STSM=0,KV_MAJOR=1 $best,CLUSTER=1,PERSISTENT=1,STSM=1,KV_MAJOR=1 \
        $best,CLUSTER=2,PERSISTENT=0,STSM=0,KV_MAJOR=1 ;;
    fp8)  # promotion at a wider tile: 128x192 (96 + 96 floats a consumer thread) against the promoted 128x128,
          # and a persistent grid whose producer runs into the next tile while the consumers promote and store
      fam=operators/gemm_fp8_e4m3/families/wgmma_ws_fp8.cu
      base=BM=128,CLUSTER_M=1,EPI=1
      sweep gemm_fp8_e4m3 $fam $base,BN=128,STAGES=6,PROMOTE=4,GROUP_M=16,STSM=0,PERSISTENT=0 \
        $base,BN=192,STAGES=5,PROMOTE=2,GROUP_M=16,STSM=0,PERSISTENT=0 $base,BN=192,STAGES=5,PROMOTE=2,GROUP_M=16,STSM=0,PERSISTENT=1 \
        $base,BN=192,STAGES=5,PROMOTE=2,GROUP_M=16,STSM=1,PERSISTENT=1 $base,BN=192,STAGES=5,PROMOTE=2,GROUP_M=8,STSM=1,PERSISTENT=1 \
        $base,BN=192,STAGES=5,PROMOTE=4,GROUP_M=16,STSM=1,PERSISTENT=1 ;;
    *) echo "device-evals: unknown group '$g' ($all)" >&2; exit 2 ;;
  esac
done
