// python/src/module.cpp: the `folio._core` extension (nanobind).
//
// Thin bindings only: the Python API (python/folio/) shapes arguments the
// way vLLM does and calls these. The GIL is released while a model loads
// and while the engine steps; LLM.generate re-takes it between steps to
// check for Ctrl-C (PyErr_CheckSignals) and report progress. folio::Error
// becomes folio.FolioError (a ValueError) with folio's message.
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "async_engine.h"
#include "base/error.h"
#include "kernels/cpu_features.h"
#include "offline_engine.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace folio::python {
namespace {

// Tokenizer and model facts, for both engine classes.
template <class Engine, class Class>
void bind_session(Class& c) {
  c.def(
       "encode",
       [](const Engine& e, const std::string& text, bool add_special, bool parse_special) {
         return e.session().encode(text, add_special, parse_special);
       },
       "text"_a, "add_special_tokens"_a = true, "parse_special"_a = false)
      .def(
          "decode",
          [](const Engine& e, const std::vector<TokenId>& ids, bool skip) {
            return e.session().decode(ids, skip);
          },
          "ids"_a, "skip_special_tokens"_a = true)
      .def(
          "render_chat",
          [](const Engine& e, const std::string& messages, bool add_generation_prompt,
             const std::string& chat_template) {
            return e.session().render_chat(messages, add_generation_prompt, chat_template);
          },
          "messages_json"_a, "add_generation_prompt"_a = true, "chat_template"_a = "")
      .def("summary", [](const Engine& e) { return e.session().summary(); })
      .def_prop_ro("max_model_len",
                   [](const Engine& e) { return e.session().core().config().max_model_len; })
      .def_prop_ro("vocab_size", [](const Engine& e) { return e.session().context().vocab_size; })
      .def_prop_ro("eos_token_ids", [](const Engine& e) { return e.session().eos(); })
      .def_prop_ro("bos_token_id",
                   [](const Engine& e) { return e.session().tokenizer().vocab().special().bos; })
      .def_prop_ro("has_chat_template",
                   [](const Engine& e) { return e.session().context().chat_template.has_value(); });
}

std::vector<Result> generate(OfflineEngine& e, const std::vector<Request>& requests,
                             const nb::object& progress) {
  std::vector<Result> results;
  bool interrupted = false;
  {
    nb::gil_scoped_release release;
    results = e.generate(requests, [&](std::size_t done, std::size_t total) {
      nb::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) return false;  // KeyboardInterrupt is now set
      if (!progress.is_none()) {
        try {
          progress(done, total);
        } catch (nb::python_error& err) {
          err.restore();
          return false;
        }
      }
      return true;
    });
    interrupted = results.empty() && !requests.empty();
  }
  if (interrupted) throw nb::python_error();  // the error PyErr_CheckSignals / progress set
  return results;
}

}  // namespace
}  // namespace folio::python

NB_MODULE(_core, m) {  // NOLINT(performance-unnecessary-value-param): the macro's signature
  using namespace folio;
  using namespace folio::python;
  m.doc() = "folio's engine (the C++ core of the folio package; use folio.LLM).";
  // Registers the translation of folio::Error; the object is the Python class.
  const nb::exception<Error> folio_error(m, "FolioError", PyExc_ValueError);
  // As the CLI does at start-up: FOLIO_ISA caps the kernel level and
  // FOLIO_DECODE_PANELS picks the decode kernels (kernels/cpu_features.h); a
  // bad value fails the import with folio's message.
  kernels::configure_isa_from_env();

  nb::class_<cli::EngineFlags>(m, "EngineArgs", "Engine flags, named as `folio serve`'s.")
      .def(nb::init<>())
      .def_rw("max_model_len", &cli::EngineFlags::max_model_len)
      .def_rw("max_num_seqs", &cli::EngineFlags::max_num_seqs)
      .def_rw("max_num_batched_tokens", &cli::EngineFlags::max_num_batched_tokens)
      .def_rw("long_prefill_token_threshold", &cli::EngineFlags::long_prefill_token_threshold)
      .def_rw("block_size", &cli::EngineFlags::block_size)
      .def_rw("kv_cache_memory", &cli::EngineFlags::kv_cache_memory)
      .def_rw("kv_cache_dtype", &cli::EngineFlags::kv_cache_dtype)
      .def_rw("enable_prefix_caching", &cli::EngineFlags::enable_prefix_caching)
      .def_rw("scheduling_policy", &cli::EngineFlags::scheduling_policy)
      .def_rw("threads", &cli::EngineFlags::threads)
      .def_rw("activation_bits", &cli::EngineFlags::activation_bits)
      .def_rw("speculative_config", &cli::EngineFlags::speculative_config)
      .def_rw("attention_window", &cli::EngineFlags::attention_window)
      .def_rw("attention_sinks", &cli::EngineFlags::attention_sinks);

  using sampling::SamplingParams;
  nb::class_<SamplingParams>(m, "CoreSamplingParams", "sampling/sampling_params.h")
      .def(nb::init<>())
      .def_rw("temperature", &SamplingParams::temperature)
      .def_rw("top_p", &SamplingParams::top_p)
      .def_rw("top_k", &SamplingParams::top_k)
      .def_rw("min_p", &SamplingParams::min_p)
      .def_rw("presence_penalty", &SamplingParams::presence_penalty)
      .def_rw("frequency_penalty", &SamplingParams::frequency_penalty)
      .def_rw("repetition_penalty", &SamplingParams::repetition_penalty)
      .def_rw("logit_bias", &SamplingParams::logit_bias)
      .def_rw("seed", &SamplingParams::seed)
      .def_rw("max_tokens", &SamplingParams::max_tokens)
      .def_rw("min_tokens", &SamplingParams::min_tokens)
      .def_rw("stop", &SamplingParams::stop)
      .def_rw("stop_token_ids", &SamplingParams::stop_token_ids)
      .def_rw("ignore_eos", &SamplingParams::ignore_eos)
      .def_rw("include_stop_str_in_output", &SamplingParams::include_stop_str_in_output)
      .def_rw("logprobs", &SamplingParams::logprobs);

  nb::class_<Request>(m, "CoreRequest", "One request: prompt token ids and its parameters.")
      .def(nb::init<>())
      .def_rw("prompt", &Request::prompt)
      .def_rw("params", &Request::params)
      .def_rw("n", &Request::n)
      .def_rw("skip_special_tokens", &Request::skip_special_tokens)
      .def_rw("priority", &Request::priority)
      .def_rw("constraint_kind", &Request::constraint_kind)
      .def_rw("constraint_text", &Request::constraint_text)
      .def_rw("constraint_choices", &Request::constraint_choices);

  nb::class_<TokenLogprob>(m, "CoreTokenLogprob")
      .def_ro("id", &TokenLogprob::id)
      .def_ro("logprob", &TokenLogprob::logprob)
      .def_prop_ro("text", [](const TokenLogprob& t) {
        // A token's bytes may be part of a UTF-8 character: decode leniently.
        return nb::steal<nb::str>(
            PyUnicode_DecodeUTF8(t.text.data(), static_cast<Py_ssize_t>(t.text.size()), "replace"));
      });
  nb::class_<Completion>(m, "CoreCompletion")
      .def_ro("index", &Completion::index)
      .def_ro("text", &Completion::text)
      .def_ro("token_ids", &Completion::token_ids)
      .def_ro("finish_reason", &Completion::finish_reason)
      .def_ro("stop_reason", &Completion::stop_reason)
      .def_ro("logprobs", &Completion::logprobs)
      .def_ro("cumulative_logprob", &Completion::cumulative_logprob);
  nb::class_<Result>(m, "CoreResult")
      .def_ro("outputs", &Result::outputs)
      .def_ro("num_prompt_tokens", &Result::num_prompt_tokens)
      .def_ro("num_cached_tokens", &Result::num_cached_tokens)
      .def_ro("finished", &Result::finished)
      .def_ro("error", &Result::error);

  auto offline = nb::class_<OfflineEngine>(m, "OfflineEngine",
                                           "The engine stepped on the calling thread (LLM).");
  offline
      .def(nb::init<const std::string&, const cli::EngineFlags&>(), "model"_a, "args"_a,
           nb::call_guard<nb::gil_scoped_release>())
      .def("generate", &generate, "requests"_a, "progress"_a = nb::none(),
           "Runs the requests to completion; results in request order.");
  bind_session<OfflineEngine>(offline);

  auto async =
      nb::class_<AsyncEngine>(m, "AsyncEngine", "The engine on its own thread (AsyncLLM).");
  async
      .def(nb::init<const std::string&, const cli::EngineFlags&>(), "model"_a, "args"_a,
           nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("wake_fd", &AsyncEngine::wake_fd)
      .def("submit", &AsyncEngine::submit, "id"_a, "request"_a)
      .def("take_ready", &AsyncEngine::take_ready)
      .def("drain", &AsyncEngine::drain, "id"_a)
      .def("abort", &AsyncEngine::abort, "id"_a)
      .def("release", &AsyncEngine::release, "id"_a)
      .def("num_live", &AsyncEngine::num_live);
  bind_session<AsyncEngine>(async);
}
