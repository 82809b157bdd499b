// folio: one binary, many subcommands (info, tokenize, detokenize, ...).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <vector>

#include "cli/commands.h"
#include "kernels/cpu_features.h"

namespace {

int run(int argc, char** argv) {
  folio::kernels::configure_isa_from_env();  // FOLIO_ISA: a bad value is an error here
  CLI::App app{"folio: a fast LLM inference engine and OpenAI-compatible server"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "folio 0.1.0");

  std::vector<folio::cli::Command> commands = {
      folio::cli::register_info(app),     folio::cli::register_run(app),
      folio::cli::register_bench(app),    folio::cli::register_generate(app),
      folio::cli::register_tokenize(app), folio::cli::register_detokenize(app),
      folio::cli::register_dequant(app),  folio::cli::register_serve(app),
      folio::cli::register_chat(app),     folio::cli::register_perplexity(app),
      folio::cli::register_quantize(app), folio::cli::register_imatrix(app),
      folio::cli::register_convert(app),  folio::cli::register_grammar(app),
  };
  // A child of `bench`, so checked before it (a parsed child's parent counts as parsed).
  commands.insert(commands.begin(), folio::cli::register_bench_throughput(app));
  commands.insert(commands.begin(), folio::cli::register_bench_serve(app));
  commands.insert(commands.begin(), folio::cli::register_bench_spec(app));
  commands.insert(commands.begin(), folio::cli::register_bench_grammar(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (const auto& c : commands) {
    if (c.sub->parsed()) return c.action();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing escapes main: setting up the commands can throw too (bad_alloc).
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "folio: error: %s\n", e.what());
    return 1;
  }
}
