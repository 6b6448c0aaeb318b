// Building a SubwordTextEncoder vocabulary from token counts, T2T's way
// (build_to_target_size / build_from_token_counts), so that the same counts
// give the same vocabulary, without T2T's cost: the escaped tokens live in
// one UTF-32 buffer, a substring is known by its prefix and last character
// rather than by its text, substrings too rare to matter are dropped as
// soon as that is certain, and the counting is spread over all cores.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <thread>
#include <unordered_map>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/text/subword_internal.h"
#include "t2t/text/subword_text_encoder.h"
#include "t2t/text/utf8.h"

namespace t2t {

using namespace subword_internal;

namespace {

size_t default_threads() {
  return std::min<size_t>(8, std::max(1u, std::thread::hardware_concurrency()));
}

// Runs f(0) .. f(n - 1) on n threads (f(0) on the caller's).
template <class F>
void run_parallel(size_t n, F&& f) {
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back([&f, t] { f(t); });
  f(0);
  for (auto& th : threads) th.join();
}

int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

struct Candidate {
  int64_t count;
  const char32_t* s;
  uint32_t len;
};

}  // namespace

struct SubwordBuilder {
  // Every distinct token, escaped once: escaping depends only on the
  // alphabet, which stays the same for every trial of a binary search.
  std::u32string pool;
  std::vector<uint32_t> offsets, lengths;
  std::vector<int64_t> counts;
  std::u32string alphabet;                       // sorted
  std::vector<std::u32string> reserved;          // as given
  std::vector<std::u32string> escaped_reserved;  // "<pad>_", "<EOS>_"
  std::optional<int> max_subtoken_length;
  int num_iterations;
  size_t n_threads = default_threads();

  SubwordBuilder(const TokenCounts& token_counts, const std::vector<std::string>& reserved_in,
                 std::optional<int> max_len, int iterations)
      : max_subtoken_length(max_len), num_iterations(iterations) {
    // T2T lets callers add reserved tokens only after its own two.
    const auto& defaults = reserved_tokens();
    for (size_t i = 0; i < std::min(defaults.size(), reserved_in.size()); ++i) {
      if (reserved_in[i] != defaults[i]) {
        throw Error("subword reserved tokens must start with \"<pad>\", \"<EOS>\"; got \"" +
                    reserved_in[i] + "\" at position " + std::to_string(i));
      }
    }
    std::vector<std::u32string> tokens;
    tokens.reserve(token_counts.size());
    counts.reserve(token_counts.size());
    for (const auto& [token, count] : token_counts) {
      // Counting relies on a string never counting more than its prefixes.
      if (count < 0) {
        throw Error("subword vocab: token '" + token + "' has a negative count (" +
                    std::to_string(count) + "); counts must be zero or more");
      }
      tokens.push_back(utf8_to_u32(token));
      counts.push_back(count);
    }
    for (const std::string& r : reserved_in) reserved.push_back(utf8_to_u32(r));

    std::vector<std::u32string_view> all(tokens.begin(), tokens.end());
    all.insert(all.end(), reserved.begin(), reserved.end());
    alphabet = collect_alphabet(all);
    const std::vector<uint64_t> alphabet_bits = alphabet_bitmap(alphabet);
    for (const auto& t : tokens) {
      const size_t before = pool.size();
      escape_into(t, alphabet_bits, pool);
      offsets.push_back(static_cast<uint32_t>(before));
      lengths.push_back(static_cast<uint32_t>(pool.size() - before));
      if (pool.size() >= UINT32_MAX) {
        throw Error(
            "corpus too large for building a subword vocabulary (over 4G characters "
            "of distinct tokens); build it from a sample of the corpus");
      }
    }
    for (const auto& r : reserved) {
      std::u32string e;
      escape_into(r, alphabet_bits, e);
      escaped_reserved.push_back(std::move(e));
    }
  }

  // A counted substring pool[pos, pos + len): a node of the trie of all
  // substrings that start at segment boundaries. Its parent is the same
  // substring one character shorter, so a node's ancestors are exactly its
  // prefixes.
  struct Node {
    uint64_t parent;  // the prefix's ref; kNoNode at length 1
    uint32_t pos;
    uint32_t len;
    int64_t count;
  };
  // Nodes live in one list per thread; a node's ref is thread << 48 | index.
  static constexpr uint64_t kNoNode = ~uint64_t{0};
  static constexpr int kRefShift = 48;

  // One per segment start that is still being extended: the substring
  // pool[pos, pos + k) at the current length k, known by its node.
  struct Cursor {
    uint64_t node;   // the length k - 1 prefix; kNoNode at k = 1
    int64_t weight;  // the token's count
    uint32_t pos;
    uint32_t end;  // the token's end in the pool
    char32_t ch;   // pool[pos + k - 1], the character being added
  };

  static uint64_t key_hash(uint64_t node, char32_t ch) { return murmur_mix64(node * kGoldenGamma + ch + 1); }

  // Counts one bucket's (prefix node, next character) pairs: a substring is
  // identified exactly by its prefix's node and its last character, so no
  // string is ever compared.
  class LevelTable {
   public:
    struct Slot {
      uint64_t node;   // the prefix's
      uint64_t child;  // the node made for this substring, or kNoNode
      int64_t count;
      uint32_t pos;
      char32_t ch;  // kEmpty: unused slot
    };
    static constexpr char32_t kEmpty = 0xFFFFFFFF;

    void reset(size_t expected) {
      size_t cap = 16;
      while (cap < expected * 2) cap <<= 1;
      if (slots_.size() == cap) {
        for (Slot& s : slots_) s.ch = kEmpty;
      } else {
        slots_.assign(cap, Slot{0, 0, 0, 0, kEmpty});
      }
      mask_ = cap - 1;
      size_ = 0;
    }

    Slot& find_or_insert(uint64_t node, char32_t ch, uint64_t hash, uint32_t pos) {
      for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
        Slot& s = slots_[i];
        if (s.ch == kEmpty) {
          if ((size_ + 1) * 2 > slots_.size()) {
            grow();
            return find_or_insert(node, ch, hash, pos);
          }
          ++size_;
          s = Slot{node, kNoNode, 0, pos, ch};
          return s;
        }
        if (s.ch == ch && s.node == node) return s;
      }
    }

    std::vector<Slot>& slots() { return slots_; }

   private:
    void grow() {
      std::vector<Slot> old(slots_.size() * 2, Slot{0, 0, 0, 0, kEmpty});
      old.swap(slots_);
      mask_ = slots_.size() - 1;
      for (const Slot& s : old) {
        if (s.ch == kEmpty) continue;
        size_t i = key_hash(s.node, s.ch) & mask_;
        while (slots_[i].ch != kEmpty) i = (i + 1) & mask_;
        slots_[i] = s;
      }
    }

    std::vector<Slot> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
  };

  // Buffers kept from one iteration (and trial) to the next: they run to
  // hundreds of megabytes on large corpora, and fresh ones each time would
  // cost more in page faults than the counting itself.
  struct Scratch {
    std::vector<Cursor> alive, scattered;
    std::vector<std::vector<Cursor>> parts;  // one per thread
  };
  mutable Scratch scratch_;

  // Gathers the per-thread parts into `out`.
  static void concat(std::vector<std::vector<Cursor>>& parts, size_t n, std::vector<Cursor>& out) {
    out.clear();
    size_t total = 0;
    for (size_t t = 0; t < n; ++t) total += parts[t].size();
    out.reserve(total);
    for (size_t t = 0; t < n; ++t) out.insert(out.end(), parts[t].begin(), parts[t].end());
  }

  // scratch_.alive = the segment starts of every token under the current
  // vocabulary.
  void segment_starts(const SubwordTextEncoder& enc) const {
    const size_t n_tokens = offsets.size();
    const size_t T = n_threads;
    auto& parts = scratch_.parts;
    parts.resize(T);
    std::vector<char> failed(T, 0);
    run_parallel(T, [&](size_t t) {
      const size_t begin = n_tokens * t / T, end = n_tokens * (t + 1) / T;
      auto& out = parts[t];
      out.clear();
      for (size_t i = begin; i < end; ++i) {
        const uint32_t off = offsets[i], token_end = off + lengths[i];
        const int64_t weight = counts[i];
        const std::u32string_view e(pool.data() + off, lengths[i]);
        if (!greedy_split(enc.index_->trie, e, [&](size_t s, size_t, int64_t) {
              out.push_back({kNoNode, weight, off + static_cast<uint32_t>(s), token_end, 0});
            })) {
          failed[t] = 1;
        }
      }
    });
    if (std::find(failed.begin(), failed.end(), 1) != failed.end()) {
      throw Error(
          "internal error: a token could not be segmented while building a "
          "subword vocabulary");
    }
    concat(parts, T, scratch_.alive);
  }

  // T2T's subtoken_counts for one iteration: for every token, each
  // substring starting at a boundary of the token's current segmentation,
  // weighted by the token's count. Only what the selection reads is kept,
  // as nodes (one list per thread): single characters, and longer
  // substrings counted min_count or more.
  //
  // The counting goes by length. A substring occurs at a start only where
  // its prefix one character shorter does, so its count is at most that
  // prefix's: a start is extended to length k + 1 only while its length-k
  // substring has reached min_count. The counts of the substrings counted
  // stay exact, and most of the quadratically many substrings of long
  // tokens, which occur once or twice, are dropped at once.
  //
  // At each length the cursors are scattered into buckets by hash, so that
  // each bucket's table stays in cache and each thread owns whole buckets.
  std::vector<std::vector<Node>> count_substrings(const SubwordTextEncoder& enc,
                                                  int64_t min_count) const {
    segment_starts(enc);
    std::vector<Cursor>& alive = scratch_.alive;
    std::vector<Cursor>& scattered = scratch_.scattered;
    auto& next = scratch_.parts;
    const size_t T = n_threads;
    std::vector<std::vector<Node>> nodes(T);
    std::vector<LevelTable> tables(T);

    // T2T counts substrings [s, end) for end < s + max_subtoken_length.
    int64_t max_k = INT64_MAX;
    if (max_subtoken_length) max_k = int64_t{*max_subtoken_length} - 1;
    for (int64_t k = 1; k <= max_k && !alive.empty(); ++k) {
      const size_t n = alive.size();
      // Below this size threads cost more than they save.
      const size_t threads = n < 20000 ? 1 : T;
      int bits = 0;
      while (bits < 20 && (n >> bits) > 4096) ++bits;
      const size_t n_buckets = size_t{1} << bits;
      auto bucket_of = [bits](uint64_t h) {
        return bits == 0 ? size_t{0} : static_cast<size_t>(h >> (64 - bits));
      };

      // Read the next character of every cursor and scatter by bucket.
      std::vector<std::vector<size_t>> where(threads, std::vector<size_t>(n_buckets, 0));
      run_parallel(threads, [&](size_t t) {
        const size_t begin = n * t / threads, end = n * (t + 1) / threads;
        for (size_t i = begin; i < end; ++i) {
          Cursor& c = alive[i];
          c.ch = pool[c.pos + k - 1];
          ++where[t][bucket_of(key_hash(c.node, c.ch))];
        }
      });
      std::vector<size_t> bucket_begin(n_buckets + 1, 0);
      size_t at = 0;
      for (size_t b = 0; b < n_buckets; ++b) {
        bucket_begin[b] = at;
        for (size_t t = 0; t < threads; ++t) {
          const size_t count = where[t][b];
          where[t][b] = at;  // from here on: this thread's next write position
          at += count;
        }
      }
      bucket_begin[n_buckets] = at;
      scattered.resize(n);
      run_parallel(threads, [&](size_t t) {
        const size_t begin = n * t / threads, end = n * (t + 1) / threads;
        auto& w = where[t];
        for (size_t i = begin; i < end; ++i) {
          const Cursor& c = alive[i];
          scattered[w[bucket_of(key_hash(c.node, c.ch))]++] = c;
        }
      });

      // Count each bucket, keep its nodes, and move on the cursors that can
      // grow from a frequent enough substring.
      for (size_t t = 0; t < threads; ++t) next[t].clear();
      run_parallel(threads, [&](size_t t) {
        LevelTable& table = tables[t];
        auto& out = next[t];
        auto& my_nodes = nodes[t];
        const size_t b_begin = n_buckets * t / threads, b_end = n_buckets * (t + 1) / threads;
        for (size_t b = b_begin; b < b_end; ++b) {
          const size_t begin = bucket_begin[b], end = bucket_begin[b + 1];
          if (begin == end) continue;
          table.reset(std::min<size_t>(end - begin, 1 << 14));
          for (size_t i = begin; i < end; ++i) {
            const Cursor& c = scattered[i];
            table.find_or_insert(c.node, c.ch, key_hash(c.node, c.ch), c.pos).count += c.weight;
          }
          for (auto& slot : table.slots()) {
            if (slot.ch == LevelTable::kEmpty) continue;
            // Single characters are all kept: the alphabet needs their counts.
            if (k == 1 || slot.count >= min_count) {
              slot.child = (uint64_t{t} << kRefShift) | my_nodes.size();
              my_nodes.push_back({slot.node, slot.pos, static_cast<uint32_t>(k), slot.count});
            }
          }
          for (size_t i = begin; i < end; ++i) {
            const Cursor& c = scattered[i];
            if (c.pos + k >= c.end) continue;
            // Present already, so this only finds.
            const auto& slot = table.find_or_insert(c.node, c.ch, key_hash(c.node, c.ch), c.pos);
            if (slot.count < min_count || slot.child == kNoNode) continue;
            out.push_back({slot.child, c.weight, c.pos, c.end, 0});
          }
        }
      });
      concat(next, threads, alive);
    }
    return nodes;
  }

  // One refinement step: the new subtoken list, best first.
  std::vector<std::u32string> next_subtokens(const SubwordTextEncoder& enc,
                                             int64_t min_count) const {
    std::vector<std::vector<Node>> nodes = count_substrings(enc, min_count);
    auto node = [&nodes](uint64_t ref) -> Node& {
      return nodes[ref >> kRefShift][ref & ((uint64_t{1} << kRefShift) - 1)];
    };

    // Candidates: longer than one character with a high enough count, by
    // length. Single characters are the alphabet, added below regardless.
    std::vector<std::vector<uint64_t>> by_len;
    for (size_t t = 0; t < nodes.size(); ++t) {
      for (size_t i = 0; i < nodes[t].size(); ++i) {
        const Node& nd = nodes[t][i];
        if (nd.len < 2 || nd.count < min_count) continue;
        if (by_len.size() <= nd.len) by_len.resize(nd.len + 1);
        by_len[nd.len].push_back((uint64_t{t} << kRefShift) | i);
      }
    }
    // Longest first: keeping a subtoken takes its count away from its
    // prefixes (its ancestors), which are all shorter. Within one length
    // the order cannot matter, since no string there is a prefix of
    // another; so each length is split across threads, which subtract
    // atomically.
    std::vector<Candidate> kept;
    for (size_t len = by_len.size(); len-- > 2;) {
      const auto& bucket = by_len[len];
      if (bucket.empty()) continue;
      const size_t threads = bucket.size() < 5000 ? 1 : n_threads;
      std::vector<std::vector<Candidate>> found(threads);
      run_parallel(threads, [&](size_t t) {
        const size_t begin = bucket.size() * t / threads, end = bucket.size() * (t + 1) / threads;
        for (size_t i = begin; i < end; ++i) {
          const Node& nd = node(bucket[i]);
          const int64_t count = nd.count;
          if (count < min_count) continue;
          found[t].push_back({count, pool.data() + nd.pos, nd.len});
          for (uint64_t p = nd.parent; p != kNoNode; p = node(p).parent) {
            __atomic_fetch_sub(&node(p).count, count, __ATOMIC_RELAXED);
          }
        }
      });
      for (const auto& f : found) kept.insert(kept.end(), f.begin(), f.end());
    }
    std::unordered_map<char32_t, int64_t> char_counts;
    for (const auto& list : nodes) {
      for (const Node& nd : list) {
        if (nd.len == 1) char_counts[pool[nd.pos]] = nd.count;
      }
    }
    for (size_t k = 0; k < alphabet.size(); ++k) {
      auto it = char_counts.find(alphabet[k]);
      kept.push_back({it == char_counts.end() ? 0 : it->second, alphabet.data() + k, 1});
    }
    // Descending by (count, string), code point order as Python compares.
    std::sort(kept.begin(), kept.end(), [](const Candidate& a, const Candidate& b) {
      if (a.count != b.count) return a.count > b.count;
      return std::u32string_view(a.s, a.len) > std::u32string_view(b.s, b.len);
    });
    std::vector<std::u32string> subtokens = escaped_reserved;
    subtokens.reserve(subtokens.size() + kept.size());
    for (const Candidate& c : kept) subtokens.emplace_back(c.s, c.len);
    return subtokens;
  }

  SubwordTextEncoder build(int64_t min_count) const {
    SubwordTextEncoder enc;
    enc.set_alphabet(alphabet);
    // Start from single characters; reserved tokens take their ids but are
    // not matched until they come back escaped after the first iteration.
    std::vector<std::u32string> initial = reserved;
    for (char32_t c : alphabet) initial.emplace_back(1, c);
    enc.set_subtokens(initial, reserved.size());
    min_count = std::max<int64_t>(min_count, 1);
    for (int i = 0; i < num_iterations; ++i) {
      enc.set_subtokens(next_subtokens(enc, min_count), 0);
      spdlog::debug("subword vocab: min_count {} iteration {}: {} subtokens", min_count, i,
                    enc.vocab_size());
    }
    return enc;
  }
};

SubwordTextEncoder SubwordTextEncoder::build_from_token_counts(
    const TokenCounts& counts, int64_t min_count, int num_iterations,
    const std::vector<std::string>& reserved, std::optional<int> max_subtoken_length) {
  SubwordBuilder builder(counts, reserved, max_subtoken_length, num_iterations);
  return builder.build(min_count);
}

SubwordTextEncoder SubwordTextEncoder::build_to_target_size(
    int64_t target_size, const TokenCounts& counts, int64_t min_val, int64_t max_val,
    std::optional<int> max_subtoken_length, const std::vector<std::string>& reserved,
    int num_iterations) {
  if (min_val > max_val) {
    throw Error("subword vocab: the lower bound for the minimum count (" + std::to_string(min_val) +
                ") is above the upper bound (" + std::to_string(max_val) + ")");
  }
  if (target_size < 1) {
    throw Error("subword vocab: the target size must be positive, got " +
                std::to_string(target_size));
  }
  SubwordBuilder builder(counts, reserved, max_subtoken_length, num_iterations);
  spdlog::info("building a subword vocabulary of about {} from {} distinct tokens", target_size,
               counts.size());

  std::function<SubwordTextEncoder(int64_t, int64_t)> bisect = [&](int64_t lo, int64_t hi) {
    const int64_t present = floor_div2(lo + hi);
    const Stopwatch timer;
    SubwordTextEncoder enc = builder.build(present);
    spdlog::info("subword vocab: min_count {} gives {} subtokens ({:.1f} s)", present,
                 enc.vocab_size(), timer.seconds());
    // Within 1% of the target is good enough.
    const bool ok = std::llabs(enc.vocab_size() - target_size) * 100 < target_size;
    if (ok || lo >= hi || present < 2) return enc;
    SubwordTextEncoder other =
        enc.vocab_size() > target_size ? bisect(present + 1, hi) : bisect(lo, present - 1);
    if (std::llabs(other.vocab_size() - target_size) < std::llabs(enc.vocab_size() - target_size)) {
      return other;
    }
    return enc;
  };
  return bisect(min_val, max_val);
}

SubwordTextEncoder SubwordTextEncoder::build_from_corpus(const std::vector<std::string>& texts,
                                                         int64_t target_size,
                                                         std::optional<int> max_subtoken_length,
                                                         const std::vector<std::string>& reserved) {
  return build_to_target_size(target_size, count_tokens(texts), 1, 1000, max_subtoken_length,
                              reserved);
}

}  // namespace t2t
