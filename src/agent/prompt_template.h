// Prompt templates from knowledge/prompts/: files with {{name}} placeholders, rendered strictly.
#pragma once

#include <map>
#include <string>

namespace forgek {

using TemplateVars = std::map<std::string, std::string>;

// Replaces every `{{name}}` (name: a letter or '_', then letters, digits, '_'; spaces inside the braces
// allowed) with
// vars[name]. Substituted text is not scanned again. Other `{{` text is left as it is. An unknown
// name fails with "FILE:LINE: unknown placeholder {{name}}", `file` naming the template.
bool RenderTemplate(const std::string& file, const std::string& text, const TemplateVars& vars, std::string* out,
                    std::string* err);

// The prompt files the llm agent uses, read once.
class PromptTemplates {
 public:
  // Reads system.md, propose.md, repair.md, format_repair.md and candidate_format.md from `dir`.
  bool Load(const std::string& dir, std::string* err);
  bool Render(const std::string& name, const TemplateVars& vars, std::string* out, std::string* err) const;
  // A file's text as it is (for fragments such as candidate_format.md).
  const std::string& Text(const std::string& name) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::map<std::string, std::string> texts_;  // file name -> text
};

}  // namespace forgek
