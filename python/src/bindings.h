// The parts of the t2t._t2t module, each over one part of libt2t. Only
// state_dict.cc sees PyTorch's Python headers (slow to compile); the rest
// see pybind11 alone.
#pragma once

#include <pybind11/pybind11.h>

namespace t2t::python {

void bind_translator(pybind11::module_& m);
void bind_data(pybind11::module_& m);
void bind_metrics(pybind11::module_& m);
void bind_state_dict(pybind11::module_& m);
void bind_logging(pybind11::module_& m);

}  // namespace t2t::python
