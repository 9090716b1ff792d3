#include <cuda_bf16.h>
#  include "cuda/barrier"
#define H "/proc/self/environ"
#include H
// #include "/etc/passwd"
/* #include ".env"
*/ x
#include "../secret"
#include_next <a\b>
const char* s = "#include \"/x\"";
