// tf.train.Example records of int64 lists, T2T's encoded data
// ({"inputs": [ids...], "targets": [ids...]}), byte-compatible with TF.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace t2t {

using Int64Features = std::map<std::string, std::vector<int64_t>>;

// One int64_list feature per key, in key order (equal inputs, equal bytes).
std::string serialize_example(const Int64Features& features);

// Throws t2t::Error when the bytes are no tf.train.Example, or naming a
// feature of floats or bytes; a feature with no list comes back empty.
Int64Features parse_example(std::string_view serialized);

}  // namespace t2t
