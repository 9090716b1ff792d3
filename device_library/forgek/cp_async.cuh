// forgek/cp_async.cuh: Ampere-style asynchronous global -> shared copies (namespace fk). Per thread;
// dst/src aligned to the copy size; src_bytes < size zero-fills the rest (0: all zeros, src unread).
//   fk::cp_async_ca<Bytes>(void* dst, const void* src[, int src_bytes]) — Bytes 4, 8 or 16, cached in L1
//   fk::cp_async_cg_16(void* dst, const void* src[, int src_bytes])    — 16 bytes, bypassing L1
//   fk::cp_async_commit()                 — close this thread's group of copies issued since the last commit
//   fk::cp_async_wait<N>()                — wait until at most N of this thread's committed groups are pending
//   fk::cp_async_wait_all()               — wait for every committed group
//   fk::cp_async_tile_xor<Rows, Chunks, Threads>(void* dst, const void* src, int src_row_bytes) — the block's
//        Threads threads copy Rows rows of Chunks 16-byte chunks (cg), chunk c of row r to dst chunk
//        r*Chunks + (c ^ (r & 7)) (128-byte XOR swizzle; Chunks % 8 == 0); (Rows*Chunks) % Threads == 0
// Copies are visible to other threads only after cp_async_wait and a barrier.
#pragma once
#include <forgek/common.cuh>

namespace fk {

// Bytes (4, 8, 16) from global src to shared dst, allocated in L1; src_bytes < Bytes zero-fills the rest.
template <int Bytes>
FK_DEVICE void cp_async_ca(void* dst, const void* src, int src_bytes)
{
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(cvta_to_shared(dst)), "l"(src), "n"(Bytes),
               "r"(src_bytes)
               : "memory");
}
// Bytes (4, 8, 16) from global src to shared dst, allocated in L1.
template <int Bytes>
FK_DEVICE void cp_async_ca(void* dst, const void* src)
{
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(cvta_to_shared(dst)), "l"(src), "n"(Bytes)
               : "memory");
}
// 16 bytes from global src to shared dst bypassing L1; src_bytes < 16 zero-fills the rest (rows past the end).
FK_DEVICE void cp_async_cg_16(void* dst, const void* src, int src_bytes)
{
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(cvta_to_shared(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
// 16 bytes from global src to shared dst bypassing L1.
FK_DEVICE void cp_async_cg_16(void* dst, const void* src)
{
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(cvta_to_shared(dst)), "l"(src) : "memory");
}
// Closes this thread's current group of cp.async copies (an empty group is fine).
FK_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight (groups complete in order).
template <int Pending>
FK_DEVICE void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory"); }
// Waits for all of this thread's committed groups.
FK_DEVICE void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// The block's Threads threads (threadIdx.x < Threads) copy a [Rows][Chunks x 16 B] tile from global
// (rows src_row_bytes apart) into a dense shared tile, chunk c of row r landing at chunk c ^ (r & 7)
// of its row. Issues the copies only (commit and wait are the caller's).
template <int Rows, int Chunks, int Threads>
FK_DEVICE void cp_async_tile_xor(void* dst, const void* src, int src_row_bytes)
{
  static_assert(Chunks % 8 == 0 && (Rows * Chunks) % Threads == 0, "tile shape");
#pragma unroll
  for (int i = 0; i < Rows * Chunks / Threads; ++i) {
    const int e = threadIdx.x + i * Threads, r = e / Chunks, c = e % Chunks;
    cp_async_cg_16(static_cast<unsigned char*>(dst) + (r * Chunks + swizzle_xor(r, c)) * 16,
                   static_cast<const unsigned char*>(src) + (size_t)r * src_row_bytes + c * 16);
  }
}

}  // namespace fk
