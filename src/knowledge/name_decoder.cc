// Decoding library kernel names (cuBLAS nvjet and sm90_xmma, CUTLASS) into tile, stages, cluster, schedule.
//
// The names are underscore-separated fields. What each field means was read off names whose launch
// shape is known (docs/profiling.md): `nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT` launched with
// block 384 (3 warpgroups), 188,636 B of dynamic smem and cluster 2x1x1:
//   320x128  CTA tile M x N          64x3  k-step 64, 3 smem stages ((320+128)*64*2 B = 56 KiB a
//   1x2      cluster in tile space                stage; 3 stages = 168 KiB of the 184 KiB used)
//   h        16-bit inputs           bz    beta == 0 (C is not read)     coopB  cooperative schedule
//   tst      load/store variant; 't' marks a TMA path   NNT  operand/output transpose flags
// Cluster orientation: the name gives the cluster as (M x N) tiles, 1x2 = two CTAs along N; the
// launch gives it in grid coordinates, 2x1x1 = two CTAs along grid x. They agree in size (2 CTAs);
// the axis differs because the persistent tile scheduler maps grid x onto the N tiles. So
// cluster_m/cluster_n below are always in tile space, and the launch observation keeps the grid form.
#include <cctype>
#include <regex>
#include <sstream>

#include "forgek/knowledge/knowledge.h"

namespace forgek {

namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep)) out.push_back(part);
  return out;
}

bool IsDType(const std::string& t) {
  static const std::regex re("^(h|s|d|b|bf16|f16|f32|f64|tf32|e4m3|e5m2|s8|u8|i8|fp8|f8)+$");
  static const std::regex combo("^(bf16|f16|f32|f64|tf32|e4m3|e5m2|s8|i8|s32)(bf16|f16|f32|f64|tf32|e4m3|e5m2|s8|i8|s32)$");
  return std::regex_match(t, re) || std::regex_match(t, combo);
}

void Add(KernelNameFields* f, const std::string& field, const std::string& meaning) {
  f->fields.push_back({field, meaning});
}

}  // namespace

bool DecodeKernelName(const std::string& raw, KernelNameFields* out) {
  KernelNameFields f;
  std::string name = raw;
  // Demangled templates or argument lists: keep the identifier.
  if (auto p = name.find_first_of("(<"); p != std::string::npos) name = name.substr(0, p);
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  if (name.rfind("nvjet", 0) == 0)
    f.library = "nvjet";
  else if (name.find("xmma") != std::string::npos)
    f.library = "xmma";
  else if (name.rfind("cutlass", 0) == 0)
    f.library = "cutlass";
  else {
    *out = f;
    return false;
  }

  static const std::regex arch_re("^sm(\\d{2,3})[a-z]?$");
  static const std::regex three_re("^(\\d+)x(\\d+)x(\\d+)$");
  static const std::regex two_re("^(\\d+)x(\\d+)$");
  static const std::regex layout_re("^[NTnt]{2,3}$");
  static const std::regex align_re("^align(\\d+)$");
  static const std::regex prefixed_re("^(tilesize|cgasize|warpgroupsize)(\\d+)x(\\d+)x(\\d+)$");
  std::smatch m;
  std::vector<std::string> tokens = Split(name, '_');
  bool tile_seen = false, kstage_seen = false, prev_was_tile = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    bool this_is_tile = false;
    if (t.empty()) continue;
    if (f.arch.empty() && std::regex_match(t, m, arch_re)) {
      f.arch = "sm" + m[1].str();
      Add(&f, t, "target architecture " + f.arch);
    } else if (std::regex_match(t, m, prefixed_re)) {
      int a = std::stoi(m[2]), b = std::stoi(m[3]), c = std::stoi(m[4]);
      if (m[1] == "tilesize") {
        f.tile_m = a, f.tile_n = b, f.tile_k = c, tile_seen = true;
        Add(&f, t, "CTA tile M x N x K = " + m[2].str() + "x" + m[3].str() + "x" + m[4].str());
      } else if (m[1] == "cgasize") {
        f.cluster_m = a, f.cluster_n = b, f.cluster_k = c;
        Add(&f, t, "cluster (CGA) of " + std::to_string(a * b * c) + " CTAs");
      } else {
        Add(&f, t, "warpgroups per MMA " + m[2].str() + "x" + m[3].str() + "x" + m[4].str());
      }
    } else if (std::regex_match(t, m, three_re)) {
      if (!tile_seen) {
        f.tile_m = std::stoi(m[1]), f.tile_n = std::stoi(m[2]), f.tile_k = std::stoi(m[3]);
        tile_seen = true;
        this_is_tile = true;
        Add(&f, t, "CTA tile M x N x K");
      } else {
        f.cluster_m = std::stoi(m[1]), f.cluster_n = std::stoi(m[2]), f.cluster_k = std::stoi(m[3]);
        Add(&f, t, "cluster shape M x N x K (in CTAs)");
        // CUTLASS 3.x: the field after the cluster is the stage count, 0 meaning "as many as fit".
        if (f.library == "cutlass" && i + 1 < tokens.size() && std::all_of(tokens[i + 1].begin(), tokens[i + 1].end(), ::isdigit) &&
            !tokens[i + 1].empty()) {
          f.stages = std::stoi(tokens[i + 1]);
          Add(&f, tokens[i + 1], f.stages == 0 ? "stages: automatic (as many as shared memory allows)"
                                               : "smem pipeline stages");
          ++i;
        }
      }
    } else if (std::regex_match(t, m, two_re)) {
      int a = std::stoi(m[1]), b = std::stoi(m[2]);
      if (!tile_seen) {
        f.tile_m = a, f.tile_n = b, tile_seen = true, this_is_tile = true;
        Add(&f, t, "CTA tile M x N");
      } else if (prev_was_tile && !kstage_seen) {
        f.tile_k = a, f.stages = b, kstage_seen = true;
        Add(&f, t, "k-step " + m[1].str() + " per stage, " + m[2].str() + " smem pipeline stages");
      } else {
        f.cluster_m = a, f.cluster_n = b, f.cluster_k = 1;
        Add(&f, t, "cluster M x N in tiles (" + std::to_string(a * b) + " CTAs)");
      }
    } else if (t.rfind("coop", 0) == 0 || t == "cooperative") {
      f.schedule = "cooperative", f.warp_specialized = true;
      Add(&f, t, "cooperative warp-specialised schedule (consumer warpgroups share one tile)");
    } else if (t == "pingpong") {
      f.schedule = "pingpong", f.warp_specialized = true;
      Add(&f, t, "ping-pong warp-specialised schedule (consumer warpgroups alternate tiles)");
    } else if (t == "warpspecialized" || t == "ws") {
      f.warp_specialized = true;
      if (f.schedule.empty()) f.schedule = "warpspecialized";
      Add(&f, t, "warp-specialised (producer and consumer warpgroups)");
    } else if (t == "tma" || (t == "epi" && i + 1 < tokens.size() && tokens[i + 1] == "tma")) {
      f.tma = true;
      if (t == "epi") {
        Add(&f, "epi_tma", "epilogue stores through TMA");
        ++i;
      } else {
        Add(&f, t, "TMA loads");
      }
    } else if (f.library == "nvjet" && std::regex_match(t, std::regex("^[ts]{3}$"))) {
      f.tma = t.find('t') != std::string::npos;
      Add(&f, t, "load/store variant code ('t' marks a TMA path)");
    } else if (t == "bz") {
      Add(&f, t, "beta is zero: C is not read");
    } else if (t == "splitk" || t == "streamk" || t == "sk") {
      Add(&f, t, t == "streamk" ? "stream-K decomposition" : "split-K decomposition");
    } else if (std::regex_match(t, m, align_re)) {
      Add(&f, t, "operands aligned to " + m[1].str() + " elements");
    } else if (std::regex_match(t, layout_re)) {
      f.layout = t;
      Add(&f, t, "operand layouts (N: not transposed, T: transposed)");
    } else if (IsDType(t) && t.size() <= 16) {
      f.dtype += (f.dtype.empty() ? "" : "_") + t;
      Add(&f, t, t == "h" ? "16-bit floating-point inputs" : "data types");
    }
    prev_was_tile = this_is_tile;
  }
  f.decoded = tile_seen;
  *out = f;
  return f.decoded;
}

}  // namespace forgek
