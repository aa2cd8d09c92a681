#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "app/cli/cli.h"
#include "core/huge_pages.h"
#include "core/malloc_arena.h"

int main(int argc, char** argv) {
  if (argc > 1 && app::cli::isDrawingCommand(argv[1])) {
    // Handed over before this process sets anything up: that program makes its
    // own start-up (huge pages, malloc arena) from the same arguments.
    const std::string program = app::cli::drawingProgramPath();
    argv[0] = const_cast<char*>(program.c_str());
    execv(program.c_str(), argv);
    std::cerr << "schedlab-cli: '" << argv[1] << "' needs " << program << ", which could not be run: "
              << std::strerror(errno) << "\n";
    return app::cli::kExitFailure;
  }
  core::rerunWithHugePageMalloc(argv);
  core::useOneMallocArena();
  core::keepFreedMemory();
  std::ios::sync_with_stdio(false);
  return app::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
