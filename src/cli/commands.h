// cli/commands.h: the `folio` subcommands. Each lives in its own cmd_*.cpp and
// registers itself on the top-level CLI11 app; `run` callbacks return the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace folio::cli {

// A registered subcommand: its CLI11 node and the action run when it was parsed.
struct Command {
  CLI::App* sub;
  std::function<int()> action;
};

Command register_info(CLI::App& app);
Command register_run(CLI::App& app);
Command register_bench(CLI::App& app);
Command register_bench_throughput(CLI::App& app);  // `bench throughput`; after register_bench
Command register_bench_serve(CLI::App& app);       // `bench serve`; after register_bench
Command register_bench_spec(CLI::App& app);        // `bench spec`; after register_bench
Command register_bench_grammar(CLI::App& app);     // `bench grammar`; after register_bench
Command register_generate(CLI::App& app);
Command register_tokenize(CLI::App& app);
Command register_detokenize(CLI::App& app);
Command register_dequant(CLI::App& app);
Command register_serve(CLI::App& app);
Command register_chat(CLI::App& app);
Command register_perplexity(CLI::App& app);
Command register_quantize(CLI::App& app);
Command register_imatrix(CLI::App& app);
Command register_convert(CLI::App& app);
Command register_grammar(CLI::App& app);

}  // namespace folio::cli
