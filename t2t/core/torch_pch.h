// Precompiled header for libt2t: LibTorch's headers are the bulk of every
// compile, so they are parsed once here. Sources still include what they use.
#pragma once
#include <torch/torch.h>
