// tf.train.Example records holding int64 lists, the form in which T2T stores
// encoded data ({"inputs": [ids...], "targets": [ids...]}). The bytes are
// TensorFlow's, so TF reads t2t's TFRecord files and the other way round.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace t2t {

using Int64Features = std::map<std::string, std::vector<int64_t>>;

// Serializes to a tf.train.Example with one int64_list feature per key.
// Features are written in key order, so equal inputs give equal bytes (and
// equal files on a re-run).
std::string serialize_example(const Int64Features& features);

// Parses a serialized tf.train.Example. Throws t2t::Error when the bytes are
// not one, or naming the feature when a feature holds floats or bytes; a
// feature with no list at all comes back empty.
Int64Features parse_example(std::string_view serialized);

}  // namespace t2t
