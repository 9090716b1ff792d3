// The {{name}} renderer and the loading of the prompt files.
#include "prompt_template.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace forgek {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Matches `{{ name }}` at `at`; fills name and the length of the whole placeholder.
bool MatchPlaceholder(const std::string& text, size_t at, std::string* name, size_t* length) {
  if (text.compare(at, 2, "{{") != 0) return false;
  size_t i = at + 2;
  while (i < text.size() && text[i] == ' ') ++i;
  size_t begin = i;
  if (i >= text.size() || std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  while (i < text.size() && IsNameChar(text[i])) ++i;
  if (i == begin) return false;
  size_t end = i;
  while (i < text.size() && text[i] == ' ') ++i;
  if (text.compare(i, 2, "}}") != 0) return false;
  *name = text.substr(begin, end - begin);
  *length = i + 2 - at;
  return true;
}

}  // namespace

bool RenderTemplate(const std::string& file, const std::string& text, const TemplateVars& vars, std::string* out,
                    std::string* err) {
  std::string result;
  result.reserve(text.size());
  int line = 1;
  for (size_t i = 0; i < text.size();) {
    std::string name;
    size_t length = 0;
    if (MatchPlaceholder(text, i, &name, &length)) {
      auto it = vars.find(name);
      if (it == vars.end()) {
        *err = file + ":" + std::to_string(line) + ": unknown placeholder {{" + name + "}}";
        return false;
      }
      result += it->second;
      i += length;
      continue;
    }
    if (text[i] == '\n') ++line;
    result += text[i++];
  }
  *out = std::move(result);
  return true;
}

bool PromptTemplates::Load(const std::string& dir, std::string* err) {
  std::map<std::string, std::string> texts;
  for (const char* name : {"system.md", "propose.md", "repair.md", "feedback.md", "format_repair.md", "candidate_format.md"}) {
    std::string path = dir + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      *err = path + ": cannot read the prompt template";
      return false;
    }
    std::ostringstream text;
    text << in.rdbuf();
    texts[name] = text.str();
  }
  dir_ = dir;
  texts_ = std::move(texts);
  return true;
}

bool PromptTemplates::Render(const std::string& name, const TemplateVars& vars, std::string* out,
                             std::string* err) const {
  return RenderTemplate(dir_ + "/" + name, Text(name), vars, out, err);
}

const std::string& PromptTemplates::Text(const std::string& name) const {
  static const std::string kEmpty;
  auto it = texts_.find(name);
  return it == texts_.end() ? kEmpty : it->second;
}

}  // namespace forgek
