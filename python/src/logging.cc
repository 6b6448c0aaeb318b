// The library logs through spdlog; in Python its lines go to the standard
// logging module, logger "t2t", at the matching level, so that an
// application's own handlers and levels apply.
#include <pybind11/pybind11.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "python/src/bindings.h"
#include "t2t/core/logging.h"

namespace py = pybind11;

namespace t2t::python {

namespace {

int python_level(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return 5;
    case spdlog::level::debug: return 10;
    case spdlog::level::info: return 20;
    case spdlog::level::warn: return 30;
    case spdlog::level::err: return 40;
    default: return 50;
  }
}

// No lock of its own (null_mutex): the GIL orders the calls. A lock here
// could deadlock against a thread that holds the GIL and logs.
class PythonSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    try {
      // Never destroyed: the interpreter may be gone when statics are.
      static py::object* logger =
          new py::object(py::module_::import("logging").attr("getLogger")("t2t"));
      logger->attr("log")(python_level(msg.level),
                          std::string(msg.payload.data(), msg.payload.size()));
    } catch (const py::error_already_set&) {
      // A failing handler must not take the C++ caller down.
    }
  }
  void flush_() override {}
};

}  // namespace

void bind_logging(py::module_& m) {
  m.def(
      "_install_logging",
      [] {
        auto logger = std::make_shared<spdlog::logger>("t2t", std::make_shared<PythonSink>());
        logger->set_level(spdlog::level::info);
        spdlog::set_default_logger(logger);
      },
      "Routes the library's log lines to Python's logging (logger 't2t').");
  m.def(
      "set_log_level",
      [](const std::string& level) { t2t::setup_logging(level); },
      py::arg("level"),
      "What the library passes on to logging: trace, debug, info (default), warning, error, "
      "off. Python's own levels filter further.");
}

}  // namespace t2t::python
