// The shipped mechanism catalogue is complete and well-formed: every mechanism that a shipped
// kernel under operators/ claims has a catalogue entry, and every entry carries its fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/candidate.h"
#include "forgek/knowledge/knowledge.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

const std::string kKnowledgeDir = SourceDir() + "/knowledge";
const std::string kOperatorsDir = SourceDir() + "/operators";

std::string Describe(const Diagnostics& diags) {
  std::string s;
  for (const auto& d : diags) s += "  " + d.file + " " + d.field + ": " + d.message + "\n";
  return s;
}

// Every .cu file under operators/, in path order, relative to the source tree.
std::vector<fs::path> OperatorKernelFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(kOperatorsDir))
    if (e.is_regular_file() && e.path().extension() == ".cu") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string Relative(const fs::path& p) { return fs::relative(p, SourceDir()).string(); }

class CatalogueCoverageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Diagnostics diags;
    ASSERT_TRUE(LoadKnowledgeBase(kKnowledgeDir, &kb_, &diags)) << Describe(diags);
    ASSERT_FALSE(kb_.mechanisms.empty()) << "no mechanisms loaded from " << kKnowledgeDir;
  }
  KnowledgeBase kb_;
};

TEST_F(CatalogueCoverageTest, EveryClaimedMechanismIsCatalogued) {
  std::vector<fs::path> files = OperatorKernelFiles();
  ASSERT_FALSE(files.empty()) << "no .cu files under " << kOperatorsDir;
  size_t claims = 0;
  for (const auto& file : files) {
    Candidate candidate;
    Diagnostics diags;
    if (!LoadCandidateFile(file.string(), &candidate, &diags)) {
      ADD_FAILURE() << Relative(file) << ": manifest does not parse\n" << Describe(diags);
      continue;
    }
    for (const auto& id : candidate.manifest.mechanisms) {
      ++claims;
      if (!kb_.FindMechanism(id))
        ADD_FAILURE() << Relative(file) << ": mechanism '" << id << "' is not in knowledge/mechanisms/*.json";
    }
  }
  EXPECT_GT(claims, 0u) << "no operator kernel claims any mechanism; is the manifest parser reading them?";
}

TEST_F(CatalogueCoverageTest, EveryEntryHasItsFields) {
  const std::set<std::string> known_archs = {"sm90", "sm100"};
  for (const auto& m : kb_.mechanisms) {
    const std::map<std::string, const std::string*> text = {
        {"name", &m.name}, {"unit", &m.unit},   {"what", &m.what},
        {"helps", &m.helps}, {"hurts", &m.hurts}, {"llm", &m.llm_words}};
    for (const auto& [field, value] : text)
      if (value->empty()) ADD_FAILURE() << "mechanism '" << m.id << "': field '" << field << "' is empty";
    EXPECT_FALSE(m.id.empty()) << "a mechanism named '" << m.name << "' has an empty id";
    EXPECT_FALSE(m.archs.empty()) << "mechanism '" << m.id << "': field 'archs' is empty";
    for (const auto& a : m.archs)
      EXPECT_TRUE(known_archs.count(a)) << "mechanism '" << m.id << "': unknown arch '" << a << "'";
    // A mechanism nothing can reveal is never observed: it needs at least one sign.
    EXPECT_FALSE(m.sass_opcodes.empty() && m.metrics.empty() && m.launch_signs.empty() && m.name_fields.empty())
        << "mechanism '" << m.id << "': none of sass, metrics, launch, name_fields is given";
  }
}

// Read from the files themselves, not through the loader: a duplicate is then reported by id with
// every file that defines it, even though the loader refuses the whole catalogue.
TEST(CatalogueFilesTest, IdsAreUniqueAcrossFiles) {
  std::map<std::string, std::vector<std::string>> files_of;
  for (const auto& e : fs::directory_iterator(kKnowledgeDir + "/mechanisms")) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << Relative(e.path()) << ": not valid JSON";
    ASSERT_TRUE(doc.contains("mechanisms") && doc["mechanisms"].is_array())
        << Relative(e.path()) << ": expected {\"mechanisms\": [...]}";
    for (const auto& m : doc["mechanisms"]) files_of[m.value("id", "")].push_back(Relative(e.path()));
  }
  ASSERT_FALSE(files_of.empty()) << "no mechanisms under " << kKnowledgeDir << "/mechanisms";
  for (const auto& [id, files] : files_of) {
    std::string where;
    for (const auto& f : files) where += " " + f;
    EXPECT_EQ(files.size(), 1u) << "mechanism '" << id << "' is defined " << files.size() << " times:" << where;
  }
}

}  // namespace
}  // namespace forgek
