/* forgek
{ "name": "fuzz_seed", "params": {"BLOCK": [128, 256]},
  "launches": [ {"kernel": "k", "grid": ["ceil_div(N, BLOCK)"], "block": ["BLOCK"], "args": ["x", "N"]} ] }
*/
#include <cuda_bf16.h>
#include <cuda/barrier>
#define STR(x) #x
extern "C" __global__ void k(float* x, int n) {  // a "//" in a string: "http://x"
  const char* s = "/* not a comment */ #include \"/etc/passwd\"";
  char c = '"';
  int i = blockIdx.x * BLOCK + threadIdx.x; \
  if (i < n) x[i] *= 2.f;
}
