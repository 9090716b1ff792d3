// The bounds of operator specs and candidate manifests (docs/limits.md): what a file may ask for
// before it is rejected, so that hostile or mistaken input costs bounded time and memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace forgek {

// Launches one candidate makes (shipped kernels use at most 12).
inline constexpr size_t kMaxLaunchesPerCandidate = 64;
// Params one candidate declares.
inline constexpr size_t kMaxParamsPerCandidate = 64;
// `let` helpers one candidate declares (shipped kernels use at most 15); more are refused before
// any is read, so a manifest of 150 000 lets costs a count, not minutes of checks.
inline constexpr size_t kMaxLetsPerCandidate = 256;
// Bytes of one candidate's source, manifest included (the largest shipped kernel is 55 KB); a
// larger file is refused from its size before it is read, a larger reply before it is parsed.
inline constexpr size_t kMaxCandidateSourceBytes = size_t{1} << 20;
// Values in one param's domain.
inline constexpr size_t kMaxParamDomainValues = 1024;
// Instances a family describes: the product of its domain sizes (shipped families: at most 2304).
inline constexpr uint64_t kMaxFamilyInstances = uint64_t{1} << 32;
// Characters in one expression (a grid size, a constraint, a formula).
inline constexpr size_t kMaxExpressionChars = 4096;
// Dynamic shared memory one block may opt in to: 227 KiB on sm90 (Hopper) and sm100 (Blackwell)
// alike (knowledge/hardware: smem_per_block_bytes).
inline constexpr int64_t kMaxDynamicSmemBytes = 232448;
// Bytes of one workspace a candidate asks for: 1 TiB, above the memory of any GPU forgek targets
// (H200: 141 GB, B200: 192 GB) and far below where byte counts and TMA extents could overflow.
inline constexpr int64_t kMaxWorkspaceBytes = int64_t{1} << 40;
// Characters of a diagnostic's message that are shown; the rest is cut with a note.
inline constexpr size_t kMaxDiagnosticChars = 2000;
// Diagnostics shown of one list; the rest is counted ("... and M more"): a file with 100 000
// copies of one mistake gets a short answer.
inline constexpr size_t kMaxDiagnosticsShown = 20;

}  // namespace forgek
