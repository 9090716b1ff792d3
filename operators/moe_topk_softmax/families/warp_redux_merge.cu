/* forgek
{
  "name": "moe_topk_softmax_warp_redux_merge",
  "mechanisms": ["vector_16B", "register_row_cache", "memory_level_parallelism", "persistent_grid",
                 "streaming_store"],
  "controls": {"block_size": ["WARPS"], "memory_level_parallelism": ["TOKENS_PER_WARP"],
               "persistent_grid": ["CTAS_PER_SM"]},
  "params": {"WARPS": [4, 8, 2, 16], "TOKENS_PER_WARP": [4, 2, 1], "CTAS_PER_SM": [0, 8, 16]},
  "let": {"groups": "ceil_div(T, WARPS*TOKENS_PER_WARP)",
          "ctas": "(CTAS_PER_SM == 0)*groups + (CTAS_PER_SM > 0)*min(groups, num_sms*CTAS_PER_SM)"},
  "constraints": ["E == 128", "32 % K == 0", "K*TOKENS_PER_WARP <= 32", "CTAS_PER_SM*WARPS <= 64"],
  "launches": [
    {"kernel": "moe_topk_softmax_warp_redux_merge", "grid": ["ctas"], "block": ["32*WARPS"],
     "args": ["logits", "weights", "ids", "T", "E", "K"]}
  ]
}
*/
// MoE router for E = 128 experts, one warp per token, with the K-round selection done by two
// single-instruction warp reductions per round (redux.sync) instead of a 10-shuffle butterfly.
//
// The reference's rounds cost 5 xor steps of 2 shuffles each (value and id): 80 shuffles per token,
// and shuffles are what bounds it (the whole problem reads only 8 MiB). Here:
//   grid        -> `ctas` CTAs of WARPS warps; CTA b takes token groups b, b + gridDim.x, ...
//                  (CTAS_PER_SM = 0: one group per CTA; > 0: a persistent grid of num_sms*CTAS_PER_SM)
//   group g     -> tokens g*WARPS*TOKENS_PER_WARP ...; warp w takes TOKENS_PER_WARP consecutive ones
//   lane l      -> experts 4l .. 4l+3 of each token: one 16-byte load per token, all issued first
// Each lane sorts its 4 logits once (a 5-comparator network on (order key, id), value descending,
// id ascending), so its best remaining expert is always the head of its list. Round k of token j:
//   max  = redux.max of the lanes' head keys          (order-preserving u32 keys: exact)
//   id   = redux.min of the head ids equal to max     (ties between lanes go to the lower expert)
//   the lane owning `id` pops its head; lane j*K + k keeps (max, id).
// The TOKENS_PER_WARP tokens of a warp are interleaved round by round (independent chains for the
// scheduler), and their K picks land in lanes j*K + k, so one coalesced 4*K*TOKENS_PER_WARP-byte
// store per output writes them all. Weights: exp(x_k - x_0) over each group of K lanes, summed by
// a width-K butterfly and divided; the full-row softmax denominator cancels.
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr unsigned kFull = 0xffffffffu;
typedef unsigned long long u64;
// Register cap for 1024 resident threads per SM (64 registers); without it ptxas squeezes
// 512-thread CTAs to 64 registers anyway, spilling the 4-token lists.
constexpr int kMinBlocks = WARPS >= 32 ? 1 : 32 / WARPS;

// Order-preserving key: a < b as floats (no NaN) iff key(a) < key(b) as unsigned integers, and
// a == b iff the keys are equal: -0 takes +0's key, since the golden's float compare ties them
// (its tie rule, the lower expert first, must see them as equal).
__device__ __forceinline__ unsigned order_key(float x) {
  const unsigned b = __float_as_uint(x) == 0x80000000u ? 0u : __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
// The float whose order key is k (the inverse of order_key).
__device__ __forceinline__ float key_value(unsigned k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

// An expert as one 64-bit word for the sort: order key in the high half, 127 - id in the low half,
// so that a larger word comes first in (value descending, id ascending) order.
__device__ __forceinline__ u64 pack(float x, int id) {
  return (static_cast<u64>(order_key(x)) << 32) | static_cast<unsigned>(127 - id);
}

// Compare-exchange: a gets the word that comes first.
__device__ __forceinline__ void order_pair(u64& a, u64& b) {
  const u64 hi = a > b ? a : b, lo = a > b ? b : a;
  a = hi, b = lo;
}

// A lane's sorted experts of one token: keys[0] is its best remaining; ids holds slot i's expert id
// in byte i. An empty slot has key 0, after every real expert (every real key >= key(-inf) = 0x007fffff).
struct LaneList {
  unsigned keys[4];
  unsigned ids;
};

// Sorts the lane's 4 logits (experts 4*lane + c): network (0,1) (2,3) (0,2) (1,3) (1,2).
__device__ __forceinline__ LaneList sorted_list(const float4& f, int lane) {
  u64 w[4] = {pack(f.x, 4 * lane), pack(f.y, 4 * lane + 1), pack(f.z, 4 * lane + 2), pack(f.w, 4 * lane + 3)};
  order_pair(w[0], w[1]);
  order_pair(w[2], w[3]);
  order_pair(w[0], w[2]);
  order_pair(w[1], w[3]);
  order_pair(w[1], w[2]);
  LaneList l;
  l.ids = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    l.keys[i] = static_cast<unsigned>(w[i] >> 32);
    l.ids |= (127u - static_cast<unsigned>(w[i])) << (8 * i);
  }
  return l;
}

extern "C" __global__ void __launch_bounds__(kWarp * WARPS, kMinBlocks)
moe_topk_softmax_warp_redux_merge(const float* __restrict__ logits,  // [T, 128] row-major
                                  float* __restrict__ weights,       // [T, K]
                                  int* __restrict__ ids,             // [T, K]
                                  int T, int E, int K) {
  const int lane = threadIdx.x % kWarp;
  const int warp = threadIdx.x / kWarp;
  const int groups = (T + WARPS * TOKENS_PER_WARP - 1) / (WARPS * TOKENS_PER_WARP);

  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
    const int first = (g * WARPS + warp) * TOKENS_PER_WARP;  // uniform across the warp
    if (first >= T) continue;                                // only in the last group

    // [TOKENS_PER_WARP] sorted lists of this lane; tokens past T hold empty lists.
    LaneList list[TOKENS_PER_WARP];
    float4 quad[TOKENS_PER_WARP];
#pragma unroll
    for (int j = 0; j < TOKENS_PER_WARP; ++j)  // all loads in flight before any use
      if (first + j < T) quad[j] = fk::ld_global_nc_na_f4(logits + static_cast<size_t>(first + j) * E + 4 * lane);
#pragma unroll
    for (int j = 0; j < TOKENS_PER_WARP; ++j) {
      if (first + j < T) {
        list[j] = sorted_list(quad[j], lane);
      } else {
        list[j].keys[0] = list[j].keys[1] = list[j].keys[2] = list[j].keys[3] = 0;
        list[j].ids = 0;
      }
    }

    unsigned kept_key = 0;  // lane j*K + k: round k's pick of token j
    unsigned kept_id = 0;
    unsigned top_key[TOKENS_PER_WARP];  // round 0's key of each token: its row max
    for (int k = 0; k < K; ++k) {
#pragma unroll
      for (int j = 0; j < TOKENS_PER_WARP; ++j) {
        const unsigned head = list[j].keys[0];
        const unsigned head_id = list[j].ids & 0xffu;
        const unsigned best = __reduce_max_sync(kFull, head);
        const unsigned id = __reduce_min_sync(kFull, head == best ? head_id : 0xffffffffu);
        if (head == best && head_id == id) {  // the owner pops its head
          list[j].keys[0] = list[j].keys[1], list[j].keys[1] = list[j].keys[2], list[j].keys[2] = list[j].keys[3];
          list[j].keys[3] = 0, list[j].ids >>= 8;
        }
        if (lane == j * K + k) kept_key = best, kept_id = id;
        if (k == 0) top_key[j] = best;
      }
    }

    // Lane l < TOKENS_PER_WARP*K holds pick l % K of token l / K; its K-lane group sums the exps.
    const int j_mine = lane / K;
    float top = 0.f;
#pragma unroll
    for (int j = 0; j < TOKENS_PER_WARP; ++j)
      if (j == j_mine) top = key_value(top_key[j]);
    const bool mine = lane < TOKENS_PER_WARP * K && first + j_mine < T;
    const float e = mine ? __expf(key_value(kept_key) - top) : 0.f;
    const float sum = fk::warp_sum(e, K);
    if (mine) {
      const size_t at = static_cast<size_t>(first) * K + lane;  // tokens first.. are consecutive rows
      __stcs(weights + at, e / sum);
      __stcs(ids + at, static_cast<int>(kept_id));
    }
  }
}
