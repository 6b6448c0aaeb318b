// Fetching dataset files, as T2T's generator_utils.maybe_download does.
#pragma once

#include <string>

namespace t2t {

struct DownloadOptions {
  int retries = 3;                // further attempts after a failed one
  double backoff_seconds = 2.0;   // wait before the first retry, doubled after each
  double progress_seconds = 5.0;  // how often to log progress
};

// Returns dir/filename, downloading `url` there first when it does not
// exist, through dir/filename.part (resumed by an HTTP range request) and a
// rename. Throws t2t::Error naming the URL and where to put the file by hand.
std::string maybe_download(const std::string& dir, const std::string& filename,
                           const std::string& url, const DownloadOptions& options = {});

// "1.5 MiB": a byte count for log lines.
std::string format_bytes(double bytes);

}  // namespace t2t
