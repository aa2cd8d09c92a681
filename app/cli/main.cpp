#include <iostream>

#include "app/cli/cli.h"
#include "core/huge_pages.h"
#include "core/malloc_arena.h"

int main(int argc, char** argv) {
  core::rerunWithHugePageMalloc(argv);
  core::useOneMallocArena();
  std::ios::sync_with_stdio(false);
  return app::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
