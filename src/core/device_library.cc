// Expanding a candidate's includes of the device library into its source, and back for reading.
#include "forgek/core/device_library.h"

#include <set>

#include "device_library_data.h"
#include "forgek/core/directives.h"

namespace forgek {
namespace {

const char kBegin[] = "// forgek device library: begin <";
const char kEnd[] = "// forgek device library: end <";
const char kAgain[] = "// forgek device library: already expanded above <";

// The physical lines of `text`, each with its '\n' (the last may lack one).
std::vector<std::string> PhysicalLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

const DeviceHeader* Find(const DeviceLibrary& library, const std::string& name) {
  for (const DeviceHeader& h : library)
    if (h.name == name) return &h;
  return nullptr;
}

std::string Names(const DeviceLibrary& library) {
  std::string names;
  for (const DeviceHeader& h : library) names += (names.empty() ? "" : ", ") + h.name;
  return names.empty() ? "none" : names;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// The header named by a marker line ("... <forgek/x.cuh>\n"), or "".
std::string MarkedName(const std::string& line, const std::string& marker) {
  if (!StartsWith(line, marker)) return "";
  size_t close = line.find('>', marker.size());
  return close == std::string::npos ? "" : line.substr(marker.size(), close - marker.size());
}

class Expander {
 public:
  explicit Expander(const DeviceLibrary& library) : library_(library) {}

  // Headers whose blocks `text` already holds (a stored source that gained another include) are
  // not expanded a second time.
  void NoteExpandedBlocks(const std::string& text) {
    for (const std::string& line : PhysicalLines(text)) {
      std::string name = MarkedName(line, kBegin);
      if (!name.empty()) expanded_.insert(name);
    }
  }

  // Appends `text` to `out` with its library includes expanded. `top` marks the candidate itself:
  // only its lines are renumbered after a block (a header's line numbers name nothing a reader has).
  bool Expand(const std::string& text, bool top, const std::string& where, std::string* out, ExpandError* err) {
    std::vector<IncludeDirective> includes;
    for (IncludeDirective& d : IncludeDirectives(text))
      if (d.literal && IsDeviceLibraryName(d.header)) includes.push_back(std::move(d));
    if (includes.empty()) {
      *out += text;
      return true;
    }
    std::vector<std::string> lines = PhysicalLines(text);
    size_t next = 0;  // index of the first line not yet copied
    for (const IncludeDirective& d : includes) {
      for (; next + 1 < static_cast<size_t>(d.line) && next < lines.size(); ++next) *out += lines[next];
      if (!out->empty() && out->back() != '\n') *out += '\n';
      const DeviceHeader* h = Find(library_, d.header);
      if (!h) {
        err->line = top ? d.line : 0;
        err->column = top ? d.column : 0;
        err->message = (top ? "" : where + " ") + "#" + d.directive + " " + d.open + d.header +
                       (d.open == '<' ? ">" : "\"") + ": forgek's device library has no such header (it has: " +
                       Names(library_) + ")";
        return false;
      }
      if (expanded_.insert(h->name).second) {
        *out += kBegin + h->name + ">\n";
        if (!Expand(h->text, false, h->name, out, err)) return false;
        if (!out->empty() && out->back() != '\n') *out += '\n';
        *out += kEnd + h->name + ">\n";
      } else {
        *out += kAgain + h->name + ">\n";
      }
      if (top) *out += "#line " + std::to_string(d.end_line + 1) + "\n";
      next = static_cast<size_t>(d.end_line);
    }
    for (; next < lines.size(); ++next) *out += lines[next];
    return true;
  }

 private:
  const DeviceLibrary& library_;
  std::set<std::string> expanded_;
};

}  // namespace

const DeviceLibrary& ShippedDeviceLibrary() { return EmbeddedDeviceLibrary(); }

bool IsDeviceLibraryName(const std::string& header) { return StartsWith(header, "forgek/"); }

bool ExpandDeviceLibrary(const std::string& source, std::string* expanded, ExpandError* err,
                         const DeviceLibrary& library) {
  std::string out;
  ExpandError local;
  Expander expander(library);
  expander.NoteExpandedBlocks(source);
  if (!expander.Expand(source, true, "", &out, err ? err : &local)) return false;
  *expanded = std::move(out);
  return true;
}

std::string ExpandedSource(const std::string& source, const DeviceLibrary& library) {
  std::string expanded;
  return ExpandDeviceLibrary(source, &expanded, nullptr, library) ? expanded : source;
}

std::string CollapseDeviceLibrary(const std::string& expanded, const DeviceLibrary& library) {
  if (expanded.find(kBegin) == std::string::npos) return expanded;
  std::vector<std::string> lines = PhysicalLines(expanded);
  std::string collapsed;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string name = MarkedName(lines[i], kBegin);
    std::string again = MarkedName(lines[i], kAgain);
    if (name.empty() && again.empty()) {
      collapsed += lines[i];
      continue;
    }
    size_t last = i;  // the block's last line
    if (!name.empty()) {
      while (last < lines.size() && MarkedName(lines[last], kEnd) != name) ++last;
      if (last == lines.size()) return expanded;  // a begin without its end: not a block forgek wrote
    }
    collapsed += "#include <" + (name.empty() ? again : name) + ">\n";
    i = last;
    if (i + 1 < lines.size() && StartsWith(lines[i + 1], "#line ")) ++i;
  }
  std::string again;
  return ExpandDeviceLibrary(collapsed, &again, nullptr, library) && again == expanded ? collapsed : expanded;
}

std::string DeviceLibraryApi(const DeviceLibrary& library) {
  std::string api;
  for (const DeviceHeader& h : library) {
    api += "#include <" + h.name + ">\n";
    for (const std::string& line : PhysicalLines(h.text)) {
      size_t at = line.find_first_not_of(" \t");
      if (at == std::string::npos || line.compare(at, 2, "//") != 0) break;
      api += line;
      if (api.back() != '\n') api += '\n';
    }
    api += '\n';
  }
  return api;
}

}  // namespace forgek
