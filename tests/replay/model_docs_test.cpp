// What a user reads about the models - each model's source line, every
// parameter's doc, the CLI help - cites docs/models.md, and every section it
// cites exists there: a clone has no other document to look things up in.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/cli.h"
#include "replay/policies/registry.h"

namespace fs = std::filesystem;

namespace {

const fs::path kModelsMd = fs::path(SCHEDLAB_TEST_DATA).parent_path().parent_path() / "docs" / "models.md";

// "## 5. Baseline ..." -> "5", "### 5.3 EEVDF ..." -> "5.3".
std::set<std::string> sectionsOf(const fs::path& doc) {
  std::ifstream in(doc);
  std::set<std::string> out;
  const std::regex heading(R"(^#{2,3} (\d+(?:\.\d+)?)\.? )");
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, heading)) out.insert(m[1]);
  return out;
}

// "§5.1-5.2, §5.3" -> 5.1, 5.2, 5.3.
std::vector<std::string> citedSections(const std::string& text) {
  std::vector<std::string> out;
  const std::regex cite(R"(§(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), cite); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
    if ((*it)[2].matched) out.push_back((*it)[2]);
  }
  return out;
}

std::string cliOutput(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  EXPECT_EQ(app::cli::run(argv, out, err), 0) << argv.front() << ": " << err.str();
  return out.str();
}

// Every model with every feature it takes: sources and parameter docs as `replay --help` prints them.
std::vector<std::pair<std::string, std::string>> userTexts() {
  std::vector<std::pair<std::string, std::string>> texts;
  texts.emplace_back("schedlab-cli --help", cliOutput({"--help"}));
  texts.emplace_back("scenario coresched-fairness --help", cliOutput({"scenario", "coresched-fairness", "--help"}));
  for (const auto& p : replay::allPolicies()) {
    std::vector<std::string> models{std::string(p.name)};
    if (p.name == "cfs" || p.name == "eevdf")
      for (const char* f : {"+coresched", "+uclamp", "+coresched+uclamp"}) models.push_back(std::string(p.name) + f);
    for (const auto& m : models) texts.emplace_back("replay --help --model " + m, cliOutput({"replay", "--help", "--model", m}));
  }
  return texts;
}

}  // namespace

TEST(ModelDocs, DocumentHasTheSectionsTheCodeCites) {
  const auto sections = sectionsOf(kModelsMd);
  ASSERT_FALSE(sections.empty()) << kModelsMd << " is missing or has no numbered sections";
  for (const char* s : {"0", "1", "1.10", "2.3", "3.9", "4.7", "5", "5.3", "5.5", "6.1", "6.5", "7"})
    EXPECT_TRUE(sections.count(s)) << "§" << s;
}

TEST(ModelDocs, EveryCitationNamesAnExistingSection) {
  const auto sections = sectionsOf(kModelsMd);
  size_t citations = 0;
  for (const auto& [where, text] : userTexts()) {
    const auto cited = citedSections(text);
    citations += cited.size();
    if (!cited.empty()) {
      EXPECT_NE(text.find("docs/models.md"), std::string::npos) << where << " cites § without the document";
    }
    for (const auto& s : cited) EXPECT_TRUE(sections.count(s)) << where << " cites docs/models.md §" << s << ", which does not exist";
  }
  EXPECT_GT(citations, 20u);  // every model's source line and the parameter docs cite sections
}

TEST(ModelDocs, NothingPointsOutsideTheRepository) {
  for (const auto& [where, text] : userTexts())
    for (const char* outside : {"SPEC", "seed 00", "seed-00", "shared/", "DESIGN.md", "STYLE.md"})
      EXPECT_EQ(text.find(outside), std::string::npos) << where << " mentions " << outside;
}
