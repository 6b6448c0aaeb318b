// Fetching dataset files, as T2T's generator_utils.maybe_download does: a file
// already in place is used as is, so a second datagen run never touches the
// network, and an interrupted download resumes where it stopped.
#pragma once

#include <string>

namespace t2t {

struct DownloadOptions {
  int retries = 3;                // further attempts after a failed one
  double backoff_seconds = 2.0;   // wait before the first retry, doubled after each
  double progress_seconds = 5.0;  // how often to log progress
};

// Returns dir/filename, downloading `url` there first when it does not
// exist. The data goes to dir/filename.part (resumed with an HTTP range
// request when one is left from an earlier attempt) and is renamed into place
// only once complete. Redirects are followed; http(s), ftp and file:// URLs
// work. Throws t2t::Error naming the URL and the error, and saying where to
// put the file when downloading it by hand.
std::string maybe_download(const std::string& dir, const std::string& filename,
                           const std::string& url, const DownloadOptions& options = {});

// "1.5 MiB": a byte count for log lines.
std::string format_bytes(double bytes);

}  // namespace t2t
