#include "t2t/io/download.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

void init_curl() {
  // curl_global_init is not thread-safe; call_once makes it so for t2t.
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw Error("cannot initialize libcurl; is libcurl installed correctly?");
  });
}

struct Transfer {
  std::FILE* file = nullptr;
  int write_errno = 0;
  std::string name;
  uint64_t resumed_from = 0;
  double progress_seconds = 5.0;
  Stopwatch since_start;
  Stopwatch since_log;
};

size_t on_data(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  const size_t written = std::fwrite(data, 1, n, t->file);
  // A short count makes libcurl stop with CURLE_WRITE_ERROR.
  if (written != n) t->write_errno = errno ? errno : EIO;
  return written;
}

int on_progress(void* user, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->since_log.seconds() < t->progress_seconds) return 0;
  t->since_log.restart();
  const double done = double(t->resumed_from) + double(now);
  const double speed = double(now) / std::max(t->since_start.seconds(), 1e-3);
  if (total > 0) {
    const double all = double(t->resumed_from) + double(total);
    spdlog::info("Downloading {}: {} of {} ({:.1f}%), {}/s", t->name, format_bytes(done),
                 format_bytes(all), 100.0 * done / all, format_bytes(speed));
  } else {
    spdlog::info("Downloading {}: {}, {}/s", t->name, format_bytes(done), format_bytes(speed));
  }
  return 0;
}

enum class Outcome { kDone, kRetry, kRestart, kGiveUp };

struct Attempt {
  Outcome outcome = Outcome::kDone;
  std::string error;
};

uint64_t size_or_zero(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(n);
}

// Errors that another attempt cannot fix: a bad URL, a missing file, an HTTP
// client error other than "timeout" or "too many requests".
bool is_permanent(CURLcode code, long http) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_FILE_COULDNT_READ_FILE:
    case CURLE_REMOTE_FILE_NOT_FOUND:
    case CURLE_REMOTE_ACCESS_DENIED:
    case CURLE_LOGIN_DENIED:
      return true;
    case CURLE_HTTP_RETURNED_ERROR:
      return http >= 400 && http < 500 && http != 408 && http != 429;
    default:
      return false;
  }
}

Attempt download_once(const std::string& url, const std::string& part, const std::string& name,
                      const DownloadOptions& options) {
  Transfer t;
  t.name = name;
  t.progress_seconds = options.progress_seconds;
  t.resumed_from = size_or_zero(part);
  t.file = std::fopen(part.c_str(), "ab");
  if (!t.file) throw Error("cannot write '" + part + "': " + std::strerror(errno));

  CURL* curl = curl_easy_init();
  if (!curl) {
    std::fclose(t.file);
    throw Error("cannot start libcurl to download " + url);
  }
  char errbuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 20L);
  // Without this an HTTP error page would be saved as the dataset.
  curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "t2t-datagen (libcurl)");
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 60L);
  // A stalled connection fails (and is retried) instead of hanging forever.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 120L);
  if (t.resumed_from > 0) {
    spdlog::info("Resuming download of {} after {}", name, format_bytes(double(t.resumed_from)));
    curl_easy_setopt(curl, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(t.resumed_from));
  }
  const CURLcode code = curl_easy_perform(curl);
  long http = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
  curl_easy_cleanup(curl);

  bool file_ok = std::fflush(t.file) == 0;
  file_ok = ::fsync(::fileno(t.file)) == 0 && file_ok;
  file_ok = std::fclose(t.file) == 0 && file_ok;
  if (t.write_errno != 0 || !file_ok)
    throw Error("cannot write '" + part + "' while downloading " + url + ": " +
                std::strerror(t.write_errno ? t.write_errno : errno) + " (disk full?)");

  Attempt a;
  if (code == CURLE_OK) return a;
  a.error = errbuf[0] ? errbuf : curl_easy_strerror(code);
  if (http > 0 && a.error.find(std::to_string(http)) == std::string::npos)
    a.error += " (HTTP " + std::to_string(http) + ")";
  if (t.resumed_from > 0 && (code == CURLE_RANGE_ERROR || code == CURLE_BAD_DOWNLOAD_RESUME ||
                             http == 416))
    a.outcome = Outcome::kRestart;  // the server cannot resume, or .part is not a prefix
  else if (is_permanent(code, http))
    a.outcome = Outcome::kGiveUp;
  else
    a.outcome = Outcome::kRetry;
  return a;
}

}  // namespace

std::string format_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string maybe_download(const std::string& dir, const std::string& filename,
                           const std::string& url, const DownloadOptions& options) {
  const std::string path = (fs::path(dir) / filename).string();
  std::error_code ec;
  if (fs::exists(path, ec)) {
    spdlog::info("Not downloading {}: {} already exists", url, path);
    return path;
  }
  const std::string by_hand =
      ". Download it by hand and place it at " + path + ", then run again.";
  if (url.empty()) throw Error("no URL to download " + filename + " from" + by_hand);
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create directory '" + dir + "': " + ec.message());
  init_curl();

  const std::string part = path + ".part";
  spdlog::info("Downloading {} to {}", url, path);
  Stopwatch timer;
  double backoff = options.backoff_seconds;
  std::string last_error;
  const int attempts = 1 + std::max(options.retries, 0);
  int made = 0;
  while (made < attempts) {
    ++made;
    Attempt a = download_once(url, part, filename, options);
    if (a.outcome == Outcome::kDone) {
      fs::rename(part, path, ec);
      if (ec) throw Error("cannot rename '" + part + "' to '" + path + "': " + ec.message());
      spdlog::info("Downloaded {} ({} in {:.1f} s)", path, format_bytes(double(size_or_zero(path))),
                   timer.seconds());
      return path;
    }
    last_error = a.error;
    if (a.outcome == Outcome::kGiveUp) break;
    if (a.outcome == Outcome::kRestart) {
      spdlog::warn("Cannot resume {} ({}); starting over", url, a.error);
      fs::remove(part, ec);
      continue;
    }
    if (made < attempts) {
      spdlog::warn("Download of {} failed ({}); retry {} of {} in {:g} s", url, a.error, made,
                   attempts - 1, backoff);
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
      backoff *= 2;
    }
  }
  if (made > 1) last_error += " (" + std::to_string(made) + " attempts)";
  // Keep a partial .part for the next run to resume; an empty one is litter.
  if (size_or_zero(part) == 0) fs::remove(part, ec);
  throw Error("cannot download " + url + ": " + last_error + by_hand);
}

}  // namespace t2t
