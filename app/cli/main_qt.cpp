// schedlab-cli-qt: the commands of schedlab-cli that draw with Qt (render,
// report, sweep-report), which schedlab-cli hands over to this program.
#include <iostream>

#include "app/cli/cli.h"
#include "app/cli/drawing_commands.h"
#include "core/huge_pages.h"
#include "core/malloc_arena.h"

int main(int argc, char** argv) {
  core::rerunWithHugePageMalloc(argv);
  core::useOneMallocArena();
  std::ios::sync_with_stdio(false);
  app::cli::runDrawingCommandsHere();
  return app::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
