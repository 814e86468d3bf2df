// attnscope-bench: speed goals, measured side by side in one run.
// Every benchmark prints its last line as key=value pairs.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

int benchLoad(const std::vector<std::string>& args);

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "usage: attnscope-bench load FILE [--repeat N] [--no-python]\n"
                 "  load   our load time (read + decompress + parse + build the store) next to\n"
                 "         python3 json.loads and a raw simdjson DOM parse of the same text\n";
    return args.empty() ? 2 : 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "load") return benchLoad(args);
  std::cerr << "attnscope-bench: unknown benchmark '" << cmd << "'\n";
  return 2;
}
