// t2t._t2t: the native half of the Python package. Errors of the library
// (t2t::Error) become t2t.Error, a RuntimeError, with the library's message;
// an OptionError names its options as the keyword arguments spell them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/src/bindings.h"
#include "t2t/core/error.h"
#include "t2t/core/plugins.h"

namespace py = pybind11;

namespace {

// The library's option names that the Python API spells otherwise.
std::string keyword_spelling(const std::string& option) {
  if (option == "decode_from_file") return "source";
  if (option == "score_file") return "path";
  if (option == "log_level") return "level";  // set_log_level(level)
  if (option == "t2t_usr_dir") return "dir";  // load_usr_dir(dir)
  return option;
}

}  // namespace

PYBIND11_MODULE(_t2t, m) {
  m.doc() = "The C++ core of t2t (use the t2t package, not this module).";
  m.attr("__version__") = T2T_VERSION;
  // A handle: the module's attribute keeps the type alive.
  static py::handle error =
      py::register_exception<t2t::Error>(m, "Error", PyExc_RuntimeError).ptr();
  // Tried before the one above (pybind11 tries the newest first).
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const t2t::OptionError& e) {
      PyErr_SetString(error.ptr(), e.render(keyword_spelling).c_str());
    }
  });
  t2t::python::bind_logging(m);
  t2t::python::bind_translator(m);
  t2t::python::bind_data(m);
  t2t::python::bind_metrics(m);
  t2t::python::bind_state_dict(m);
  m.def(
      "load_usr_dir",
      [](const std::string& dir) {
        py::gil_scoped_release release;
        return t2t::load_user_dir(dir);
      },
      py::arg("dir"),
      "Loads every plugin (*.so, *.yaml) in dir, as --t2t_usr_dir does: their problems, models "
      "and hparams sets join the registry. Returns the files loaded.");
}
